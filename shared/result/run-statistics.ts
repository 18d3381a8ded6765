// runs in: both
import { CONVENTIONAL_CONFIDENCE } from "../stats/conventional-levels.ts";
import type { Interval } from "../stats/interval.ts";
import { clusteredMeanInterval, type MeanEstimate } from "../stats/mean-interval.ts";
import { passRateInterval, type CaseTrials } from "../stats/pass-rate.ts";
import { wilsonInterval } from "../stats/wilson.ts";
import { meanPassHatK } from "../trials/pass-at-k.ts";
import type { RepeatResultData, ScoreData } from "../wire/result-data.ts";

/**
 * The statistics of a run that a report prints beside its rates: the interval of the pass rate
 * (Wilson's when each case ran once, cluster-robust over cases with repeats: shared/stats/pass-rate.ts),
 * pass^k beside pass@k, and the means of the numeric judge's score and the scorers' values with
 * their intervals (cases as clusters). Computed from the case results only, so a report rebuilt
 * from the store computes the same figures. Pure; no I/O.
 */

/** The scale of the numeric judge's score: an interval around its mean is clipped to it. */
export const JUDGE_SCORE_BOUNDS: Interval = [1, 10];
/** The scale of a scorer's value. */
export const SCORE_VALUE_BOUNDS: Interval = [0, 1];

/** What the statistics read of one case: its verdict, its repeats, and its scores. */
export interface StatisticsCase {
  readonly passed: boolean;
  readonly repeats?: readonly Pick<RepeatResultData, "passed" | "judgeScore" | "score">[] | null;
  readonly judgeScore: number | null;
  readonly score: Pick<ScoreData, "value"> | null;
}

/** A mean score with its interval. */
export interface MeanWithInterval {
  /** The mean over cases of each case's mean (with one trial each: the plain mean). */
  mean: number;
  /** Its Student t interval over the case means, clipped to the score's scale; the whole scale with fewer than two cases. */
  interval: Interval;
  /** Cases that had the score. */
  cases: number;
}

/** A run's statistics at one confidence level. */
export interface RunStatistics {
  /** The two-sided confidence of every interval here (0-1, exclusive). */
  confidence: number;
  /**
   * The pass rate the interval is around: passed / total when each case ran once (the summary's
   * `pass_rate`); with repeats the mean over cases of each case's pass rate (passed trials over trials).
   */
  trialPassRate: number;
  /** The interval of `trialPassRate`; [0, 1] for an empty run. */
  passRateInterval: Interval;
  /** `wilson` when every case ran once, `clustered` with repeats. */
  method: "wilson" | "clustered";
  /** With repeats: the mean over cases of pass^k, k = 1 up to the fewest trials of a case; null otherwise. */
  passHatK: Record<string, number> | null;
  /** The numeric judge's score (1-10), or null when no case has one. */
  judgeScore: MeanWithInterval | null;
  /** The scorers' value (0-1), or null when no case has one. */
  scoreValue: MeanWithInterval | null;
}

/**
 * One case's trials: with repeats every repeat counts (a skipped or errored repeat as a failed
 * trial, as the case's `pass_rate` counts it); without, the case is one trial. So with one trial
 * each the run's interval is around the summary's `pass_rate` exactly.
 */
export function caseTrials(c: Pick<StatisticsCase, "passed" | "repeats">): CaseTrials {
  if (c.repeats && c.repeats.length > 0) return { passed: c.repeats.filter((r) => r.passed).length, trials: c.repeats.length };
  return { passed: c.passed ? 1 : 0, trials: 1 };
}

/** With repeats: the Wilson interval of a case's pass rate at `confidence` (default {@link CONVENTIONAL_CONFIDENCE}); null without repeats. */
export function casePassRateInterval(c: Pick<StatisticsCase, "passed" | "repeats">, confidence: number = CONVENTIONAL_CONFIDENCE): Interval | null {
  if (!c.repeats || c.repeats.length === 0) return null;
  const t = caseTrials(c);
  return wilsonInterval(t.passed, t.trials, confidence);
}

/** The statistics of a run's cases at `confidence` (two-sided, default {@link CONVENTIONAL_CONFIDENCE}). Throws a RangeError on a confidence outside (0, 1). */
export function runStatistics(cases: readonly StatisticsCase[], confidence: number = CONVENTIONAL_CONFIDENCE): RunStatistics {
  const trials = cases.map(caseTrials);
  const estimate = passRateInterval(trials, confidence);
  const repeated = cases.some((c) => c.repeats && c.repeats.length > 0);
  return {
    confidence,
    trialPassRate: estimate.rate,
    passRateInterval: estimate.interval,
    method: estimate.method,
    passHatK: repeated ? meanPassHatK(trials) : null,
    judgeScore: meanOf(cases, (c) => scoresOf(c, (r) => r.judgeScore, c.judgeScore), JUDGE_SCORE_BOUNDS, confidence),
    scoreValue: meanOf(cases, (c) => scoresOf(c, (r) => r.score?.value ?? null, c.score?.value ?? null), SCORE_VALUE_BOUNDS, confidence),
  };
}

/** A case's scores: one per repeat that has one, else the case's own (a case without repeats). */
function scoresOf(c: StatisticsCase, pick: (r: Pick<RepeatResultData, "judgeScore" | "score">) => number | null | undefined, own: number | null): number[] {
  if (c.repeats && c.repeats.length > 0) return c.repeats.map(pick).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  return typeof own === "number" && Number.isFinite(own) ? [own] : [];
}

function meanOf(cases: readonly StatisticsCase[], scores: (c: StatisticsCase) => number[], bounds: Interval, confidence: number): MeanWithInterval | null {
  const groups = cases.map(scores).filter((g) => g.length > 0);
  if (groups.length === 0) return null;
  const m: MeanEstimate = clusteredMeanInterval(groups, { bounds, confidence });
  return { mean: m.mean, interval: m.interval, cases: m.n };
}
