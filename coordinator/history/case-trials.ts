import type { CaseResultJSON } from "../../shared/result/result-json.ts";
import type { CaseRecord } from "./store/case-record.ts";
import type { SideTrials } from "./significance.ts";

/**
 * A case of a run as the significance-aware `compare`, `--fail-on-regression` and `flaky` read
 * it: its trials (each repeat of `--repeat`, or its one run), the infrastructure errors among
 * them left aside, its mean score, and the fingerprint of the checks that graded it. Pure; no I/O.
 */

/** What is read of a case's JSON report entry (a recorded one, or the current run's). */
export type TrialReport = Pick<CaseResultJSON, "passed" | "skipped" | "error_kind" | "judge_score" | "score_value"> & {
  repeats: ReadonlyArray<Pick<CaseResultJSON, "passed" | "skipped" | "error_kind" | "judge_score" | "score_value">> | null;
};

/** One case of one run, for the comparison. */
export interface TrialCase {
  name: string;
  /** The dataset row's id, or null (cases pair by it when both have one, else by name). */
  caseId: string | null;
  trials: Required<SideTrials>;
  /** The mean over its trials of the judge's score (1-10), else the scorer's value (0-1); null with neither. */
  score: number | null;
  /** The fingerprint of its checks, or null when unknown (runs recorded before the store kept it). */
  checks: string | null;
}

/**
 * The trials of one report entry: a skipped trial did not run (not counted); one that failed
 * with `error_kind: infra` is counted apart, as it says nothing of the agent.
 */
export function trialsOfReport(report: TrialReport): Required<SideTrials> {
  const runs = report.repeats && report.repeats.length > 0 ? report.repeats : [report];
  const out = { passed: 0, failed: 0, infra: 0 };
  for (const r of runs) {
    if (r.skipped) continue;
    if (r.passed) out.passed++;
    else if (r.error_kind === "infra") out.infra++;
    else out.failed++;
  }
  return out;
}

/** The mean score of a report entry's trials (see {@link TrialCase.score}). */
export function scoreOfReport(report: TrialReport): number | null {
  const runs = report.repeats && report.repeats.length > 0 ? report.repeats : [report];
  const scores = runs.filter((r) => !r.skipped).map((r) => r.judge_score ?? r.score_value).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
  return scores.length > 0 ? scores.reduce((s, v) => s + v, 0) / scores.length : null;
}

/** A case as the comparison reads it, from its report entry. */
export function trialCase(name: string, caseId: string | null, report: TrialReport, checks: string | null): TrialCase {
  return { name, caseId, trials: trialsOfReport(report), score: scoreOfReport(report), checks };
}

/** A recorded case as the comparison reads it. */
export function trialCaseOfRecord(r: CaseRecord): TrialCase {
  // Records written before `report` kept `repeats` read as one trial.
  const report: TrialReport = { ...r.report, repeats: r.report?.repeats ?? null, passed: r.passed, skipped: r.skipped };
  return trialCase(r.name, r.caseId ?? null, report, r.checksFingerprint ?? null);
}
