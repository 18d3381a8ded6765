import { ErrorKindSchema, type ErrorKind } from "../../../shared/error-kind.ts";
import * as z from "zod";
import type { CaseResult } from "../../../shared/result.ts";
import type { CaseResultJSON } from "../../../shared/result-json.ts";
import type { CaseResultData, CaseUsage, ReliabilityDetails, ScoreData } from "../../../shared/wire/result-data.ts";
import type { SqlRow, SqlValue } from "./driver.ts";
import { RUN_ABANDONED_SECONDS } from "../../../shared/defaults.ts";
import { lazySchema } from "../../../shared/lazy-schema.ts";

/**
 * What the results store keeps, as TypeScript types, how a case result becomes a row, and how a
 * row read back becomes a record (validated with zod: the database is outside the process).
 * Pure; no I/O.
 */

/**
 * How a run ended; `running` until it does. A run whose process died stays `running` until it is
 * closed as `abandoned`: automatically once its heartbeat is older than RUN_ABANDONED_SECONDS
 * (shared/defaults.ts), or by `evalfleet runs close`.
 */
export type RunRecordStatus = "running" | "passed" | "failed" | "cancelled" | "incomplete" | "abandoned";

/**
 * The moment before which a run left `running` with no heartbeat since is abandoned:
 * {@link RUN_ABANDONED_SECONDS} before `now` (ISO 8601).
 */
export function abandonedBefore(now: number = Date.now()): string {
  return new Date(now - RUN_ABANDONED_SECONDS * 1000).toISOString();
}

/** What a run is: a suite run, or a standalone AgentAsJudgeEval run. */
export type RunKind = "suite" | "agent_as_judge";

/** The part of a run record known when it starts. */
export interface RunStart {
  id: string;
  kind: RunKind;
  /** The suite's name (for AgentAsJudgeEval: its `name`, or `agent_as_judge`). */
  suiteName: string;
  suiteFingerprint: string | null;
  suitePath: string | null;
  /** What was asked for: `{ name, tag, cases }` (cases: the selected names, declaration order). */
  selection: Record<string, unknown>;
  /** How it ran: mode, concurrency, threads, ... (never a credential). */
  config: Record<string, unknown>;
  /** The suite-wide judge model's id (or the default judge's model), when there is one. */
  judgeModel: string | null;
  /** The default per-case timeout in seconds. */
  timeoutSeconds: number | null;
  /** ISO 8601 UTC. */
  startedAt: string;
  gitCommit: string | null;
  gitBranch: string | null;
  /** `<hostname>/<pid>` of the process that recorded the run. */
  host: string | null;
  /** The run's name (`--run-name`; Exulu's `eval_runs.name`). Default none. */
  runName?: string | null;
  /** Free text about the run (`--description`). Default none. */
  description?: string | null;
  /**
   * The agent every case of the run uses, when they all use one (an AgentAsJudgeEval post-hook:
   * the hooked agent). `teamId` likewise for a team. Default none.
   */
  agentId?: string | null;
  teamId?: string | null;
  /** The evaluation functions applied to every case (`--eval-function`). Default none. */
  evalFunctions?: readonly string[] | null;
  /** The scoring method that overrides the cases' own (`--scoring-method`). Default none. */
  scoringMethod?: string | null;
  /** The run's pass threshold (0-1, the fraction of cases that must pass). Default none. */
  passThreshold?: number | null;
  /** The run this one re-graded (`evalfleet regrade`), or none. */
  regradedFrom?: string | null;
}

/** The part of a run record written when it ends. */
export interface RunEnd {
  finishedAt: string;
  status: RunRecordStatus;
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  /** Seconds. */
  durationSeconds: number;
  /** The JSON report's `summary` object, verbatim (null for AgentAsJudgeEval runs). */
  summary: Record<string, unknown> | null;
  /** When the run started, when the end knows it better than the start did (a resumed run: its first coordinator's start). */
  startedAt?: string | null;
}

