// The exact binomial and McNemar tests (shared/stats/binomial-test.ts) against R and Fagerland et al.
import { test } from "node:test";
import assert from "node:assert/strict";
import { binomialPmf, binomialTest, mcnemarExact } from "../../../shared/stats/binomial-test.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

test("binomialTest matches R's binom.test example (Mendel's peas: 682 of 925 against 3/4)", () => {
  // R: binom.test(c(682, 243), p = 3/4) prints p-value = 0.3825 (0.3824916 in full).
  assert.ok(Math.abs(binomialTest(682, 925, 0.75) - 0.3824916) < 1e-6);
  // One-sided: P(X <= 2) and P(X >= 8) of Binomial(10, 1/2), by hand.
  assert.ok(Math.abs(binomialTest(2, 10, 0.5, "less") - 56 / 1024) < 1e-15);
  assert.ok(Math.abs(binomialTest(8, 10, 0.5, "greater") - 56 / 1024) < 1e-15);
  assert.equal(binomialTest(0, 0), 1);
  assert.equal(binomialTest(5, 10), 1);
});

test("mcnemarExact matches Fagerland, Lydersen & Laake's published examples", () => {
  // Bentur et al. 2009 (Fagerland et al. 2013, BMC Med Res Methodol 13:91, Table 1): 1 and 7
  // discordant pairs, exact conditional p = 0.070 (2 x 9/256).
  assert.ok(Math.abs(mcnemarExact(1, 7) - 18 / 256) < 1e-15);
  // Cavo et al. 2012 (Fagerland, Lydersen & Laake 2017, "Statistical Analysis of Contingency
  // Tables", chapter 8): 6 and 16 discordant pairs, exact conditional P = 0.052479.
  assert.ok(Math.abs(mcnemarExact(6, 16) - 0.052479) < 5e-7);
  assert.equal(mcnemarExact(16, 6), mcnemarExact(6, 16));
});

test("McNemar edges: no discordant pair, ties, all one way", () => {
  assert.equal(mcnemarExact(0, 0), 1);
  assert.equal(mcnemarExact(10, 10), 1);
  // A swapped handful of flips is noise; 20 new failures and no new pass is not.
  assert.equal(mcnemarExact(3, 2), 1);
  assert.ok(Math.abs(mcnemarExact(20, 0) - 2 / 2 ** 20) < 1e-18);
  assert.throws(() => mcnemarExact(-1, 3), /lost must be an integer >= 0, got -1/);
  assert.throws(() => mcnemarExact(1, 2.5), /gained must be an integer >= 0, got 2.5/);
});

test("property: McNemar is the two-sided binomial test at 1/2, symmetric in its arguments", () => {
  const random = seededRandom(5);
  for (let i = 0; i < 500; i++) {
    const b = Math.floor(random() * 60);
    const c = Math.floor(random() * 60);
    const p = mcnemarExact(b, c);
    assert.ok(Math.abs(p - binomialTest(b, b + c, 0.5)) < 1e-12, `${b}, ${c}`);
    assert.equal(p, mcnemarExact(c, b));
  }
});

test("property: the test is valid (exactly): P(p-value <= alpha) <= alpha for every n and p", () => {
  for (let n = 1; n <= 40; n++) {
    for (const p0 of [0.5, 0.2, 0.75, 0.93]) {
      const pvalues = Array.from({ length: n + 1 }, (_, x) => binomialTest(x, n, p0));
      for (const alpha of [0.01, 0.05, 0.1]) {
        let size = 0;
        pvalues.forEach((pv, x) => {
          if (pv <= alpha) size += binomialPmf(x, n, p0);
        });
        assert.ok(size <= alpha + 1e-12, `n=${n}, p=${p0}, alpha=${alpha}: size ${size}`);
      }
    }
  }
});
