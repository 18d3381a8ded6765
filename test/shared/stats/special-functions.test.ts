// The special functions under shared/stats/ (shared/stats/special-functions.ts), against closed forms.
import { test } from "node:test";
import assert from "node:assert/strict";
import { logChoose, logFactorial, logGamma, regularizedBeta, regularizedGammaQ } from "../../../shared/stats/special-functions.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

function close(actual: number, expected: number, relative = 1e-13): void {
  assert.ok(Math.abs(actual - expected) <= relative * Math.max(1, Math.abs(expected)), `${actual} is not ${expected}`);
}

test("ln Gamma matches ln (n-1)! and ln sqrt(pi), and its recurrence, from tiny to large arguments", () => {
  close(logGamma(0.5), Math.log(Math.sqrt(Math.PI)));
  close(logGamma(1), 0);
  close(logGamma(2), 0);
  close(logGamma(10), Math.log(362_880));
  // ln Gamma(1.5) = ln(sqrt(pi) / 2).
  close(logGamma(1.5), Math.log(Math.sqrt(Math.PI) / 2));
  // Near 0, Gamma(x) ~ 1/x - 0.5772... (Euler's constant): ln Gamma(1e-5) = 11.5129196928958...
  close(logGamma(1e-5), 11.512919692895824);
  // Past 170 Gamma itself overflows a double; its log does not.
  close(logGamma(171.5), 709.1431630309282);
  assert.equal(logGamma(0), Number.POSITIVE_INFINITY);
  assert.ok(Number.isNaN(logGamma(-1)));
  const random = seededRandom(28);
  for (let i = 0; i < 200; i++) {
    const x = 0.01 + random() * 300;
    close(logGamma(x + 1), logGamma(x) + Math.log(x), 1e-12);
  }
});

test("log-factorials: the table and ln Gamma agree across their seam; binomials are exact in small cases", () => {
  let sum = 0;
  for (let n = 1; n <= 1100; n++) {
    sum += Math.log(n);
    close(logFactorial(n), sum, 1e-12);
  }
  close(logFactorial(1023), logGamma(1024), 1e-13);
  close(logFactorial(1024), logGamma(1025), 1e-13);
  close(Math.exp(logChoose(20, 10)), 184_756, 1e-12);
  close(Math.exp(logChoose(52, 5)), 2_598_960, 1e-12);
  assert.equal(logChoose(5, 6), Number.NEGATIVE_INFINITY);
  assert.equal(logChoose(5, -1), Number.NEGATIVE_INFINITY);
  assert.ok(Number.isNaN(logFactorial(2.5)));
});

test("the incomplete beta is a binomial tail for integer parameters, and symmetric", () => {
  // I_x(a, b) = P(Binomial(a + b - 1, x) >= a): I_0.3(2, 5) = 1 - 0.7^6 - 6 * 0.3 * 0.7^5.
  close(regularizedBeta(0.3, 2, 5), 1 - 0.7 ** 6 - 6 * 0.3 * 0.7 ** 5);
  // I_x(1, 1) = x, I_x(a, 1) = x^a.
  close(regularizedBeta(0.37, 1, 1), 0.37);
  close(regularizedBeta(0.8, 7, 1), 0.8 ** 7);
  assert.equal(regularizedBeta(0, 2, 3), 0);
  assert.equal(regularizedBeta(1, 2, 3), 1);
  const random = seededRandom(7);
  for (let i = 0; i < 300; i++) {
    const a = 0.2 + random() * 500;
    const b = 0.2 + random() * 50;
    const x = random();
    close(regularizedBeta(x, a, b), 1 - regularizedBeta(1 - x, b, a), 1e-11);
  }
});

test("the upper incomplete gamma is a Poisson tail for integer a, on both sides of x = a + 1", () => {
  // Q(n, x) = P(Poisson(x) < n) = e^-x sum_{k<n} x^k / k!.
  const poisson = (n: number, x: number): number => {
    let term = Math.exp(-x);
    let sum = 0;
    for (let k = 0; k < n; k++) {
      sum += term;
      term *= x / (k + 1);
    }
    return sum;
  };
  for (const [n, x] of [[3, 2], [1, 0.5], [5, 20], [10, 3], [2, 40]] as const) close(regularizedGammaQ(n, x), poisson(n, x), 1e-12);
  assert.equal(regularizedGammaQ(2, 0), 1);
});
