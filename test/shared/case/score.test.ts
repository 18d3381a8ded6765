// Score (shared/case/score.ts): Agno's range check, defaults and immutability.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Score, ScoreRangeError } from "../../../index.ts";

describe("Score (spec I3)", () => {
  test("values outside [0, 1] throw with Agno's message", () => {
    assert.throws(() => new Score({ value: 1.4, passed: true }), { message: "Score.value must be in [0, 1], got 1.4" });
    assert.throws(() => new Score({ value: -0.1, passed: false }), { message: "Score.value must be in [0, 1], got -0.1" });
    assert.throws(() => new Score({ value: 1.4, passed: true }), ScoreRangeError);
  });

  test("0 and 1 are valid bounds", () => {
    assert.equal(new Score({ value: 0, passed: false }).value, 0);
    assert.equal(new Score({ value: 1, passed: true }).value, 1);
    assert.equal(new Score({ value: 0.5, passed: true, reason: "half" }).reason, "half");
  });

  test("NaN, infinities and non-numbers are invalid", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "0.5" as unknown as number, null as unknown as number]) {
      assert.throws(() => new Score({ value, passed: true }), /Score\.value must be in \[0, 1\], got /);
    }
  });

  test("defaults and immutability", () => {
    const s = new Score({ value: 1, passed: true });
    assert.equal(s.reason, null);
    assert.equal(s.detail, null);
    assert.ok(Object.isFrozen(s));
  });

  test("Score.from validates plain data and keeps a Score as is", () => {
    const s = new Score({ value: 0.2, passed: false });
    assert.equal(Score.from(s), s);
    assert.ok(Score.from({ value: 0.3, passed: true }) instanceof Score);
    assert.throws(() => Score.from({ value: 2, passed: true }), { message: "Score.value must be in [0, 1], got 2" });
  });
});
