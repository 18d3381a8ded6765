// exitCodeFor (coordinator/run/exit-code.ts): 0 passed, 1 failed, 2 usage, 3 incomplete, and the
// run-level pass threshold.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult, ExitCode, SuiteResult, exitCodeFor } from "../../../index.ts";
import { expectationResult as result, thresholdSuite as suite } from "../../support/results.ts";

describe("exitCodeFor", () => {
  const pass = (name = "p") => new CaseResult({ name, judgePassed: true });
  const fail = (name = "f") => new CaseResult({ name, judgePassed: false });
  const skip = (name = "s") => new CaseResult({ name, skipped: true, error: "skipped: suite cancelled" });

  test("an empty run is a usage error (2), even when cancelled", () => {
    assert.equal(exitCodeFor(new SuiteResult([])), 2);
    assert.equal(exitCodeFor(new SuiteResult([], { cancelled: true })), ExitCode.Usage);
  });

  test("a cancelled run or skipped cases give 3, even with failures", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass()], { cancelled: true })), 3);
    assert.equal(exitCodeFor(new SuiteResult([fail(), pass()], { cancelled: true })), 3);
    assert.equal(exitCodeFor(new SuiteResult([fail(), skip()])), ExitCode.Incomplete);
    assert.equal(exitCodeFor(new SuiteResult([pass(), skip()]), { reportFailed: true }), 3);
  });

  test("a failed case gives 1", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass(), fail()])), 1);
    assert.equal(exitCodeFor(new SuiteResult([new CaseResult({ name: "e", judgePassed: true, error: "agent: boom" })])), ExitCode.Failed);
  });

  test("--infra-errors-incomplete: failures that are all infra give 3; any other failure still gives 1", () => {
    const infra = (name = "i") => {
      const r = new CaseResult({ name });
      r.addError("judge: returned no result", "infra");
      return r;
    };
    const agent = (name = "a") => {
      const r = new CaseResult({ name });
      r.addError("agent: boom");
      return r;
    };
    const on = { infraErrorsIncomplete: true };
    assert.equal(exitCodeFor(new SuiteResult([pass(), infra()]), on), ExitCode.Incomplete);
    assert.equal(exitCodeFor(new SuiteResult([infra("i1"), infra("i2")]), on), ExitCode.Incomplete);
    assert.equal(exitCodeFor(new SuiteResult([pass(), infra()])), ExitCode.Failed, "off by default");
    assert.equal(exitCodeFor(new SuiteResult([infra(), fail()]), on), ExitCode.Failed);
    assert.equal(exitCodeFor(new SuiteResult([infra(), agent()]), on), ExitCode.Failed);
    assert.equal(exitCodeFor(new SuiteResult([infra(), new CaseResult({ name: "t", timedOut: true, error: "timeout: exceeded 1s" })]), on), ExitCode.Failed);
    assert.equal(exitCodeFor(new SuiteResult([pass()]), on), ExitCode.Ok);
    // A met pass threshold still passes the run.
    assert.equal(exitCodeFor(new SuiteResult([pass("p1"), pass("p2"), infra()], { passThreshold: 0.5 }), on), ExitCode.Ok);
  });

  test("a failed report write gives 1 even when every case passed", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass()]), { reportFailed: true }), 1);
  });

  test("all passed gives 0", () => {
    assert.equal(exitCodeFor(new SuiteResult([pass("a"), pass("b")])), 0);
    assert.equal(exitCodeFor(new SuiteResult([pass()]), { reportFailed: false }), ExitCode.Ok);
  });
});

describe("the pass threshold and exit codes", () => {
  test("with a threshold: 0 at or above it even with failures, 1 below it", () => {
    assert.equal(exitCodeFor(suite(19, 1, { passThreshold: 0.95 })), ExitCode.Ok, "19/20 meets 0.95 exactly");
    assert.equal(exitCodeFor(suite(18, 2, { passThreshold: 0.95 })), ExitCode.Failed);
    assert.equal(exitCodeFor(suite(1, 2, { passThreshold: 0 })), ExitCode.Ok);
    assert.equal(exitCodeFor(suite(3, 0, { passThreshold: 1 })), ExitCode.Ok);
    assert.equal(exitCodeFor(suite(2, 1, { passThreshold: 1 })), ExitCode.Failed);
    assert.equal(exitCodeFor(suite(2, 1)), ExitCode.Failed, "without a threshold every case must pass");
  });

  test("2 and 3 keep their meaning and precedence; a failed report write is still 1", () => {
    assert.equal(exitCodeFor(suite(0, 0, { passThreshold: 0 })), ExitCode.Usage, "an empty selection never passes");
    assert.equal(exitCodeFor(suite(9, 1, { passThreshold: 0.5, cancelled: true })), ExitCode.Incomplete);
    assert.equal(exitCodeFor(suite(9, 1, { passThreshold: 0.5 }), { incomplete: true }), ExitCode.Incomplete);
    const skipped = new SuiteResult([result("a", true), new CaseResult({ name: "s", skipped: true, error: "skipped: x" })], { passThreshold: 0.5 });
    assert.equal(exitCodeFor(skipped), ExitCode.Incomplete, "a skipped case makes the run incomplete even when the rate is met");
    assert.equal(exitCodeFor(suite(10, 0, { passThreshold: 0.5 }), { reportFailed: true }), ExitCode.Failed);
  });
});
