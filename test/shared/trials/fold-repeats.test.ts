// Folding a case's repeats into one result (shared/trials/fold-repeats.ts): the first failing run on top,
// every run listed, pass rate and pass@k, and the summary's average.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { SuiteResult } from "../../../index.ts";
import { aggregateRepeats } from "../../../shared/trials/fold-repeats.ts";
import { expectationResult as result } from "../../support/results.ts";

describe("repeats: aggregation (pure)", () => {
  test("one entry per case: the first failing run's fields on top, every run listed, passed only when all passed", () => {
    const runs = [
      result("x", true, { sessionId: "eval-x-1", durationSeconds: 0.1, output: "ok" }),
      result("x", false, { sessionId: "eval-x-2", durationSeconds: 0.2, output: "bad", error: null }),
      result("x", true, { sessionId: "eval-x-3", durationSeconds: 0.3, output: "ok" }),
    ];
    const agg = aggregateRepeats(runs);
    assert.equal(agg.sessionId, "eval-x-2");
    assert.equal(agg.output, "bad");
    assert.equal(agg.durationSeconds, 0.6);
    assert.equal(agg.passed, false);
    assert.equal(agg.passRate, 2 / 3);
    assert.deepEqual(agg.passAtK, { "1": 2 / 3, "2": 1, "3": 1 });
    const json = agg.toJSON();
    assert.deepEqual(
      json.repeats!.map((r) => [r.repeat, r.session_id, r.passed, r.output]),
      [
        [1, "eval-x-1", true, "ok"],
        [2, "eval-x-2", false, "bad"],
        [3, "eval-x-3", true, "ok"],
      ],
    );
    assert.deepEqual(Object.keys(json.repeats![0]!), ["repeat", "session_id", "duration_seconds", "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output", "tools_called", "timed_out", "skipped", "passed", "error", "score_value", "score_passed", "score_reason", "expectations", "attempts", "worker", "error_kind", "reliability_reason"]);
    const allPass = aggregateRepeats([result("y", true), result("y", true)]);
    assert.equal(allPass.passed, true);
    // The summary averages pass@k over cases.
    assert.equal(new SuiteResult([agg], { repeat: 1 }).toJSON().summary.pass_at_k, null, "no pass@k without repeats");
    const s2 = new SuiteResult([agg, aggregateRepeats([result("y", true), result("y", true), result("y", false)])], { repeat: 3 });
    assert.deepEqual(s2.toJSON().summary.pass_at_k, { "1": 2 / 3, "2": 1, "3": 1 });
  });
});
