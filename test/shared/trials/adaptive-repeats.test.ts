// The adaptive-repeats stopping rule (shared/trials/adaptive-repeats.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { adaptiveStep, type AdaptiveRule } from "../../../shared/trials/adaptive-repeats.ts";
import { zForConfidence } from "../../../shared/stats/normal.ts";
import { wilsonInterval } from "../../../shared/stats/wilson.ts";
import { DEFAULT_ADAPTIVE_CONFIDENCE } from "../../../shared/defaults.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

const RULE: AdaptiveRule = { min: 3, max: 20, passRate: 0.8, confidence: DEFAULT_ADAPTIVE_CONFIDENCE };

/** Runs a case whose trials come from `outcome(i)` through the rule; returns the trials it ran and the last step. */
function play(rule: AdaptiveRule, outcome: (i: number) => boolean) {
  let passed = 0;
  let trials = 0;
  const batches: number[] = [];
  for (;;) {
    const step = adaptiveStep(passed, trials, rule);
    if (step.done) return { trials, passed, step, batches };
    batches.push(step.next);
    for (let k = 0; k < step.next; k++) if (outcome(trials++)) passed++;
  }
}

test("every case runs MIN first; a case failing every trial stops there, decided", () => {
  assert.deepEqual(adaptiveStep(0, 0, RULE).next, 3);
  const run = play(RULE, () => false);
  assert.equal(run.trials, 3);
  assert.deepEqual(run.step, { ...run.step, done: true, passed: false, decided: true, reason: "cleared" });
});

test("a case passing every trial stops as soon as its interval clears R: the fewest n with n / (n + z^2) >= 0.8", () => {
  const z = zForConfidence(DEFAULT_ADAPTIVE_CONFIDENCE);
  const expected = Math.ceil((0.8 * z * z) / 0.2 - 1e-9);
  const run = play(RULE, () => true);
  assert.equal(run.trials, expected);
  assert.deepEqual(run.batches, [3, expected - 3], "one batch straight to the first count that can clear");
  assert.equal(run.step.decided, true);
  assert.ok(wilsonInterval(expected, expected, DEFAULT_ADAPTIVE_CONFIDENCE)[0] >= 0.8);
  assert.ok(wilsonInterval(expected - 1, expected - 1, DEFAULT_ADAPTIVE_CONFIDENCE)[0] < 0.8);
  // At the reports' 95% it would take 16 trials.
  assert.equal(play({ ...RULE, confidence: 0.95 }, () => true).trials, 16);
});

test("a case that stays near R runs to MAX and is judged on its point estimate, undecided", () => {
  // Fails the first of every 5: its rate sits on R, its interval never clears it, and the last
  // trial still decides (15 passes of 19 could end at 16 of 20 or 15 of 20).
  const run = play(RULE, (i) => i % 5 !== 0);
  assert.equal(run.trials, 20);
  assert.deepEqual(run.step, { ...run.step, done: true, passed: true, decided: false, reason: "max" });
  assert.equal(run.step.rate, 0.8);
});

test("a verdict the remaining trials cannot change stops the case (settled)", () => {
  // 5 failures of 20 allowed at most 4: failed whatever comes, even if the interval still holds R.
  const step = adaptiveStep(10, 15, { ...RULE, confidence: 0.999 });
  assert.equal(step.done, true);
  assert.equal(step.reason, "settled");
  assert.equal(step.passed, false);
  assert.equal(step.decided, false);
});

test("R = 1 (every trial must pass): one failure stops a case, decided; a passing case runs to MAX", () => {
  const strict: AdaptiveRule = { ...RULE, min: 3, max: 10, passRate: 1 };
  const failing = play(strict, (i) => i !== 1);
  assert.equal(failing.trials, 3);
  assert.equal(failing.step.passed, false);
  assert.equal(failing.step.decided, true);
  const passing = play(strict, () => true);
  assert.equal(passing.trials, 10);
  assert.deepEqual(passing.step, { ...passing.step, passed: true, decided: false, reason: "max" });
  // R = 0: every case passes after MIN.
  assert.equal(play({ ...RULE, min: 2, max: 9, passRate: 0 }, () => false).trials, 2);
});

test("maxBatch caps a batch; MIN = MAX is a fixed repeat", () => {
  const capped = play({ ...RULE, maxBatch: 1 }, () => true);
  assert.ok(capped.batches.slice(1).every((b) => b === 1));
  assert.equal(play({ ...RULE, min: 5, max: 5 }, (i) => i < 4).trials, 5);
});

test("bad rules and counts name the field and the value", () => {
  assert.throws(() => adaptiveStep(0, 0, { ...RULE, min: 5, max: 3 }), /max must be an integer >= min \(5\), got 3/);
  assert.throws(() => adaptiveStep(0, 0, { ...RULE, min: 0, max: 3 }), /min must be an integer >= 1, got 0/);
  assert.throws(() => adaptiveStep(0, 0, { ...RULE, min: 1, max: 3, passRate: 1.5 }), /passRate must be between 0 and 1, got 1.5/);
  assert.throws(() => adaptiveStep(0, 0, { ...RULE, confidence: 1 }), /confidence must be between 0 and 1 \(exclusive\), got 1/);
  assert.throws(() => adaptiveStep(0, 0, { ...RULE, maxBatch: 0 }), /maxBatch must be an integer >= 1, got 0/);
  assert.throws(() => adaptiveStep(4, 3, RULE), /passed must be an integer in 0..3, got 4/);
  assert.throws(() => adaptiveStep(0, 21, RULE), /trials must be an integer in 0..20, got 21/);
});

test("property: never past MAX, at least MIN; a settled or cleared verdict is the verdict at MAX of the same trials", () => {
  const random = seededRandom(2028);
  for (let i = 0; i < 3000; i++) {
    const min = 1 + Math.floor(random() * 5);
    const max = min + Math.floor(random() * 25);
    const rule: AdaptiveRule = { min, max, passRate: [0.5, 0.8, 0.9, 1][Math.floor(random() * 4)]!, confidence: 0.5 + random() * 0.49 };
    const p = random();
    const trials = Array.from({ length: max }, () => random() < p);
    const run = play(rule, (k) => trials[k]!);
    assert.ok(run.trials >= min && run.trials <= max);
    assert.ok(run.batches.every((b) => b >= 1));
    assert.equal(run.step.passed, run.passed / run.trials >= rule.passRate - 1e-12);
    if (run.step.reason === "settled") {
      // Whatever the rest had been, the verdict at MAX is this one.
      const best = (run.passed + (max - run.trials)) / max >= rule.passRate - 1e-12;
      const worst = run.passed / max >= rule.passRate - 1e-12;
      assert.equal(best, run.step.passed);
      assert.equal(worst, run.step.passed);
    }
  }
});
