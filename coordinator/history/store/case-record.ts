import type { ErrorKind } from "../../../shared/result/error-kind.ts";
import type { CaseResultJSON } from "../../../shared/result/result-json.ts";
import type { CaseResultData, CaseUsage, ReliabilityDetails, ScoreData } from "../../../shared/wire/result-data.ts";

/**
 * A case result as the results store hands it back ({@link CaseRecord}), and one standalone
 * AgentAsJudgeEval evaluation ({@link JudgeEvaluationRecord}). Types only.
 */

/** The reliability check's details, as recorded (its verdict is the record's `reliabilityPassed`). */
export type RecordedReliability = Omit<ReliabilityDetails, "passed">;

/**
 * One case result as read back: every key of the JSON report, plus what the report leaves out.
 * The fields a column holds as is are the result data's (shared/wire/result-data.ts); a row
 * differs where the store keys, flattens or serialises: `runId`, the recorded `passed` verdict,
 * the score and the usage as columns of their own, lists read back from JSON columns.
 */
export interface CaseRecord
  extends Pick<
      CaseResultData,
      | "index"
      | "name"
      | "agentId"
      | "teamId"
      | "sessionId"
      | "durationSeconds"
      | "judgePassed"
      | "judgeReason"
      | "judgeScore"
      | "reliabilityPassed"
      | "output"
      | "timedOut"
      | "skipped"
      | "error"
      | "attempts"
      | "worker"
    >,
    CaseUsage {
  runId: string;
  /** From a JSON column: a fresh list. */
  tags: string[];
  /** `null` when the reliability check did not run. */
  reliability: RecordedReliability | null;
  /** From a JSON column: a fresh list. */
  toolsCalled: string[];
  /** The verdict as recorded (the report's `passed`). */
  passed: boolean;
  scoreValue: ScoreData["value"] | null;
  scorePassed: ScoreData["passed"] | null;
  scoreReason: string | null;
  scoreDetail: NonNullable<ScoreData["detail"]> | null;
  /** The case's JSON report entry exactly as `--json-output` wrote it. */
  report: CaseResultJSON;
  /** The case's id (a dataset row's), or null (read back always set; optional for records built by hand). */
  caseId?: string | null;
  /** The case's metadata (Exulu's fields under `exulu`), or null (as `caseId`). */
  metadata?: Record<string, unknown> | null;
  /** Why it failed (the report's `error_kind`), or null (as `caseId`; null too in runs recorded before it existed). */
  errorKind?: ErrorKind | null;
  /** The judge calls' tokens and cost (the agent's are the record's own usage fields), or null (as `caseId`). */
  judgeUsage?: { inputTokens: number | null; outputTokens: number | null; totalTokens: number | null; costUsd: number | null } | null;
  /**
   * The fingerprint of the checks that graded it (criteria, expected output and method, tool
   * expectations, scorer and eval-function identity, judge model), or null when unknown (runs
   * recorded before schema version 7; optional for records built by hand).
   */
  checksFingerprint?: string | null;
  /**
   * The case's input as text (a conversation one `role: content` line per message, at most 20,000
   * characters), or null when unknown (runs recorded before schema version 9; optional for
   * records built by hand).
   */
  input?: string | null;
  /** ISO 8601 UTC. */
  recordedAt: string;
}

/** One standalone AgentAsJudgeEval evaluation (a verdict, or a failure without one). */
export interface JudgeEvaluationRecord {
  position: number;
  input: string;
  output: string;
  criteria: string;
  score: number | null;
  reason: string | null;
  passed: boolean | null;
  /** Why there is no verdict (the judge call failed or answered something unusable). */
  failure: string | null;
}
