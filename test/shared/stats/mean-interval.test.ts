// Intervals around mean scores (shared/stats/mean-interval.ts), against R's t.test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { clusteredMeanInterval, meanInterval } from "../../../shared/stats/mean-interval.ts";

test("matches R's t.test interval (the sleep data's first group)", () => {
  // R: t.test(sleep$extra[1:10]) gives mean 0.75, 95 percent confidence interval -0.5297804 2.0297804.
  const group1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
  const e = meanInterval(group1);
  assert.ok(Math.abs(e.mean - 0.75) < 1e-12);
  assert.ok(Math.abs(e.interval[0] - -0.5297804) < 1e-6 && Math.abs(e.interval[1] - 2.0297804) < 1e-6, `${e.interval}`);
  assert.equal(e.n, 10);
});

test("clipped to the score's range; fewer than two values give the whole range; bad values are errors", () => {
  const judge = meanInterval([10, 10, 9, 10], { bounds: [1, 10] });
  assert.equal(judge.interval[1], 10);
  assert.ok(judge.interval[0] < 9.75 && judge.interval[0] > 8);
  assert.deepEqual(meanInterval([7], { bounds: [1, 10] }).interval, [1, 10]);
  assert.deepEqual(meanInterval([], { bounds: [0, 1] }).interval, [0, 1]);
  assert.ok(Number.isNaN(meanInterval([]).mean));
  assert.deepEqual(meanInterval([0.4]).interval, [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY]);
  // Every value equal: no spread, a point interval.
  assert.deepEqual(meanInterval([0.5, 0.5, 0.5]).interval, [0.5, 0.5]);
  assert.throws(() => meanInterval([1, Number.NaN]), /every value must be a finite number, got NaN/);
  assert.throws(() => meanInterval([1, 2], { confidence: 0 }), /confidence must be between 0 and 1/);
});

test("with repeats each case counts once, whatever its trials", () => {
  // A case with 100 trials at 0.1 and one with 1 trial at 0.9: the mean of case means is 0.5.
  const many = Array.from({ length: 100 }, () => 0.1);
  const e = clusteredMeanInterval([many, [0.9], []]);
  assert.ok(Math.abs(e.mean - 0.5) < 1e-12);
  assert.equal(e.n, 2);
  const direct = meanInterval([0.1, 0.9]);
  assert.ok(Math.abs(e.interval[0] - direct.interval[0]) < 1e-12 && Math.abs(e.interval[1] - direct.interval[1]) < 1e-12);
});
