// Flakiness over a window of runs (coordinator/history/flaky.ts) on scripted histories.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { flakiness, isFlaky } from "../../../coordinator/history/flaky.ts";
import { historyCase as c } from "../../support/history.ts";

describe("flaky", () => {
  const history = (rows: Record<string, string>) => {
    // Each string is one case's outcomes, oldest first; "." = not in that run.
    const n = Math.max(...Object.values(rows).map((s) => s.length));
    return Array.from({ length: n }, (_, i) => ({
      runId: `r${i}`,
      cases: Object.entries(rows)
        .filter(([, s]) => s[i] !== ".")
        .map(([name, s]) => c(name, s[i] as "P" | "F" | "S")),
    }));
  };

  test("pass rate, interval and flips per case over the window, flaky first", () => {
    const rows = flakiness(history({ steady: "PPPPP", broken: "FFFFF", flappy: "PFPFP", once: "PPPFP", late: "..PPF", skippy: "PSPSP" }));
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.deepEqual(rows.map((r) => r.name), ["flappy", "late", "once", "broken", "skippy", "steady"]);
    assert.deepEqual({ runs: by.flappy!.runs, passes: by.flappy!.passes, flips: by.flappy!.flips }, { runs: 5, passes: 3, flips: 4 });
    assert.equal(by.flappy!.passRate, 0.6);
    assert.equal(by.once!.flips, 2);
    assert.equal(by.broken!.flips, 0);
    assert.equal(by.broken!.passRate, 0);
    assert.deepEqual(by.late!.outcomes, [null, null, "pass", "pass", "fail"]);
    assert.equal(by.late!.last, "fail");
    // Skipped runs are not outcomes: pass, (skip), pass is no flip.
    assert.deepEqual({ runs: by.skippy!.runs, flips: by.skippy!.flips }, { runs: 3, flips: 0 });
    // Flaky: the Wilson interval inside (5%, 95%). 3/5 is [23%, 88%]; 2/3 is [21%, 94%]; 4/5 reaches 96%: one blip.
    assert.deepEqual(rows.filter(isFlaky).map((r) => r.name), ["flappy", "late"]);
    assert.deepEqual(by.flappy!.passRateCi.map((x) => Number(x.toFixed(4))), [0.2307, 0.8824]);
    assert.equal(by.once!.passRateCi[1] > 0.95, true);
    assert.deepEqual([by.steady!.trials, by.steady!.trialPasses, by.steady!.passRateCi[1]], [5, 5, 1]);
  });

  test("each repeat is a trial, infrastructure errors are not: one run of 3/6 trials is flaky", () => {
    const repeats = (outcomes: string) =>
      [...outcomes].map((o) => ({ passed: o === "P", skipped: false, error_kind: o === "I" ? ("infra" as const) : o === "F" ? ("check" as const) : null, judge_score: null, score_value: null }));
    const entry = (name: string, outcomes: string) => ({ ...c(name, outcomes.includes("F") || outcomes.includes("I") ? "F" : "P"), report: { passed: false, skipped: false, error_kind: null, judge_score: null, score_value: null, repeats: repeats(outcomes) } });
    const rows = flakiness([{ runId: "r1", cases: [entry("coin", "PFPFPF"), entry("solid", "PPPPPPII"), entry("dead", "FFFFFF")] }]);
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.deepEqual([by.coin!.trials, by.coin!.trialPasses, by.coin!.flips, by.coin!.flaky], [6, 3, 0, true], "no flips, yet flaky: its trials say so");
    assert.deepEqual([by.solid!.trials, by.solid!.trialPasses, by.solid!.flaky], [6, 6, false], "the two infrastructure errors are left out");
    assert.deepEqual([by.dead!.trials, by.dead!.trialPasses, by.dead!.flaky], [6, 0, false], "broken, not flaky");
    // A lower confidence narrows the interval: 5 of 6 is flaky at 50%, not at 95%.
    const five = [{ runId: "r", cases: [entry("mostly", "PPPPPF")] }];
    assert.equal(flakiness(five)[0]!.flaky, false);
    assert.equal(flakiness(five, 0.5)[0]!.flaky, true);
  });

  test("an empty window has no cases", () => {
    assert.deepEqual(flakiness([]), []);
  });
});
