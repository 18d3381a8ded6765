// Fisher's exact test (shared/stats/fisher-exact.ts) against R's fisher.test examples.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fisherExact, type Table2x2 } from "../../../shared/stats/fisher-exact.ts";
import { logChoose } from "../../../shared/stats/special-functions.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

function close(actual: number, expected: number, tolerance: number): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} is not ${expected}`);
}

test("matches R's fisher.test examples: the tea-tasting lady and Fisher's twins' convictions", () => {
  // R: TeaTasting <- matrix(c(3, 1, 1, 3), 2); fisher.test(TeaTasting, alternative = "greater")
  // p-value = 0.2429; two-sided p-value = 0.4857 (exactly 17/70 and 34/70).
  close(fisherExact([[3, 1], [1, 3]], "greater").pValue, 17 / 70, 1e-14);
  close(fisherExact([[3, 1], [1, 3]]).pValue, 34 / 70, 1e-14);
  // R: Convictions <- matrix(c(2, 10, 15, 3), 2); fisher.test(Convictions, alternative = "less")
  // p-value = 0.0004652 (0.0004651809 in full); two-sided 0.0005367.
  const convictions: Table2x2 = [[2, 15], [10, 3]];
  close(fisherExact(convictions, "less").pValue, 0.0004651809, 1e-10);
  close(fisherExact(convictions).pValue, 0.0005367241, 1e-10);
});

test("large tables keep their precision and their far tails (SciPy's fisher_exact, which follows R)", () => {
  // scipy.stats.fisher_exact([[900, 100], [850, 150]]).pvalue = 0.0008950875386906894;
  // fisher_exact([[5000, 3], [4900, 120]]).pvalue = 2.998315359384741e-32.
  close(fisherExact([[900, 100], [850, 150]]).pValue, 0.0008950875386906894, 1e-12);
  const far = fisherExact([[5000, 3], [4900, 120]]).pValue;
  assert.ok(Math.abs(far / 2.998315359384741e-32 - 1) < 1e-9, `${far}`);
});

test("a case from 10/10 to 0/10 trials: p = 2 / C(20, 10); every trial passing on both sides: p = 1, and it could never be less", () => {
  const dropped = fisherExact([[10, 0], [0, 10]]);
  close(dropped.pValue, 2 / 184_756, 1e-18);
  close(dropped.minimumPValue, 2 / 184_756, 1e-18);
  assert.deepEqual(fisherExact([[10, 0], [10, 0]]), { pValue: 1, minimumPValue: 1 });
  // One trial a side can never be significant: both tables are equally likely.
  assert.deepEqual(fisherExact([[1, 0], [0, 1]]), { pValue: 1, minimumPValue: 1 });
  assert.throws(() => fisherExact([[1, -1], [0, 1]]), /cell b must be an integer >= 0, got -1/);
});

test("property: two-sided p is the same for the table and its transpose and with rows swapped; one-sided swap", () => {
  const random = seededRandom(9);
  for (let i = 0; i < 400; i++) {
    const [a, b, c, d] = Array.from({ length: 4 }, () => Math.floor(random() * 15));
    const p = fisherExact([[a!, b!], [c!, d!]]);
    close(fisherExact([[a!, c!], [b!, d!]]).pValue, p.pValue, 1e-12);
    close(fisherExact([[c!, d!], [a!, b!]]).pValue, p.pValue, 1e-12);
    close(fisherExact([[a!, b!], [c!, d!]], "less").pValue, fisherExact([[c!, d!], [a!, b!]], "greater").pValue, 1e-12);
    assert.ok(p.minimumPValue <= p.pValue + 1e-15 && p.pValue <= 1);
  }
});

test("property: the test is valid (exactly): over every table with given margins, P(p <= alpha) <= alpha", () => {
  for (const [row1, row2, col1] of [[10, 10, 7], [20, 5, 12], [3, 30, 9], [15, 15, 15], [8, 12, 3]] as const) {
    const lo = Math.max(0, col1 - row2);
    const hi = Math.min(row1, col1);
    const total = logChoose(row1 + row2, col1);
    for (const alpha of [0.01, 0.05]) {
      let size = 0;
      for (let a = lo; a <= hi; a++) {
        const table: Table2x2 = [[a, row1 - a], [col1 - a, row2 - col1 + a]];
        if (fisherExact(table).pValue <= alpha) size += Math.exp(logChoose(row1, a) + logChoose(row2, col1 - a) - total);
      }
      assert.ok(size <= alpha + 1e-12, `margins ${row1}, ${row2}, ${col1}: size ${size} at ${alpha}`);
    }
  }
});
