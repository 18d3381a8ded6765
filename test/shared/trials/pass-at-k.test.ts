// pass@k and pass^k (shared/trials/pass-at-k.ts): values by hand and unbiasedness, exactly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { meanPassHatK, passAtK, passHatK, passHatKTable } from "../../../shared/trials/pass-at-k.ts";
import { binomialPmf } from "../../../shared/stats/binomial-test.ts";

test("pass^k by hand: 3 passes of 5 runs", () => {
  // C(3, k) / C(5, k): 3/5, 3/10, 1/10, 0, 0.
  const table = passHatKTable([true, false, true, true, false].map((passed) => ({ passed })))!;
  assert.deepEqual(Object.keys(table), ["1", "2", "3", "4", "5"]);
  [0.6, 0.3, 0.1, 0, 0].forEach((v, i) => assert.ok(Math.abs(table[String(i + 1)]! - v) < 1e-15, `pass^${i + 1}`));
  assert.equal(passHatK(5, 5, 5), 1);
  assert.ok(Number.isNaN(passHatK(3, 1, 4)));
  assert.ok(Number.isNaN(passHatK(0, 0, 1)));
  assert.equal(passHatKTable([]), null);
  // Never above pass@k, equal at k = 1.
  for (let c = 0; c <= 8; c++) for (let k = 1; k <= 8; k++) assert.ok(passHatK(8, c, k) <= passAtK(8, c, k) + 1e-15);
});

test("property: pass^k is unbiased for p^k and pass@k for 1 - (1 - p)^k (exact expectations over Binomial(n, p))", () => {
  for (const n of [1, 3, 10, 20]) {
    for (const p of [0.05, 0.4, 0.8, 0.98]) {
      for (let k = 1; k <= n; k++) {
        let hat = 0;
        let at = 0;
        for (let c = 0; c <= n; c++) {
          hat += binomialPmf(c, n, p) * passHatK(n, c, k);
          at += binomialPmf(c, n, p) * passAtK(n, c, k);
        }
        assert.ok(Math.abs(hat - p ** k) < 1e-12, `pass^${k} of ${n} at ${p}: ${hat}`);
        assert.ok(Math.abs(at - (1 - (1 - p) ** k)) < 1e-12, `pass@${k} of ${n} at ${p}: ${at}`);
      }
    }
  }
});

test("a run's pass^k: the mean over cases, up to the fewest trials any case ran", () => {
  const run = meanPassHatK([
    { passed: 3, trials: 3 },
    { passed: 1, trials: 5 },
    { passed: 0, trials: 0 },
  ]);
  assert.deepEqual(Object.keys(run!), ["1", "2", "3"]);
  assert.ok(Math.abs(run!["1"]! - (1 + 0.2) / 2) < 1e-15);
  assert.equal(run!["2"], 0.5);
  assert.equal(meanPassHatK([{ passed: 0, trials: 0 }]), null);
});
