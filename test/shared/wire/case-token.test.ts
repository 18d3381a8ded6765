// Run tokens that remember their cases' first-trial tokens give the same tokens and seals as
// computing each anew, for every case and trial, the first time and every time after.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CASE_TOKEN_PATTERN, RunTokens, caseToken, newRunKey, resultSeal } from "../../../shared/wire/case-token.ts";

describe("RunTokens", () => {
  test("remembered tokens are the computed ones, inside and outside the remembered cases, for every trial", () => {
    const key = newRunKey();
    const fresh = new RunTokens(key, "run-1");
    const kept = new RunTokens(key, "run-1").remember(50);
    for (let round = 0; round < 2; round++) {
      for (const index of [0, 1, 17, 49, 50, 51, 1000]) {
        for (const trial of [1, 2, 7]) {
          const token = caseToken(key, "run-1", index, trial);
          assert.match(token, CASE_TOKEN_PATTERN);
          assert.equal(kept.token(index, trial), token, `case ${index} trial ${trial}, round ${round}`);
          assert.equal(fresh.token(index, trial), token);
          assert.equal(kept.seal(index, trial), resultSeal(token));
        }
      }
    }
    assert.notEqual(kept.token(1), kept.token(2), "each case its own token");
    assert.notEqual(new RunTokens(key, "run-2").remember(50).token(1), kept.token(1), "each run its own");
  });
});
