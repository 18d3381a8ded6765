// Holm, Benjamini-Hochberg and Tarone-Holm (shared/stats/multiple-testing.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { benjaminiHochberg, holm, taroneHolm } from "../../../shared/stats/multiple-testing.ts";
import { fisherExact } from "../../../shared/stats/fisher-exact.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

// Benjamini & Hochberg 1995 (J R Stat Soc B 57:289-300), section 4: the 15 p-values of Neuhaus et
// al.'s thrombolysis trial. At 0.05 their procedure rejects the 4 smallest, Bonferroni-type
// procedures (Holm's among them) the 3 smallest.
const NEUHAUS = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.324, 0.4262, 0.5719, 0.6528, 0.759, 1.0];

function closeAll(actual: number[], expected: number[]): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]!) < 1e-9, `[${i}] ${v} is not ${expected[i]}`));
}

test("Benjamini & Hochberg's example: BH rejects 4, Holm 3; adjusted p-values as R's p.adjust computes them", () => {
  const bh = benjaminiHochberg(NEUHAUS);
  const h = holm(NEUHAUS);
  assert.equal(bh.filter((p) => p <= 0.05).length, 4);
  assert.equal(h.filter((p) => p <= 0.05).length, 3);
  // p.adjust(p, "BH") and p.adjust(p, "holm") of the same vector.
  closeAll(bh, [0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.0638571428571, 0.0638571428571, 0.0645, 0.0765, 0.486, 0.581181818182, 0.714875, 0.753230769231, 0.813214285714, 1]);
  closeAll(h, [0.0015, 0.0056, 0.0247, 0.114, 0.2211, 0.278, 0.278, 0.278, 0.3213, 1, 1, 1, 1, 1, 1]);
});

test("adjusted p-values keep the input's order, and edges: none, one, ties", () => {
  closeAll(holm([0.04, 0.01, 0.03]), [0.06, 0.03, 0.06]);
  closeAll(benjaminiHochberg([0.04, 0.01, 0.03]), [0.04, 0.03, 0.04]);
  assert.deepEqual(holm([]), []);
  assert.deepEqual(benjaminiHochberg([0.2]), [0.2]);
  closeAll(holm([0.01, 0.01]), [0.02, 0.02]);
  assert.throws(() => holm([0.5, 1.5]), /every p-value must be in \[0, 1\], got 1.5/);
});

test("Tarone-Holm: continuous tests (every minimum 0) reject exactly what Holm rejects", () => {
  const random = seededRandom(3);
  for (let i = 0; i < 300; i++) {
    const p = Array.from({ length: 1 + Math.floor(random() * 40) }, () => random() ** 3);
    const t = taroneHolm(p, p.map(() => 0), 0.05);
    assert.deepEqual(t.rejected, holm(p).map((x) => x <= 0.05));
    assert.equal(t.divisor, p.length);
  }
});

test("Tarone-Holm: cases that cannot be significant cost nothing; a 10/10-to-0/10 case is caught among 5,000", () => {
  const allPass = fisherExact([[10, 0], [10, 0]]);
  const dropped = fisherExact([[10, 0], [0, 10]]);
  const p = [...Array.from({ length: 4999 }, () => allPass.pValue), dropped.pValue];
  const minima = [...Array.from({ length: 4999 }, () => allPass.minimumPValue), dropped.minimumPValue];
  const t = taroneHolm(p, minima, 0.025);
  assert.equal(t.divisor, 1);
  assert.equal(t.rejected.filter(Boolean).length, 1);
  assert.equal(t.rejected[4999], true);
  // Plain Holm divides by 5,000 and misses it.
  assert.equal(holm(p)[4999]! <= 0.025, false);
});

test("property: Tarone-Holm rejects at least what Holm rejects, and under the null rarely anything (seeded simulation)", () => {
  const random = seededRandom(1990);
  let familiesWithAFalseAlarm = 0;
  const families = 1500;
  for (let f = 0; f < families; f++) {
    const p: number[] = [];
    const minima: number[] = [];
    for (let c = 0; c < 40; c++) {
      // The same pass probability on both sides: every rejection is a false alarm.
      const rate = random() < 0.6 ? 0.97 : 0.2 + random() * 0.7;
      const n = 2 + Math.floor(random() * 12);
      let a = 0;
      let c2 = 0;
      for (let t = 0; t < n; t++) {
        if (random() < rate) a++;
        if (random() < rate) c2++;
      }
      const r = fisherExact([[a, n - a], [c2, n - c2]]);
      p.push(r.pValue);
      minima.push(r.minimumPValue);
    }
    const t = taroneHolm(p, minima, 0.05);
    holm(p).forEach((adj, i) => {
      if (adj <= 0.05) assert.ok(t.rejected[i], "Holm rejected what Tarone-Holm kept");
    });
    if (t.rejected.some(Boolean)) familiesWithAFalseAlarm++;
  }
  // At most alpha, give or take the simulation's noise (3 standard errors of 1,500 draws: 0.017).
  assert.ok(familiesWithAFalseAlarm / families <= 0.05 + 0.017, `family-wise false alarms ${familiesWithAFalseAlarm / families}`);
});

test("Tarone-Holm checks its input", () => {
  assert.deepEqual(taroneHolm([], [], 0.05), { rejected: [], testable: [], divisor: 1 });
  assert.throws(() => taroneHolm([0.1], [], 0.05), /1 p-values but 0 minima/);
  assert.throws(() => taroneHolm([0.1], [0.1], 0), /alpha must be between 0 and 1 \(exclusive\), got 0/);
});
