// Paired comparisons of two runs (shared/stats/paired-tests.ts) against R and Fagerland et al.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SIGN_FLIP_EXACT_MAX, newcombePairedInterval, pairedDifferenceTest, pairedTTest, signFlipTest } from "../../../shared/stats/paired-tests.ts";
import { mcnemarExact } from "../../../shared/stats/binomial-test.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

// R's sleep data (Cushny & Peebles 1905): extra sleep of 10 patients on two drugs.
const DRUG1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
const DRUG2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

test("the paired t-test matches R's t.test(extra ~ group, data = sleep, paired = TRUE)", () => {
  // R: t = -4.0621, df = 9, p-value = 0.002833; 95 percent CI -2.4598858 -0.7001142; mean difference -1.58.
  const t = pairedTTest(DRUG1.map((x, i) => x - DRUG2[i]!));
  assert.ok(Math.abs(t.mean - -1.58) < 1e-12);
  assert.ok(Math.abs(t.pValue - 0.002832890197) < 1e-9, `${t.pValue}`);
  assert.ok(Math.abs(t.interval[0] - -2.4598857633) < 1e-8 && Math.abs(t.interval[1] - -0.7001142367) < 1e-8);
});

test("the sign-flip test of the sleep data: 9 non-zero differences, all negative, p = 2 / 2^9", () => {
  const d = DRUG1.map((x, i) => x - DRUG2[i]!);
  assert.ok(Math.abs(signFlipTest(d) - 2 / 512) < 1e-15);
  const result = pairedDifferenceTest(d);
  assert.equal(result.method, "sign-flip exact");
  assert.equal(result.nonZero, 9);
  assert.equal(result.pValue, signFlipTest(d));
});

test("the sign-flip test of -1, 0, +1 differences is McNemar's exact test", () => {
  const random = seededRandom(4);
  for (let i = 0; i < 200; i++) {
    const lost = Math.floor(random() * 12);
    const gained = Math.floor(random() * (SIGN_FLIP_EXACT_MAX - lost + 1));
    const d = [...Array.from({ length: lost }, () => -1), ...Array.from({ length: gained }, () => 1), ...Array.from({ length: Math.floor(random() * 50) }, () => 0)];
    assert.ok(Math.abs(signFlipTest(d) - mcnemarExact(lost, gained)) < 1e-12, `${lost}, ${gained}`);
  }
});

test("property: the sign-flip p-value ignores scale, sign and order, and is at least 2 / 2^m", () => {
  const random = seededRandom(8);
  for (let i = 0; i < 100; i++) {
    const d = Array.from({ length: 1 + Math.floor(random() * 14) }, () => (random() < 0.2 ? 0 : Math.round((random() - 0.4) * 20) / 10));
    const p = signFlipTest(d);
    assert.ok(Math.abs(signFlipTest(d.map((x) => 3 * x)) - p) < 1e-12);
    assert.ok(Math.abs(signFlipTest(d.map((x) => -x)) - p) < 1e-12);
    assert.ok(Math.abs(signFlipTest([...d].reverse()) - p) < 1e-12);
    const m = d.filter((x) => x !== 0).length;
    assert.ok(p >= 2 / 2 ** m - 1e-15 || m === 0);
  }
});

test("pairedDifferenceTest switches to the t-test past 20 non-zero differences; edges", () => {
  const twentyOne = [...Array.from({ length: 15 }, () => -0.1), ...Array.from({ length: 6 }, () => 0.1)];
  const r = pairedDifferenceTest(twentyOne);
  assert.equal(r.method, "paired t");
  assert.equal(r.pValue, pairedTTest(twentyOne).pValue);
  assert.equal(pairedDifferenceTest(twentyOne.slice(1)).method, "sign-flip exact");
  assert.throws(() => signFlipTest(twentyOne), /at most 20 non-zero differences, got 21/);
  // Nothing changed: p = 1, a zero-width interval at 0.
  assert.deepEqual(pairedDifferenceTest([0, 0, 0]), { n: 3, mean: 0, interval: [0, 0], pValue: 1, method: "sign-flip exact", nonZero: 0 });
  assert.equal(pairedDifferenceTest([]).pValue, 1);
  assert.equal(pairedDifferenceTest([-1]).pValue, 1);
  assert.throws(() => pairedDifferenceTest([0.1, Number.NaN]), /every difference must be a finite number, got NaN/);
});

test("Newcombe's paired interval matches Fagerland, Lydersen & Laake 2017 (Cavo et al. 2012)", () => {
  // Complete response before (A) and after (B) consolidation therapy: 59 both, 6 only before,
  // 16 only after, 80 neither. Their Newcombe square-and-add interval of before - after is
  // -0.0621 (-0.1186 to -0.0046); for after - before it is the mirror image.
  const [low, high] = newcombePairedInterval({ both: 59, onlyA: 6, onlyB: 16, neither: 80 });
  assert.ok(Math.abs(low - 0.0046) < 5e-5 && Math.abs(high - 0.1186) < 5e-5, `[${low}, ${high}]`);
  assert.deepEqual(newcombePairedInterval({ both: 0, onlyA: 0, onlyB: 0, neither: 0 }), [-1, 1]);
  assert.throws(() => newcombePairedInterval({ both: 1, onlyA: -2, onlyB: 0, neither: 0 }), /onlyA must be an integer >= 0, got -2/);
});

test("property: Newcombe's interval holds the difference, stays in [-1, 1] and mirrors when A and B swap", () => {
  const random = seededRandom(1998);
  for (let i = 0; i < 1000; i++) {
    const t = { both: Math.floor(random() * 40), onlyA: Math.floor(random() * 8), onlyB: Math.floor(random() * 8), neither: Math.floor(random() * 10) };
    const n = t.both + t.onlyA + t.onlyB + t.neither;
    if (n === 0) continue;
    const d = (t.onlyB - t.onlyA) / n;
    const [l, h] = newcombePairedInterval(t);
    assert.ok(-1 <= l && l <= d + 1e-12 && d <= h + 1e-12 && h <= 1, `${JSON.stringify(t)}: [${l}, ${h}] around ${d}`);
    const [ml, mh] = newcombePairedInterval({ ...t, onlyA: t.onlyB, onlyB: t.onlyA });
    assert.ok(Math.abs(ml + h) < 1e-12 && Math.abs(mh + l) < 1e-12);
  }
});
