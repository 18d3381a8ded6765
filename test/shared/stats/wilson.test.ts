// Wilson's score interval (shared/stats/wilson.ts) against the published values, and its properties.
import { test } from "node:test";
import assert from "node:assert/strict";
import { wilsonInterval } from "../../../shared/stats/wilson.ts";
import { binomialPmf } from "../../../shared/stats/binomial-test.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

test("matches Newcombe 1998 (Stat Med 17:857-872), method 3, to its four decimals", () => {
  // Newcombe's table of 95% intervals for 81/263, 15/148, 0/20 and 1/29 by the score method.
  const published: Array<[number, number, number, number]> = [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0.0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ];
  for (const [x, n, low, high] of published) {
    const [l, h] = wilsonInterval(x, n, 0.95);
    assert.ok(Math.abs(l - low) < 5e-5 && Math.abs(h - high) < 5e-5, `${x}/${n}: [${l}, ${h}] is not [${low}, ${high}]`);
  }
});

test("edges: no trials is [0, 1]; all or none passed reaches exactly 1 or 0; bad counts name the values", () => {
  assert.deepEqual(wilsonInterval(0, 0), [0, 1]);
  const [, high] = wilsonInterval(10, 10);
  assert.equal(high, 1);
  assert.equal(wilsonInterval(0, 10)[0], 0);
  // 10 of 10 passes: the lower end is n / (n + z^2) = 10 / 13.84.
  assert.ok(Math.abs(wilsonInterval(10, 10)[0] - 10 / (10 + 1.959963984540054 ** 2)) < 1e-12);
  assert.throws(() => wilsonInterval(3, 2), /need 0 <= successes <= trials, got 3 of 2/);
  assert.throws(() => wilsonInterval(-1, 2), /got -1 of 2/);
  assert.throws(() => wilsonInterval(1, 2, 1.2), /confidence must be between 0 and 1 \(exclusive\), got 1.2/);
});

test("property: inside [0, 1], around the rate, mirror-symmetric, nested by confidence, narrower with more trials", () => {
  const random = seededRandom(28);
  for (let i = 0; i < 2000; i++) {
    const n = 1 + Math.floor(random() * 500);
    const x = Math.floor(random() * (n + 1));
    const [l, h] = wilsonInterval(x, n);
    assert.ok(0 <= l && l <= x / n && x / n <= h && h <= 1, `${x}/${n}: [${l}, ${h}]`);
    const [ml, mh] = wilsonInterval(n - x, n);
    assert.ok(Math.abs(ml - (1 - h)) < 1e-12 && Math.abs(mh - (1 - l)) < 1e-12, "mirror");
    const [nl, nh] = wilsonInterval(x, n, 0.99);
    assert.ok(nl <= l + 1e-15 && nh >= h - 1e-15, "a 99% interval holds the 95% one");
    const [wl, wh] = wilsonInterval(4 * x, 4 * n);
    assert.ok(wh - wl < h - l, "four times the trials at the same rate: narrower");
  }
});

test("property: its coverage is close to 95% (exact, over every outcome of n trials)", () => {
  // Coverage at p is sum of P(X = x) over the x whose interval holds p; Wilson's stays near the
  // nominal level where the textbook interval falls far short (Newcombe 1998; Brown, Cai & DasGupta 2001).
  for (const n of [20, 50, 200]) {
    for (const p of [0.1, 0.3, 0.5, 0.8, 0.95]) {
      let coverage = 0;
      for (let x = 0; x <= n; x++) {
        const [l, h] = wilsonInterval(x, n);
        if (l <= p && p <= h) coverage += binomialPmf(x, n, p);
      }
      assert.ok(coverage > 0.9 && coverage < 0.99, `n=${n}, p=${p}: coverage ${coverage}`);
    }
  }
});