/** A run as read back (the optional fields of {@link RunStart} are read back as `null` when unset). */
export interface RunRecord extends RunStart {
  finishedAt: string | null;
  status: RunRecordStatus;
  total: number | null;
  passed: number | null;
  failed: number | null;
  skipped: number | null;
  durationSeconds: number | null;
  summary: Record<string, unknown> | null;
  /** The last heartbeat of the process recording the run (ISO 8601), or null (a run recorded before schema 3). */
  heartbeatAt?: string | null;
}

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

/** The columns of `case_results` that the store writes, in this order. */
export const CASE_COLUMNS = [
  "run_id",
  "case_index",
  "name",
  "agent_id",
  "team_id",
  "tags",
  "session_id",
  "duration_seconds",
  "judge_passed",
  "judge_reason",
  "judge_score",
  "reliability_passed",
  "reliability_passed_calls",
  "reliability_failed_calls",
  "reliability_additional_calls",
  "reliability_missing_calls",
  "output",
  "tools_called",
  "timed_out",
  "skipped",
  "passed",
  "error",
  "score_value",
  "score_passed",
  "score_reason",
  "score_detail",
  "attempts",
  "worker",
  "report",
  "recorded_at",
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "cost_usd",
  "case_id",
  "metadata",
  "error_kind",
  "judge_input_tokens",
  "judge_output_tokens",
  "judge_total_tokens",
  "judge_cost_usd",
] as const;

/** A column of `case_results` that the store writes. */
export type CaseColumn = (typeof CASE_COLUMNS)[number];

/** A `case_results` row ready to bind, in {@link CASE_COLUMNS} order, with the case's index (and its transcript, kept apart). */
export interface CaseRow {
  index: number;
  values: SqlValue[];
  /**
   * The case's transcript for `case_transcripts` (its JSON, size in bytes, whether it was cut), or
   * null when the result carries none: a row written again without one leaves the stored one.
   */
  transcript?: TranscriptRow | null;
}

/** A `case_transcripts` row's values. */
export interface TranscriptRow {
  json: string;
  bytes: number;
  cut: boolean;
}

/** A result's transcript as a `case_transcripts` row, or null without one. */
export function transcriptRow(result: CaseResult): TranscriptRow | null {
  const t = result.transcript;
  if (!t) return null;
  const json = JSON.stringify(t);
  return { json, bytes: Buffer.byteLength(json, "utf8"), cut: t.cut !== null };
}

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * A case result as a row. The typed columns hold the report's values (and the details the report
 * leaves out); `report` holds the case's JSON entry verbatim, so keys added to the report later
 * are kept too. Built by column name, so the order is written once ({@link CASE_COLUMNS}).
 */
export function caseRow(runId: string, result: CaseResult, recordedAt: string): CaseRow {
  const report = result.toJSON();
  const rel = result.reliability;
  const usage = result.usage;
  const row: Record<CaseColumn, SqlValue> = {
    run_id: runId,
    case_index: result.index,
    name: report.name,
    agent_id: report.agent_id,
    team_id: report.team_id,
    tags: json(report.tags),
    session_id: report.session_id,
    duration_seconds: report.duration_seconds,
    judge_passed: report.judge_passed,
    judge_reason: report.judge_reason,
    judge_score: report.judge_score,
    reliability_passed: report.reliability_passed,
    reliability_passed_calls: rel ? json(rel.passedToolCalls) : null,
    reliability_failed_calls: rel ? json(rel.failedToolCalls) : null,
    reliability_additional_calls: rel ? json(rel.additionalToolCalls) : null,
    reliability_missing_calls: rel ? json(rel.missingToolCalls) : null,
    output: report.output,
    tools_called: json(report.tools_called),
    timed_out: report.timed_out,
    skipped: report.skipped,
    passed: report.passed,
    error: report.error,
    score_value: report.score_value,
    score_passed: report.score_passed,
    score_reason: report.score_reason,
    score_detail: result.score?.detail ? json(result.score.detail) : null,
    attempts: report.attempts,
    worker: report.worker,
    report: JSON.stringify(report),
    recorded_at: recordedAt,
    input_tokens: usage?.inputTokens ?? null,
    output_tokens: usage?.outputTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    cost_usd: usage?.costUsd ?? null,
    case_id: result.caseId ?? null,
    metadata: result.metadata ? json(result.metadata) : null,
    error_kind: report.error_kind,
    judge_input_tokens: usage?.judge?.inputTokens ?? null,
    judge_output_tokens: usage?.judge?.outputTokens ?? null,
    judge_total_tokens: usage?.judge?.totalTokens ?? null,
    judge_cost_usd: usage?.judge?.costUsd ?? null,
  };
  return { index: result.index, values: CASE_COLUMNS.map((c) => row[c]), transcript: transcriptRow(result) };
}

