// Typed errors: every EvalfleetError carries its code and whether trying again may help, and both
// cross a thread or process boundary as plain data.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, ErrorCode, ErrorInfoSchema, EvalfleetError, ModelCallError, SuiteLoadError, isRetryableCode, toErrorInfo } from "../../shared/errors.ts";

describe("retryable", () => {
  test("derived from the code: infrastructure failures are retryable, the caller's mistakes are not", () => {
    const retryable = Object.values(ErrorCode).filter(isRetryableCode).sort();
    assert.deepEqual(retryable, ["BROKER_UNREACHABLE", "MODEL_CALL_FAILED", "PROVIDER_LIMIT", "STORE_UNAVAILABLE", "STORE_WRITE", "THREAD_CRASHED"]);
    assert.equal(new EvalfleetError(ErrorCode.BrokerUnreachable, "x").retryable, true);
    assert.equal(new EvalfleetError(ErrorCode.Usage, "x").retryable, false);
    assert.equal(new ConfigError(ErrorCode.ConfigMissing, "set OPENAI_API_KEY").retryable, false);
    assert.equal(new SuiteLoadError(ErrorCode.SuiteLoadFailed, "evals.ts", ["boom"]).retryable, false);
    assert.equal(new ModelCallError("503 from the server").retryable, true);
  });

  test("an error that knows better overrides its code's default, and keeps its cause", () => {
    const cause = new Error("401");
    const err = new ModelCallError("unauthorized", { status: 401 }, { retryable: false, cause });
    assert.equal(err.code, ErrorCode.ModelCallFailed);
    assert.equal(err.retryable, false);
    assert.equal(err.cause, cause);
    assert.equal(new EvalfleetError(ErrorCode.Usage, "x", {}, { retryable: true }).retryable, true);
  });
});

describe("ErrorInfo", () => {
  test("an EvalfleetError crosses as plain data with its code, name, retryable flag and details", () => {
    const info = toErrorInfo(new ModelCallError("gave up", { status: 429, attempts: 5 }, { retryable: true }));
    assert.deepEqual(info, { code: "MODEL_CALL_FAILED", name: "ModelCallError", message: "gave up", retryable: true, details: { status: 429, attempts: 5 } });
    assert.deepEqual(structuredClone(info), info);
    assert.equal(ErrorInfoSchema.parse(info).retryable, true);
  });

  test("any other thrown value is INTERNAL, not retryable, named after its class", () => {
    assert.deepEqual(toErrorInfo(new TypeError("bad")), { code: "INTERNAL", name: "TypeError", message: "bad", retryable: false });
    assert.deepEqual(toErrorInfo("text"), { code: "INTERNAL", name: "Error", message: "text", retryable: false });
  });

  test("retryable is optional on input: a sender without it is understood, and its code decides", () => {
    const old = ErrorInfoSchema.parse({ code: "THREAD_CRASHED", name: "EvalfleetError", message: "gone" });
    assert.equal(old.retryable, undefined);
    assert.equal(old.retryable ?? isRetryableCode(old.code), true);
  });
});
