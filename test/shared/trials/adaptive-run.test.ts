// Adaptive repeats where a case runs in one process (shared/trials/adaptive-run.ts, through
// executeCase as the inline and thread runners call it): MIN trials, then the batches the stopping
// rule asks for, never past MAX; a stop by the run (trialsAllowed 0, a cancel) is marked `stopped`;
// the folded result carries every trial in order, its verdict, its mark and its summed usage.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { executeCase } from "../../../shared/trials/execute-case.ts";
import { adaptiveMark, adaptiveStep, type AdaptiveRule } from "../../../shared/trials/adaptive-repeats.ts";
import { sumUsages } from "../../../shared/trials/fold-repeats.ts";
import { applyCasePassRule } from "../../../shared/trials/case-pass-rule.ts";
import { CaseResult } from "../../../shared/result/result.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

const SETTINGS = { repeat: 3, repeatMax: 20, retries: 0, adaptiveConfidence: 0.75 };
const RULE: AdaptiveRule = { min: 3, max: 20, passRate: 0.8, confidence: 0.75 };
const trial = (passed: boolean, tokens = 0): CaseResult =>
  new CaseResult({ name: "c", judgePassed: passed, attempts: 1, ...(tokens ? { usage: { inputTokens: tokens, outputTokens: 0, totalTokens: tokens, costUsd: null, model: "m" } } : {}) });
const base = { timeoutSeconds: 120, limit: null, shell: () => new CaseResult({ name: "c" }), passRate: 0.8 };

/** Runs a case whose trial `t` passes when `passes(t)`; returns the trials asked for, by batch. */
async function play(passes: (t: number) => boolean, extra: Partial<Parameters<typeof executeCase>[2]> = {}, settings = SETTINGS) {
  const asked: number[] = [];
  const outcome = await executeCase(settings, async (t) => (asked.push(t), { result: trial(passes(t), 10) }), { ...base, signal: new AbortController().signal, ...extra });
  // The run's rule, as the dispatch loop records it where results are collected.
  applyCasePassRule(outcome.result, null, 0.8);
  return { asked, result: outcome.result };
}

describe("adaptive repeats in one process", () => {
  test("a case that passes every trial stops once its interval clears the rule, decided, well before MAX", async () => {
    const { asked, result } = await play(() => true);
    assert.deepEqual(asked, [1, 2, 3, 4, 5, 6], "MIN, then one trial at a time until 6 of 6 clear 0.8 at 75%");
    assert.equal(result.passed, true);
    assert.deepEqual(result.adaptive, { decided: true, stop: "cleared" });
    assert.deepEqual(result.repeats!.map((r) => r.repeat), [1, 2, 3, 4, 5, 6]);
  });

  test("a case that fails every trial stops at MIN", async () => {
    const { asked, result } = await play(() => false);
    assert.deepEqual(asked, [1, 2, 3]);
    assert.equal(result.passed, false);
    assert.equal(result.adaptive!.decided, true);
  });

  test("the trials and verdict are those of the rule played on the same outcomes, for many seeded cases", async () => {
    const random = seededRandom(11);
    for (let i = 0; i < 60; i++) {
      const p = random();
      const outcomes = Array.from({ length: 20 }, () => random() < p);
      const { asked, result } = await play((t) => outcomes[t - 1]!);
      // The rule, by hand.
      let n = 0;
      let next = RULE.min;
      while (next > 0) {
        n += next;
        const step = adaptiveStep(outcomes.slice(0, n).filter(Boolean).length, n, RULE);
        next = step.done ? 0 : step.next;
      }
      assert.equal(asked.length, n, `case ${i} (p ${p.toFixed(2)})`);
      assert.ok(n >= 3 && n <= 20);
      const passed = outcomes.slice(0, n).filter(Boolean).length;
      assert.equal(result.passed, passed / n >= 0.8 - 1e-12);
      assert.deepEqual(result.adaptive, adaptiveMark(passed, n, RULE));
      assert.equal(result.usage!.totalTokens, 10 * n, "the case costs all its trials");
    }
  });

  test("trialsAllowed 0 (a spent budget) stops the case after MIN, marked stopped and undecided", async () => {
    const seen: Array<[number, number]> = [];
    const { asked, result } = await play(() => true, { trialsAllowed: (trials, wanted) => (seen.push([trials.length, wanted]), 0) });
    assert.deepEqual(asked, [1, 2, 3]);
    assert.deepEqual(seen, [[3, 3]], "asked with the trials so far and the batch the rule wants");
    assert.deepEqual(result.adaptive, { decided: false, stop: "stopped" });
    assert.equal(result.passed, true, "judged on the trials it has");
  });

  test("trialsAllowed smaller than the batch: the case runs what is allowed, then asks again", async () => {
    const { asked, result } = await play(() => true, { trialsAllowed: () => 1 });
    assert.deepEqual(asked, [1, 2, 3, 4, 5, 6], "one trial at a time");
    assert.deepEqual(result.adaptive, { decided: true, stop: "cleared" });
  });

  test("a cancel stops further batches; trials not started are skipped and not counted as run", async () => {
    const ctrl = new AbortController();
    const asked: number[] = [];
    const outcome = await executeCase(SETTINGS, async (t) => {
      asked.push(t);
      if (t === 3) ctrl.abort(new Error("cancelled"));
      return { result: trial(true) };
    }, { ...base, signal: ctrl.signal });
    assert.deepEqual(asked, [1, 2, 3]);
    assert.deepEqual(outcome.result.adaptive, { decided: false, stop: "stopped" });
  });

  test("MAX reached with the interval around the rule: judged on the point estimate, undecided", async () => {
    // Trials 4 and 8 fail: after 9 trials (7 passed) the verdict still hangs on the 10th, and 8 of 10 sits on 0.8.
    const { asked, result } = await play((t) => t !== 4 && t !== 8, {}, { ...SETTINGS, repeatMax: 10 });
    assert.equal(asked.length, 10);
    assert.equal(result.passed, true);
    assert.deepEqual(result.adaptive, { decided: false, stop: "max" });
  });

  test("a fixed repeat (repeatMax = repeat) is not adaptive: no mark", async () => {
    const { asked, result } = await play(() => true, {}, { ...SETTINGS, repeatMax: 3 });
    assert.deepEqual(asked, [1, 2, 3]);
    assert.equal(result.adaptive, null);
  });
});

describe("sumUsages", () => {
  test("tokens add up side by side; a cost unknown on any run that used tokens is unknown", () => {
    const u = (tokens: number, cost: number | null) => ({ inputTokens: tokens, outputTokens: 1, totalTokens: tokens + 1, costUsd: cost, model: "m", judge: { inputTokens: 2, outputTokens: 2, totalTokens: 4, costUsd: 0.5, model: "j" } });
    const s = sumUsages([u(10, 0.1), u(20, 0.2), null]);
    assert.equal(s!.totalTokens, 32);
    assert.equal(s!.inputTokens, 30);
    assert.ok(Math.abs(s!.costUsd! - 0.3) < 1e-12);
    assert.equal(s!.judge!.totalTokens, 8);
    assert.equal(s!.judge!.costUsd, 1);
    assert.equal(sumUsages([u(10, 0.1), u(5, null)])!.costUsd, null);
    assert.equal(sumUsages([null, undefined]), null);
  });
});
