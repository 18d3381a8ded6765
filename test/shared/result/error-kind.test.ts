// shared/result/error-kind.ts: every cause of a failure, its precedence, the final kind of a case, and the
// backoff of --retries.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { classifyCase, errorPartKind, infraRetryDelay, isInfraError, isInfraStatus, mergeErrorKind, ERROR_KINDS, INFRA_RETRY_CAP_MS } from "../../../shared/result/error-kind.ts";
import { ConfigError, ErrorCode, EvalfleetError, ModelCallError } from "../../../shared/errors.ts";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";

describe("isInfraStatus", () => {
  test("408, 429 and every 5xx are the provider's; other statuses are the request's", () => {
    for (const s of [408, 429, 500, 502, 503, 504, 599]) assert.equal(isInfraStatus(s), true, String(s));
    for (const s of [200, 400, 401, 403, 404, 409, 413, 422]) assert.equal(isInfraStatus(s), false, String(s));
  });
});

describe("isInfraError", () => {
  test("a model call that failed with 429/5xx or without an answer is infra; a 4xx is not", () => {
    assert.equal(isInfraError(new ModelCallError("rate limited", { status: 429, attempts: 5 })), true);
    assert.equal(isInfraError(new ModelCallError("bad gateway", { status: 502 })), true);
    assert.equal(isInfraError(new ModelCallError("refused", { status: null })), true);
    assert.equal(isInfraError(new ModelCallError("bad key", { status: 401 })), false);
    assert.equal(isInfraError(new ModelCallError("bad request", { status: 400 })), false);
  });

  test("the SDKs' errors: OpenAI's status, the AI SDK's statusCode and RetryError, connection errors", () => {
    assert.equal(isInfraError(Object.assign(new Error("x"), { status: 503 })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { status: 404 })), false);
    assert.equal(isInfraError(Object.assign(new Error("x"), { statusCode: 429 })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { name: "APIConnectionError" })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { name: "APIConnectionTimeoutError" })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { name: "AI_RetryError", lastError: Object.assign(new Error("y"), { statusCode: 429 }) })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { name: "AI_RetryError", lastError: Object.assign(new Error("y"), { statusCode: 400 }) })), false);
    assert.equal(isInfraError(new TypeError("fetch failed")), true);
    assert.equal(isInfraError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" })), true);
    assert.equal(isInfraError(Object.assign(new Error("x"), { code: "UND_ERR_SOCKET" })), true);
  });

  test("the fleet's cassette bucket out of reach is infra; a bad cassette is not", () => {
    assert.equal(isInfraError(new EvalfleetError(ErrorCode.CassetteStore, "cannot read the cassette x from the EVALFLEET_CASSETTES bucket: timeout")), true);
    assert.equal(isInfraError(new EvalfleetError(ErrorCode.CassetteInvalid, "the cassette x is not JSON")), false);
  });

  test("a cause chain is followed (bounded: a cycle does not hang it)", () => {
    const inner = Object.assign(new Error("reset"), { code: "ECONNRESET" });
    assert.equal(isInfraError(new Error("agent failed", { cause: inner })), true);
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    assert.equal(isInfraError(a), false);
  });

  test("evalfleet's own codes: a thread lost and the limiter giving up are infra; configuration is not", () => {
    assert.equal(isInfraError(new EvalfleetError(ErrorCode.ThreadCrashed, "died")), true);
    assert.equal(isInfraError({ code: "PROVIDER_LIMIT", message: "gave up" }), true);
    assert.equal(isInfraError(new ConfigError(ErrorCode.ConfigMissing, "no key")), false);
    assert.equal(isInfraError(new Error("the agent's own bug")), false);
    assert.equal(isInfraError(new TypeError("x is not a function")), false);
    assert.equal(isInfraError("a string"), false);
    assert.equal(isInfraError(null), false);
    assert.equal(isInfraError(undefined), false);
  });

  test("errorPartKind: infra when the error is, else the caller's fallback", () => {
    assert.equal(errorPartKind(new ModelCallError("x", { status: 429 }), "agent"), "infra");
    assert.equal(errorPartKind(new Error("x"), "agent"), "agent");
    assert.equal(errorPartKind(new Error("x"), "check"), "check");
  });
});

