// A run's pass rate and its interval (shared/stats/pass-rate.ts): Wilson for single trials, clustered with repeats.
import { test } from "node:test";
import assert from "node:assert/strict";
import { passRateInterval } from "../../../shared/stats/pass-rate.ts";
import { wilsonInterval } from "../../../shared/stats/wilson.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

const cases = (spec: Array<[number, number]>) => spec.map(([passed, trials]) => ({ passed, trials }));

function near(actual: readonly [number, number], expected: readonly [number, number]): void {
  assert.ok(Math.abs(actual[0] - expected[0]) < 1e-12 && Math.abs(actual[1] - expected[1]) < 1e-12, `[${actual}] is not [${expected}]`);
}

test("each case ran once: the pass rate with exactly Wilson's interval (Newcombe's 81 of 263)", () => {
  const run = cases([...Array.from({ length: 81 }, (): [number, number] => [1, 1]), ...Array.from({ length: 182 }, (): [number, number] => [0, 1])]);
  const estimate = passRateInterval(run);
  assert.equal(estimate.method, "wilson");
  assert.equal(estimate.rate, 81 / 263);
  assert.deepEqual(estimate.interval, wilsonInterval(81, 263));
  assert.equal(estimate.effectiveTrials, 263);
});

test("repeats: the mean of per-case rates, its interval from the spread of the cases", () => {
  // Cases that pass all or nothing: 10 trials tell no more than one, so the interval is Wilson's over cases.
  const allOrNothing = passRateInterval(cases([[10, 10], [10, 10], [10, 10], [0, 10], [10, 10], [0, 10], [10, 10], [10, 10]]));
  assert.equal(allOrNothing.method, "clustered");
  assert.equal(allOrNothing.rate, 6 / 8);
  assert.ok(Math.abs(allOrNothing.effectiveTrials - 8) < 1e-9);
  const [l, h] = wilsonInterval(6, 8);
  assert.ok(Math.abs(allOrNothing.interval[0] - l) < 1e-9 && Math.abs(allOrNothing.interval[1] - h) < 1e-9);
  // Every case at the same rate: no spread between cases, so the trials count as independent.
  const same = passRateInterval(cases([[7, 10], [7, 10], [7, 10], [7, 10]]));
  assert.equal(same.effectiveTrials, 40);
  near(same.interval, wilsonInterval(28, 40));
  // Every trial passed: [n_eff / (n_eff + z^2), 1] with the trials counted, as Wilson's.
  const perfect = passRateInterval(cases([[5, 5], [5, 5], [5, 5]]));
  near(perfect.interval, wilsonInterval(15, 15));
  // The mean of rates, not pooled trials: 1/1 and 0/9 is 0.5, not 0.1.
  assert.equal(passRateInterval(cases([[1, 1], [0, 9]])).rate, 0.5);
});

test("edges: no cases or no trials give rate 0 and [0, 1]; cases without trials are left out; bad counts are errors", () => {
  assert.deepEqual(passRateInterval([]), { rate: 0, interval: [0, 1], method: "wilson", cases: 0, trials: 0, effectiveTrials: 0, standardError: 0 });
  assert.equal(passRateInterval(cases([[0, 0], [3, 3]])).cases, 1);
  assert.throws(() => passRateInterval(cases([[4, 3]])), /need 0 <= passed <= trials, got 4 of 3/);
});

test("property: inside [0, 1] around the rate; effective trials between the cases and the trials; wider than Wilson over trials", () => {
  const random = seededRandom(11);
  for (let i = 0; i < 500; i++) {
    const run = Array.from({ length: 2 + Math.floor(random() * 60) }, () => {
      const trials = 1 + Math.floor(random() * 12);
      const p = random() < 0.5 ? random() : 0.9 + random() * 0.1;
      let passed = 0;
      for (let t = 0; t < trials; t++) if (random() < p) passed++;
      return { passed, trials };
    });
    const e = passRateInterval(run);
    assert.ok(0 <= e.interval[0] && e.interval[0] <= e.rate + 1e-12 && e.rate <= e.interval[1] + 1e-12 && e.interval[1] <= 1);
    const independent = (run.length * run.length) / run.reduce((s, c) => s + 1 / c.trials, 0);
    assert.ok(e.effectiveTrials >= run.length - 1e-9 && e.effectiveTrials <= independent + 1e-9, `n_eff ${e.effectiveTrials} outside [${run.length}, ${independent}]`);
  }
});

test("property: the clustered interval covers the suite's mean pass rate about as often as it says", () => {
  // A suite of 60 cases whose rates differ (the super-population of Miller 2024), each run 8 times.
  const random = seededRandom(2024);
  let covered = 0;
  const runs = 1000;
  for (let r = 0; r < runs; r++) {
    const rates = Array.from({ length: 60 }, () => (random() < 0.7 ? 0.95 : random()));
    const truth = 0.7 * 0.95 + 0.3 * 0.5;
    const run = rates.map((p) => {
      let passed = 0;
      for (let t = 0; t < 8; t++) if (random() < p) passed++;
      return { passed, trials: 8 };
    });
    const [l, h] = passRateInterval(run).interval;
    if (l <= truth && truth <= h) covered++;
  }
  assert.ok(covered / runs > 0.92 && covered / runs < 0.98, `coverage ${covered / runs}`);
});
