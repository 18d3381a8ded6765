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

  test("pass rate and flips per case over the window, flakiest first", () => {
    const rows = flakiness(history({ steady: "PPPPP", broken: "FFFFF", flappy: "PFPFP", once: "PPPFP", late: "..PPF", skippy: "PSPSP" }));
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.deepEqual(rows.map((r) => r.name), ["flappy", "once", "late", "broken", "skippy", "steady"]);
    assert.deepEqual({ runs: by.flappy!.runs, passes: by.flappy!.passes, flips: by.flappy!.flips }, { runs: 5, passes: 3, flips: 4 });
    assert.equal(by.flappy!.passRate, 0.6);
    assert.equal(by.once!.flips, 2);
    assert.equal(by.broken!.flips, 0);
    assert.equal(by.broken!.passRate, 0);
    assert.deepEqual(by.late!.outcomes, [null, null, "pass", "pass", "fail"]);
    assert.equal(by.late!.last, "fail");
    // Skipped runs are not outcomes: pass, (skip), pass is no flip.
    assert.deepEqual({ runs: by.skippy!.runs, flips: by.skippy!.flips }, { runs: 3, flips: 0 });
    assert.deepEqual(rows.filter(isFlaky).map((r) => r.name), ["flappy", "once", "late"]);
  });

  test("an empty window has no cases", () => {
    assert.deepEqual(flakiness([]), []);
  });
});
