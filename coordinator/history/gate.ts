import { trialCaseOfRecord, type TrialCase } from "./case-trials.ts";
import { flakiness } from "./flaky.ts";
import { pairRuns } from "./paired-runs.ts";
import { compareSignificance, type SignificanceResult } from "./significance.ts";
import type { CaseRecord } from "./store/case-record.ts";

/**
 * `--fail-on-regression`'s decision: the run against its baseline (and the runs before it), by
 * the significance-aware comparison (significance.ts): it fails only on a significant drop of
 * the pass rate or a significant regression of a case, at `alpha` for both together. Pure; no I/O.
 */

/** What the gate reads. */
export interface GateInput {
  /** The baseline run's recorded cases. */
  baseline: readonly CaseRecord[];
  /** The runs before the baseline (newest first), their recorded cases. */
  history: ReadonlyArray<readonly CaseRecord[]>;
  /** The run just made. */
  current: readonly TrialCase[];
  /** The gate's false-alarm bound, 0 < alpha < 1. */
  alpha: number;
  /** Two-sided confidence of the intervals shown (and of `flaky`'s). */
  confidence: number;
  /** `--quarantine-flaky`: cases flaky over the baseline and its history are reported, not gated. */
  quarantineFlaky: boolean;
}

/** The gate's decision. */
export interface GateDecision {
  /** Whether the run fails the gate (exit 1). */
  failed: boolean;
  result: SignificanceResult;
  /** Cases only in the baseline, or only in this run (not compared). */
  onlyInBaseline: string[];
  onlyNow: string[];
  /** The quarantined cases (flaky over the baseline and its history), in name order. */
  quarantined: string[];
}

/** Decides the gate; see {@link GateInput}. */
export function decideGate(input: GateInput): GateDecision {
  const quarantined = new Set<string>();
  if (input.quarantineFlaky) {
    // Oldest first, as `flaky` reads its window: the history, then the baseline.
    const window = [...input.history].reverse().concat([input.baseline]);
    for (const row of flakiness(
      window.map((cases, i) => ({ runId: String(i), cases })),
      input.confidence,
    )) {
      if (row.flaky) quarantined.add(row.name);
    }
  }
  const paired = pairRuns({
    a: input.baseline.map(trialCaseOfRecord),
    b: input.current,
    history: input.history.map((cases) => cases.map(trialCaseOfRecord)),
    quarantined,
  });
  const result = compareSignificance(paired.cases, { alpha: input.alpha, confidence: input.confidence });
  return { failed: result.verdict === "regressed", result, onlyInBaseline: paired.onlyInA, onlyNow: paired.onlyInB, quarantined: [...quarantined].sort() };
}