describe("mergeErrorKind", () => {
  test("agent beats check beats infra, in any order", () => {
    assert.equal(mergeErrorKind(null, "infra"), "infra");
    assert.equal(mergeErrorKind(undefined, "check"), "check");
    assert.equal(mergeErrorKind("infra", "check"), "check");
    assert.equal(mergeErrorKind("check", "infra"), "check");
    assert.equal(mergeErrorKind("infra", "agent"), "agent");
    assert.equal(mergeErrorKind("agent", "infra"), "agent");
    assert.equal(mergeErrorKind("check", "agent"), "agent");
    assert.equal(mergeErrorKind("agent", "check"), "agent");
    assert.equal(mergeErrorKind("infra", "infra"), "infra");
  });
});

describe("classifyCase and CaseResult.failureKind", () => {
  test("passed and skipped cases have no kind", () => {
    assert.equal(new CaseResult({ name: "p", judgePassed: true }).failureKind, null);
    const skipped = new CaseResult({ name: "s", skipped: true });
    skipped.addError("skipped: suite cancelled before the case started", "infra");
    assert.equal(skipped.failureKind, null);
  });

  test("a timeout is `timeout` whatever else was recorded", () => {
    const r = new CaseResult({ name: "t", timedOut: true });
    r.addError("judge: returned no result", "infra");
    r.addError("timeout: exceeded 5s", null);
    assert.equal(r.failureKind, "timeout");
  });

  test("a failed check without errors is `check`, and so is a case no check gave a verdict", () => {
    assert.equal(new CaseResult({ name: "f", judgePassed: false }).failureKind, "check");
    assert.equal(new CaseResult({ name: "n" }).failureKind, "check");
  });

  test("errors carry their kind; the default is the agent's", () => {
    const agent = new CaseResult({ name: "a" });
    agent.addError("agent: boom");
    assert.equal(agent.failureKind, "agent");
    const infra = new CaseResult({ name: "i" });
    infra.addError("judge: returned no result", "infra");
    assert.equal(infra.failureKind, "infra");
    // An infra error beside a failed check: the check decides (a retry would not cure it).
    const mixed = new CaseResult({ name: "m", reliabilityPassed: false });
    mixed.addError("judge: returned no result", "infra");
    mixed.addError("scorer: bad", "check");
    assert.equal(mixed.failureKind, "check");
  });

  test("a result without a recorded kind (an older worker) is read from its error text", () => {
    assert.equal(classifyCase({ passed: false, skipped: false, timedOut: false, error: "judge: returned no result" }), "infra");
    assert.equal(classifyCase({ passed: false, skipped: false, timedOut: false, error: "worker: thread crashed: x; judge: returned no result" }), "infra");
    assert.equal(classifyCase({ passed: false, skipped: false, timedOut: false, error: "agent: boom" }), "agent");
    assert.equal(classifyCase({ passed: false, skipped: false, timedOut: false, error: "judge: returned no result; agent: boom" }), "agent");
    assert.equal(classifyCase({ passed: false, skipped: false, timedOut: false, error: null }), "check");
  });

  test("the kind travels as data and comes back from it", () => {
    const r = new CaseResult({ name: "d" });
    r.addError("judge: returned no result", "infra");
    const back = CaseResult.fromData(JSON.parse(JSON.stringify(r.toData())));
    assert.equal(back.errorKind, "infra");
    assert.equal(back.failureKind, "infra");
  });

  test("the JSON report: error_kind per case and per repeat, infra_errors in the summary", () => {
    const infra = new CaseResult({ name: "i", index: 0 });
    infra.addError("judge: returned no result", "infra");
    const check = new CaseResult({ name: "c", index: 1, judgePassed: false });
    const pass = new CaseResult({ name: "p", index: 2, judgePassed: true });
    const json = new SuiteResult([infra, check, pass]).toJSON();
    assert.deepEqual(json.cases.map((c) => c.error_kind), ["infra", "check", null]);
    assert.equal(json.summary.infra_errors, 1);
    assert.ok(ERROR_KINDS.every((k) => typeof k === "string"));
  });
});

describe("infraRetryDelay", () => {
  test("1 s doubling, capped at 30 s", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map((n) => infraRetryDelay(n, 0, null)), [1000, 2000, 4000, 8000, 16000, 30000, 30000, INFRA_RETRY_CAP_MS]);
  });

  test("no retry whose wait would end past the case's deadline", () => {
    assert.equal(infraRetryDelay(1, 0, 1500), 1000);
    assert.equal(infraRetryDelay(1, 600, 1500), null);
    assert.equal(infraRetryDelay(2, 0, 2000), null);
    assert.equal(infraRetryDelay(6, 0, 10 * 60_000), 30000);
  });
});
