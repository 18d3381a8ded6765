// The standard normal distribution (shared/stats/normal.ts) against R's qnorm/pnorm.
import { test } from "node:test";
import assert from "node:assert/strict";
import { normalCdf, normalQuantile, normalUpperTail, zForConfidence } from "../../../shared/stats/normal.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

function close(actual: number, expected: number, relative = 1e-13): void {
  assert.ok(Math.abs(actual - expected) <= relative * Math.max(Math.abs(expected), 1e-300), `${actual} is not ${expected}`);
}

test("quantiles and tails match R (qnorm, pnorm) to about 1e-14", () => {
  // R: qnorm(0.975) = 1.959963984540054, qnorm(0.995) = 2.575829303548901, qnorm(1e-10) = -6.361340902404056.
  close(normalQuantile(0.975), 1.959963984540054, 1e-14);
  close(normalQuantile(0.995), 2.575829303548901, 1e-14);
  close(normalQuantile(1e-10), -6.361340902404056, 1e-13);
  assert.equal(normalQuantile(0.5), 0);
  // R: pnorm(-1.96) = 0.02499789514822043; pnorm(-8) = 6.220960574271784e-16 (the far tail keeps its digits).
  close(normalCdf(-1.96), 0.02499789514822043, 1e-13);
  close(normalUpperTail(8), 6.220960574271784e-16, 1e-11);
  close(normalCdf(0), 0.5);
  close(zForConfidence(0.95), 1.959963984540054, 1e-14);
  close(zForConfidence(0.9), 1.6448536269514722, 1e-14);
});

test("the quantile inverts the CDF, and both are symmetric", () => {
  const random = seededRandom(1);
  for (let i = 0; i < 500; i++) {
    const p = random() ** 4; // down to ~1e-16
    if (p === 0) continue;
    const z = normalQuantile(p);
    close(normalCdf(z), p, 1e-12);
    // 1 - p keeps p only to about 1e-16 absolute, so the upper quantile can match to no better.
    close(normalQuantile(1 - p), -z, Math.max(1e-12, 1e-15 / p));
  }
});

test("edges: 0 and 1 are infinite, outside is NaN, a confidence outside (0, 1) is an error", () => {
  assert.equal(normalQuantile(0), Number.NEGATIVE_INFINITY);
  assert.equal(normalQuantile(1), Number.POSITIVE_INFINITY);
  assert.ok(Number.isNaN(normalQuantile(1.5)));
  assert.throws(() => zForConfidence(1), /confidence must be between 0 and 1 \(exclusive\), got 1/);
  assert.throws(() => zForConfidence(0), /got 0/);
});