// Rows cross a boundary: validate them. SQLite gives booleans as 0/1, PostgreSQL as booleans.
const bool = lazySchema(() => z.union([z.boolean(), z.number()]).transform((v) => Boolean(v)));
const nbool = lazySchema(() => bool.nullable());
const num = lazySchema(() => z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i)]).transform(Number));
const nnum = lazySchema(() => num.nullable());
const text = lazySchema(() => z.string());
const ntext = lazySchema(() => z.string().nullable());
const jsonOf = <T extends z.ZodType>(schema: T) =>
  z.string().transform((s, ctx) => {
    try {
      return schema.parse(JSON.parse(s)) as z.infer<T>;
    } catch {
      ctx.addIssue({ code: "custom", message: "not the JSON expected" });
      return z.NEVER;
    }
  });
const strings = lazySchema(() => jsonOf(z.array(z.string())));
const object = lazySchema(() => jsonOf(z.record(z.string(), z.unknown())));
const STATUSES = ["running", "passed", "failed", "cancelled", "incomplete", "abandoned"] as const;

/** A row of `eval_runs`. */
export const RunRowSchema = lazySchema(() => z
  .object({
    id: text,
    kind: z.enum(["suite", "agent_as_judge"]),
    suite_name: text,
    suite_fingerprint: ntext,
    suite_path: ntext,
    selection: object,
    config: object,
    judge_model: ntext,
    timeout_seconds: nnum,
    started_at: text,
    finished_at: ntext,
    status: z.enum(STATUSES),
    total: nnum,
    passed: nnum,
    failed: nnum,
    skipped: nnum,
    duration_seconds: nnum,
    summary: object.nullable(),
    git_commit: ntext,
    git_branch: ntext,
    host: ntext,
    // Version 3 columns: absent from a row only if read through an older SELECT list.
    name: ntext.optional(),
    description: ntext.optional(),
    agent_id: ntext.optional(),
    team_id: ntext.optional(),
    eval_functions: strings.nullable().optional(),
    scoring_method: ntext.optional(),
    pass_threshold: nnum.optional(),
    heartbeat_at: ntext.optional(),
    regraded_from: ntext.optional(),
  })
  .transform(
    (r): RunRecord => ({
      id: r.id,
      kind: r.kind,
      suiteName: r.suite_name,
      suiteFingerprint: r.suite_fingerprint,
      suitePath: r.suite_path,
      selection: r.selection,
      config: r.config,
      judgeModel: r.judge_model,
      timeoutSeconds: r.timeout_seconds,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      status: r.status,
      total: r.total,
      passed: r.passed,
      failed: r.failed,
      skipped: r.skipped,
      durationSeconds: r.duration_seconds,
      summary: r.summary,
      gitCommit: r.git_commit,
      gitBranch: r.git_branch,
      host: r.host,
      runName: r.name ?? null,
      description: r.description ?? null,
      agentId: r.agent_id ?? null,
      teamId: r.team_id ?? null,
      evalFunctions: r.eval_functions ?? null,
      scoringMethod: r.scoring_method ?? null,
      passThreshold: r.pass_threshold ?? null,
      heartbeatAt: r.heartbeat_at ?? null,
      regradedFrom: r.regraded_from ?? null,
    }),
  ));

