// runs in: both
import { round3 } from "../py-format.ts";
import { CaseResult } from "../result/result.ts";
import type { CaseUsage, ModelUsage, RepeatResultData } from "../wire/result-data.ts";

/**
 * `--repeat N`: folding the N runs of one case into the one entry the report keeps per case.
 * Pure; no I/O.
 */

/** The largest `--repeat`: past it the report of one case would hold too many runs to read. */
export const MAX_REPEAT = 1000;

/** One run as a repeat entry. */
export function toRepeatData(run: CaseResult, repeat: number): RepeatResultData {
  return {
    repeat,
    passed: run.passed,
    sessionId: run.sessionId,
    durationSeconds: run.durationSeconds,
    judgePassed: run.judgePassed,
    judgeReason: run.judgeReason,
    judgeScore: run.judgeScore,
    reliabilityPassed: run.reliabilityPassed,
    output: run.output,
    toolsCalled: [...run.toolsCalled],
    timedOut: run.timedOut,
    skipped: run.skipped,
    error: run.error,
    errorKind: run.errorKind,
    score: run.score ? { value: run.score.value, passed: run.score.passed, reason: run.score.reason ?? null } : null,
    expectations: run.expectations ?? null,
    attempts: run.attempts,
    worker: run.worker,
    reliabilityReason: run.reliability?.reason ?? null,
  };
}

/**
 * The runs of one case (in repeat order) as one result: its top-level fields are those of the
 * first run that failed (else the first run), so what the entry shows explains its verdict; its
 * duration is the sum of the runs'; `repeats` lists every run. The case passes only when every
 * run passed; `passRate` and `passAtK` say how often they did.
 */
export function aggregateRepeats(runs: readonly CaseResult[]): CaseResult {
  if (runs.length === 0) throw new RangeError("aggregateRepeats needs at least one run");
  const representative = runs.find((r) => !r.passed) ?? runs[0]!;
  const result = CaseResult.fromData(representative.toData());
  result.durationSeconds = round3(runs.reduce((sum, r) => sum + r.durationSeconds, 0));
  result.repeats = runs.map((r, i) => toRepeatData(r, i + 1));
  // Any run that ended cancelled stops the suite (spec M1), whichever run the entry shows.
  if (runs.some((r) => r.runStatus === "cancelled")) result.runStatus = "cancelled";
  // A case costs what all its runs cost (the budget and the report count the case, not one run).
  result.usage = sumUsages(runs.map((r) => r.usage));
  // The response cache answered every run's model calls: the case's counts are their sums.
  const cached = runs.filter((r) => r.modelCache);
  result.modelCache = cached.length > 0 ? { hits: cached.reduce((n, r) => n + r.modelCache!.hits, 0), misses: cached.reduce((n, r) => n + r.modelCache!.misses, 0) } : null;
  return result;
}

/** A number field summed over runs: null only when no run reported it. */
function sumField(values: ReadonlyArray<number | null | undefined>): number | null {
  let sum: number | null = null;
  for (const v of values) if (typeof v === "number") sum = (sum ?? 0) + v;
  return sum;
}

/** One side's usage summed; its cost is null when a run that used tokens has no cost (the price table fills it in from the tokens). */
function sumSide(sides: ReadonlyArray<ModelUsage | null | undefined>): ModelUsage | null {
  const present = sides.filter((s): s is ModelUsage => Boolean(s));
  if (present.length === 0) return null;
  const costUnknown = present.some((s) => s.costUsd === null && ((s.totalTokens ?? 0) > 0 || s.inputTokens !== null));
  return {
    inputTokens: sumField(present.map((s) => s.inputTokens)),
    outputTokens: sumField(present.map((s) => s.outputTokens)),
    totalTokens: sumField(present.map((s) => s.totalTokens)),
    costUsd: costUnknown ? null : sumField(present.map((s) => s.costUsd)),
    model: present.find((s) => s.model)?.model ?? null,
  };
}

/** The usage of a case's runs together (agent and judge side by side); null when no run reported any. */
export function sumUsages(usages: ReadonlyArray<CaseUsage | null | undefined>): CaseUsage | null {
  const agent = sumSide(usages);
  if (!agent) return null;
  const judge = sumSide(usages.map((u) => u?.judge));
  return { ...agent, ...(judge ? { judge } : {}) };
}
