// `evalfleet compare A B` (coordinator/history/compare.ts) on scripted runs.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { compareRuns } from "../../../coordinator/history/compare.ts";
import { historyCase as c } from "../../support/history.ts";

describe("compare A B", () => {
  test("pass -> fail, fail -> pass, score changes, cases only on one side, skips apart", () => {
    const a = [c("steady", "P", 8), c("regressed", "P"), c("fixed", "F"), c("dropped", "P"), c("was_skipped", "S"), c("drifted", "P", 9, 1)];
    const b = [c("steady", "P", 8), c("regressed", "F"), c("fixed", "P"), c("added", "F"), c("was_skipped", "P"), c("drifted", "P", 7, 0.5)];
    const r = compareRuns(a, b);
    assert.deepEqual(r.regressions, ["regressed"]);
    assert.deepEqual(r.fixes, ["fixed"]);
    assert.deepEqual(r.skipChanges, [{ name: "was_skipped", from: "skip", to: "pass" }]);
    assert.deepEqual(r.scoreChanges, [{ name: "drifted", judge: { from: 9, to: 7 }, scorer: { from: 1, to: 0.5 } }]);
    assert.deepEqual(r.onlyInA, ["dropped"]);
    assert.deepEqual(r.onlyInB, ["added"]);
    assert.equal(r.unchanged, 2);
  });

  test("a score that appears or disappears is a change; identical runs change nothing", () => {
    const r = compareRuns([c("x", "P", null)], [c("x", "P", 6)]);
    assert.deepEqual(r.scoreChanges, [{ name: "x", judge: { from: null, to: 6 }, scorer: null }]);
    const same = compareRuns([c("x", "P", 6), c("y", "F")], [c("x", "P", 6), c("y", "F")]);
    assert.deepEqual([same.regressions, same.fixes, same.scoreChanges, same.onlyInA, same.onlyInB, same.unchanged], [[], [], [], [], [], 2]);
  });
});
