// --fail-on-regression (coordinator/history/regression.ts) on scripted runs.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { findRegressions } from "../../../coordinator/history/regression.ts";
import { historyCase as c } from "../../support/history.ts";

describe("--fail-on-regression", () => {
  test("a case that passed in the baseline and fails now is a regression; new, skipped and still-failing cases are not", () => {
    const baseline = [c("ok", "P"), c("breaks", "P"), c("was_failing", "F"), c("skipped_now", "P")];
    const current = [c("ok", "P"), c("breaks", "F"), c("was_failing", "F"), c("skipped_now", "S"), c("new_and_failing", "F")];
    assert.deepEqual(findRegressions(baseline, current), ["breaks"]);
    assert.deepEqual(findRegressions([], current), []);
  });
});