/** A row of `case_results`: every column {@link caseRow} writes, no other. */
export const CaseRowSchema = lazySchema(() => z
  .object({
    run_id: text,
    case_index: num,
    name: text,
    agent_id: ntext,
    team_id: ntext,
    tags: strings,
    session_id: text,
    duration_seconds: num,
    judge_passed: nbool,
    judge_reason: ntext,
    judge_score: nnum,
    reliability_passed: nbool,
    reliability_passed_calls: strings.nullable(),
    reliability_failed_calls: strings.nullable(),
    reliability_additional_calls: strings.nullable(),
    reliability_missing_calls: strings.nullable(),
    output: ntext,
    tools_called: strings,
    timed_out: bool,
    skipped: bool,
    passed: bool,
    error: ntext,
    score_value: nnum,
    score_passed: nbool,
    score_reason: ntext,
    score_detail: object.nullable(),
    attempts: num,
    worker: ntext,
    report: object,
    recorded_at: text,
    input_tokens: nnum,
    output_tokens: nnum,
    total_tokens: nnum,
    cost_usd: nnum,
    case_id: ntext,
    metadata: object.nullable(),
    error_kind: ErrorKindSchema.nullable(),
    judge_input_tokens: nnum,
    judge_output_tokens: nnum,
    judge_total_tokens: nnum,
    judge_cost_usd: nnum,
  } satisfies Record<CaseColumn, z.ZodType>)
  .transform(
    (r): CaseRecord => ({
      runId: r.run_id,
      index: r.case_index,
      name: r.name,
      agentId: r.agent_id,
      teamId: r.team_id,
      tags: r.tags,
      sessionId: r.session_id,
      durationSeconds: r.duration_seconds,
      judgePassed: r.judge_passed,
      judgeReason: r.judge_reason,
      judgeScore: r.judge_score,
      reliabilityPassed: r.reliability_passed,
      reliability:
        r.reliability_passed_calls || r.reliability_failed_calls || r.reliability_additional_calls || r.reliability_missing_calls
          ? {
              passedToolCalls: r.reliability_passed_calls ?? [],
              failedToolCalls: r.reliability_failed_calls ?? [],
              additionalToolCalls: r.reliability_additional_calls ?? [],
              missingToolCalls: r.reliability_missing_calls ?? [],
            }
          : null,
      output: r.output,
      toolsCalled: r.tools_called,
      timedOut: r.timed_out,
      skipped: r.skipped,
      passed: r.passed,
      error: r.error,
      scoreValue: r.score_value,
      scorePassed: r.score_passed,
      scoreReason: r.score_reason,
      scoreDetail: r.score_detail,
      attempts: r.attempts,
      worker: r.worker,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      totalTokens: r.total_tokens,
      costUsd: r.cost_usd,
      report: r.report as unknown as CaseResultJSON,
      recordedAt: r.recorded_at,
      caseId: r.case_id,
      metadata: r.metadata,
      errorKind: r.error_kind,
      judgeUsage: r.judge_input_tokens === null && r.judge_output_tokens === null && r.judge_total_tokens === null && r.judge_cost_usd === null ? null : { inputTokens: r.judge_input_tokens, outputTokens: r.judge_output_tokens, totalTokens: r.judge_total_tokens, costUsd: r.judge_cost_usd },
    }),
  ));

/** A row of `judge_evaluations`. */
export const JudgeEvaluationRowSchema = lazySchema(() => z
  .object({ position: num, input: text, output: text, criteria: text, score: nnum, reason: ntext, passed: nbool, failure: ntext })
  .transform((r): JudgeEvaluationRecord => ({ ...r })));

/** Parses rows with `schema`; a row that does not fit names the table, the row and the field. */
export function parseRows<T>(schema: z.ZodType<T>, rows: readonly SqlRow[], table: string): T[] {
  return rows.map((row, i) => {
    const parsed = schema.safeParse(row);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new Error(`${table}: row ${i + 1} is malformed: ${issue?.path.join(".") || "row"}: ${issue?.message}`);
  });
}
