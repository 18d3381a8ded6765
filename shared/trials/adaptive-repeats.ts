// runs in: both
import type { Interval } from "../stats/interval.ts";
import { zForConfidence } from "../stats/normal.ts";
import { wilsonAt } from "../stats/wilson.ts";

/**
 * Adaptive repeats (`--repeat MIN..MAX` with `--case-pass-rate R`): how many more trials a case
 * needs. Every case runs MIN trials; a case whose Wilson interval still contains R runs more, one
 * batch at a time, until its interval clears R (decided) or it reaches MAX (then it is judged on
 * its point estimate, rate >= R, and marked undecided). A case also stops as soon as its verdict
 * at MAX is settled whatever the remaining trials give (a case with more than MAX (1 - R)
 * failures can no longer pass), so a case that fails every trial, or passes every one, stops as
 * soon as the rule allows. Pure: the runner asks after each batch, with the counts so far.
 *
 * A batch is the fewest trials after which the case could stop (its interval could clear R, or
 * its verdict settle) if they all went one way: fewer could not change anything, more might be
 * wasted. `maxBatch` caps it (e.g. to the slots free in the fleet).
 *
 * The interval's confidence is the run's `adaptiveConfidence` (compileRunSettings; 0.75 by
 * default): lower than the reports' 0.95 on purpose (see DEFAULT_ADAPTIVE_CONFIDENCE in
 * shared/defaults.ts and bench/verdict-simulation.ts for what it costs and saves).
 */

/** The rule of an adaptive run. */
export interface AdaptiveRule {
  /** Trials every case runs first (>= 1). */
  min: number;
  /** Trials a case never exceeds (>= min). */
  max: number;
  /** R: a case passes when at least this fraction of its trials pass (0-1). */
  passRate: number;
  /** Two-sided confidence of the stopping interval, strictly between 0 and 1 (a run's `adaptiveConfidence`). */
  confidence: number;
  /** The largest batch asked for at once; default: no cap below MAX. */
  maxBatch?: number;
}

/** Why a case stops, or why it goes on. */
export type AdaptiveReason =
  /** Fewer than MIN trials so far: run the rest of them. */
  | "min"
  /** The interval still contains R: run another batch. */
  | "undecided"
  /** The interval cleared R: stop, decided. */
  | "cleared"
  /** The verdict at MAX can no longer change: stop. */
  | "settled"
  /** MAX trials ran: stop, judged on the point estimate. */
  | "max";

/** What to do with a case after its latest batch. */
export interface AdaptiveStep {
  /** No more trials for this case. */
  done: boolean;
  /** Trials to run next (0 when done). */
  next: number;
  /** The verdict on the trials so far: pass rate >= R. Final when `done`. */
  passed: boolean;
  /** The stopping interval is clear of R (false for a case stopped at MAX, or settled, with R inside it). */
  decided: boolean;
  reason: AdaptiveReason;
  /** The pass rate so far (`NaN` before the first trial). */
  rate: number;
  /** The stopping interval (Wilson at the rule's confidence). */
  interval: Interval;
}

/** Checks `rule`, naming the field and the value; returns it with its defaults. */
export function checkAdaptiveRule(rule: AdaptiveRule): Required<AdaptiveRule> {
  const { min, max, passRate } = rule;
  if (!Number.isInteger(min) || min < 1) throw new RangeError(`adaptive repeats: min must be an integer >= 1, got ${min}`);
  if (!Number.isInteger(max) || max < min) throw new RangeError(`adaptive repeats: max must be an integer >= min (${min}), got ${max}`);
  if (!(passRate >= 0 && passRate <= 1)) throw new RangeError(`adaptive repeats: passRate must be between 0 and 1, got ${passRate}`);
  const confidence = rule.confidence;
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`adaptive repeats: confidence must be between 0 and 1 (exclusive), got ${confidence}`);
  const maxBatch = rule.maxBatch ?? max;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`adaptive repeats: maxBatch must be an integer >= 1, got ${maxBatch}`);
  return { min, max, passRate, confidence, maxBatch };
}

/** Passes needed out of `max` for rate >= R (the tiny slack absorbs float rounding: 16/20 meets 0.8). */
function passesNeeded(max: number, passRate: number): number {
  return Math.ceil(max * passRate - 1e-9);
}

