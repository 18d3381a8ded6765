// runs in: both
import { usageTotals, type UsageTotals } from "../providers/prices.ts";
import type { CaseResultData } from "../wire/result-data.ts";
import type { ErrorKind } from "./error-kind.ts";
import { runStatistics, type RunStatistics, type StatisticsCase } from "./run-statistics.ts";

/**
 * Every figure a {@link SuiteResult} reports about its cases, computed in one walk over them
 * (issue 29): a spooled run's results are read back from a file, so each walk costs a read and a
 * parse per case, and the summary, the exit code and the reports read a dozen figures. Pure.
 */

/** The figures of a run's cases (see {@link tallyCases}). */
export interface SuiteTally {
  total: number;
  passed: number;
  skipped: number;
  /** Cases whose failure kind is `infra`. */
  infraErrors: number;
  /** Cases that did not pass and were not skipped. */
  failedRun: number;
  /** Of those, the ones whose failure kind is `infra`. */
  failedRunInfra: number;
  usage: UsageTotals;
  /** Cases that went through the response cache, and their hits and misses. */
  modelCache: { cases: number; hits: number; misses: number };
  /** Trials that ran (a skipped trial aside) and the cases marked `decided: false`. */
  trialsSpent: number;
  undecidedCases: number;
  /** Sums over cases of pass@k for k = 1..repeat (a case without runs adds 0); null for repeat <= 1. */
  passAtKSums: number[] | null;
  /** The statistics at the run's confidence, or why they could not be computed (a bad confidence). */
  statistics: RunStatistics | Error;
}

/** What the tally reads of a case: its data and the verdicts computed from it (a `CaseResult`). */
export type TalliedCase = Pick<CaseResultData, "skipped" | "usage" | "modelCache" | "repeats" | "adaptive" | "judgeScore" | "score"> & {
  readonly passed: boolean;
  readonly failureKind: ErrorKind | null;
  readonly passAtK: Record<string, number> | null;
};

/** One walk over `cases`: what each figure needs, nothing of the cases kept. */
export function tallyCases(cases: Iterable<TalliedCase>, repeat: number, confidence: number | undefined): SuiteTally {
  let total = 0;
  let passed = 0;
  let skipped = 0;
  let infraErrors = 0;
  let failedRun = 0;
  let failedRunInfra = 0;
  const cache = { cases: 0, hits: 0, misses: 0 };
  let trialsSpent = 0;
  let undecidedCases = 0;
  const sums: number[] | null = repeat > 1 ? new Array<number>(repeat).fill(0) : null;
  const usages: Array<TalliedCase["usage"]> = [];
  // What the statistics read of each case, without the rest of the case (its texts, its transcript).
  const stats: StatisticsCase[] = [];
  for (const r of cases) {
    total++;
    const ok = r.passed;
    const infra = r.failureKind === "infra";
    if (ok) passed++;
    if (r.skipped) skipped++;
    if (infra) infraErrors++;
    if (!ok && !r.skipped) {
      failedRun++;
      if (infra) failedRunInfra++;
    }
    usages.push(r.usage);
    if (r.modelCache) {
      cache.cases++;
      cache.hits += r.modelCache.hits;
      cache.misses += r.modelCache.misses;
    }
    trialsSpent += r.repeats?.filter((t) => !t.skipped).length ?? 0;
    if (r.adaptive && !r.adaptive.decided) undecidedCases++;
    if (sums) {
      const p = r.passAtK;
      if (p) for (let k = 1; k <= repeat; k++) sums[k - 1]! += p[String(k)] ?? 0;
    }
    stats.push({
      passed: ok,
      repeats: r.repeats ? r.repeats.map((t) => ({ passed: t.passed, judgeScore: t.judgeScore, score: t.score })) : null,
      judgeScore: r.judgeScore,
      score: r.score,
    });
  }
  let statistics: RunStatistics | Error;
  try {
    statistics = runStatistics(stats, confidence);
  } catch (err) {
    statistics = err instanceof Error ? err : new Error(String(err));
  }
  return { total, passed, skipped, infraErrors, failedRun, failedRunInfra, usage: usageTotals(usages), modelCache: cache, trialsSpent, undecidedCases, passAtKSums: sums, statistics };
}
