// Student's t distribution (shared/stats/student-t.ts) against R's qt/pt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { studentTCdf, studentTQuantile, studentTUpperTail } from "../../../shared/stats/student-t.ts";
import { normalQuantile } from "../../../shared/stats/normal.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

function close(actual: number, expected: number, relative = 1e-11): void {
  assert.ok(Math.abs(actual - expected) <= relative * Math.max(1, Math.abs(expected)), `${actual} is not ${expected}`);
}

test("quantiles and tails match R (qt, pt), from 1 degree of freedom to 2,000", () => {
  // R: qt(0.975, 10) = 2.228138851986274; qt(0.995, 3) = 5.840909309733355; qt(0.975, 1) = 12.70620473617471.
  close(studentTQuantile(0.975, 10), 2.228138851986274);
  close(studentTQuantile(0.995, 3), 5.840909309733355);
  close(studentTQuantile(0.975, 1), 12.70620473617471);
  close(studentTQuantile(0.025, 10), -2.228138851986274);
  // R: qt(0.975, 2000) = 1.961150826099437: close to the normal's 1.96, as it must be.
  close(studentTQuantile(0.975, 2000), 1.961150826099437, 1e-9);
  // R: pt(-2.5, 4) = 0.03338327240599405; pt(1, 1) = 0.75 (the Cauchy).
  close(studentTCdf(-2.5, 4), 0.03338327240599405);
  close(studentTCdf(1, 1), 0.75);
  assert.equal(studentTQuantile(0.5, 7), 0);
});

test("the quantile inverts the tail for any df, and lies beyond the normal quantile", () => {
  const random = seededRandom(3);
  for (let i = 0; i < 300; i++) {
    const df = 0.5 + random() * 300;
    const p = 0.5 + random() * 0.4999;
    const t = studentTQuantile(p, df);
    close(studentTUpperTail(t, df), 1 - p, 1e-9);
    assert.ok(t >= normalQuantile(p) - 1e-12, `t(${p}, ${df}) = ${t} is inside the normal's ${normalQuantile(p)}`);
  }
});

test("edges: infinite t, p of 0 and 1, a df that is not positive", () => {
  assert.equal(studentTUpperTail(Number.POSITIVE_INFINITY, 3), 0);
  assert.equal(studentTUpperTail(Number.NEGATIVE_INFINITY, 3), 1);
  assert.equal(studentTQuantile(1, 3), Number.POSITIVE_INFINITY);
  assert.equal(studentTQuantile(0, 3), Number.NEGATIVE_INFINITY);
  assert.ok(Number.isNaN(studentTQuantile(0.9, 0)));
});