/** Whether `passed` of `trials` stops the case under the rule, and why. */
function stopReason(passed: number, trials: number, rule: Required<AdaptiveRule>, z: number): { reason: AdaptiveReason; interval: Interval } {
  const interval = wilsonAt(passed / trials, trials, z);
  if (interval[0] >= rule.passRate || interval[1] < rule.passRate) return { reason: "cleared", interval };
  if (trials >= rule.max) return { reason: "max", interval };
  const needed = passesNeeded(rule.max, rule.passRate);
  if (passed >= needed || trials - passed > rule.max - needed) return { reason: "settled", interval };
  return { reason: "undecided", interval };
}

/**
 * The next step for a case that has run `trials` trials of which `passed` passed. Throws a
 * RangeError on a bad rule (naming the field) or counts outside 0 <= passed <= trials <= max.
 */
export function adaptiveStep(passed: number, trials: number, rule: AdaptiveRule): AdaptiveStep {
  const r = checkAdaptiveRule(rule);
  if (!Number.isInteger(trials) || trials < 0 || trials > r.max) throw new RangeError(`adaptive repeats: trials must be an integer in 0..${r.max}, got ${trials}`);
  if (!Number.isInteger(passed) || passed < 0 || passed > trials) throw new RangeError(`adaptive repeats: passed must be an integer in 0..${trials}, got ${passed}`);
  const z = zForConfidence(r.confidence);
  if (trials < r.min) {
    const interval: Interval = trials === 0 ? [0, 1] : wilsonAt(passed / trials, trials, z);
    return { done: false, next: r.min - trials, passed: trials > 0 && passed / trials >= r.passRate - 1e-12, decided: false, reason: "min", rate: trials === 0 ? Number.NaN : passed / trials, interval };
  }
  const rate = passed / trials;
  const verdict = rate >= r.passRate - 1e-12;
  const { reason, interval } = stopReason(passed, trials, r, z);
  if (reason !== "undecided") return { done: true, next: 0, passed: verdict, decided: reason === "cleared", reason, rate, interval };
  // The fewest trials after which the case could stop, if they all passed or all failed.
  let next = r.max - trials;
  for (let k = 1; k < r.max - trials; k++) {
    if (stopReason(passed + k, trials + k, r, z).reason !== "undecided" || stopReason(passed, trials + k, r, z).reason !== "undecided") {
      next = k;
      break;
    }
  }
  return { done: false, next: Math.min(next, r.maxBatch), passed: verdict, decided: false, reason: "undecided", rate, interval };
}

/**
 * Why an adaptive case stopped, as its result records it: the rule's reasons, or `stopped` when
 * the run stopped it first (a budget spent, a cancel, a deadline) with the rule still asking for
 * more.
 */
export type AdaptiveStop = "cleared" | "settled" | "max" | "stopped";

/** What an adaptive case's result records of its stop (`decided` and `adaptive_stop` in the JSON report). */
export interface AdaptiveMark {
  /** The stopping interval cleared the pass rule: the verdict is decided, not a point estimate. */
  decided: boolean;
  stop: AdaptiveStop;
}

/** The trials of a case that passed. */
export function passedTrials(trials: readonly { readonly passed: boolean }[]): number {
  let n = 0;
  for (const t of trials) if (t.passed) n++;
  return n;
}

/**
 * The mark of a case from its trials (in any form with `passed` and `skipped`): a trial skipped
 * before it started (a cancel) is not one that ran.
 */
export function adaptiveMarkOf(trials: readonly { readonly passed: boolean; readonly skipped: boolean }[], rule: AdaptiveRule): AdaptiveMark {
  let ran = 0;
  for (const t of trials) if (!t.skipped) ran++;
  return adaptiveMark(passedTrials(trials), ran, rule);
}

/**
 * The mark of a case whose trials are over: `passed` of `trials` under `rule`. Trials past MAX
 * (none are planned) count as MAX. Throws a RangeError on a bad rule.
 */
export function adaptiveMark(passed: number, trials: number, rule: AdaptiveRule): AdaptiveMark {
  const r = checkAdaptiveRule(rule);
  const n = Math.min(trials, r.max);
  const step = adaptiveStep(Math.min(passed, n), n, r);
  if (!step.done) return { decided: false, stop: "stopped" };
  return { decided: step.decided, stop: step.reason as AdaptiveStop };
}
