import { z } from "zod";
import type { CaseResult, CaseResultJSON } from "../../shared/result.ts";
import type { SqlRow, SqlValue } from "./driver.ts";

/**
 * What the results store keeps, as TypeScript types, how a case result becomes a row, and how a
 * row read back becomes a record (validated with zod: the database is outside the process).
 * Pure; no I/O.
 */

/** How a run ended; `running` until it does (a run whose coordinator died stays `running`). */
export type RunRecordStatus = "running" | "passed" | "failed" | "cancelled" | "incomplete";

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
}

/** A run as read back. */
export interface RunRecord extends RunStart {
  finishedAt: string | null;
  status: RunRecordStatus;
  total: number | null;
  passed: number | null;
  failed: number | null;
  skipped: number | null;
  durationSeconds: number | null;
  summary: Record<string, unknown> | null;
}

/** The reliability check's details, as recorded. */
export interface RecordedReliability {
  passedToolCalls: string[];
  failedToolCalls: string[];
  additionalToolCalls: string[];
  missingToolCalls: string[];
}

/** One case result as read back: every key of the JSON report, plus what the report leaves out. */
export interface CaseRecord {
  runId: string;
  index: number;
  name: string;
  agentId: string | null;
  teamId: string | null;
  tags: string[];
  sessionId: string;
  durationSeconds: number;
  judgePassed: boolean | null;
  judgeReason: string | null;
  judgeScore: number | null;
  reliabilityPassed: boolean | null;
  /** `null` when the reliability check did not run. */
  reliability: RecordedReliability | null;
  output: string | null;
  toolsCalled: string[];
  timedOut: boolean;
  skipped: boolean;
  passed: boolean;
  error: string | null;
  scoreValue: number | null;
  scorePassed: boolean | null;
  scoreReason: string | null;
  scoreDetail: Record<string, unknown> | null;
  attempts: number;
  worker: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  costUsd: number | null;
  /** The case's JSON report entry exactly as `--json-output` wrote it. */
  report: CaseResultJSON;
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
] as const;

/** A `case_results` row ready to bind, in {@link CASE_COLUMNS} order, with the case's index. */
export interface CaseRow {
  index: number;
  values: SqlValue[];
}

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * A case result as a row. The typed columns hold the report's values (and the details the report
 * leaves out); `report` holds the case's JSON entry verbatim, so keys added to the report later
 * are kept too.
 */
export function caseRow(runId: string, result: CaseResult, recordedAt: string): CaseRow {
  const report = result.toJSON();
  const rel = result.reliability;
  const score = result.score;
  const usage = result.usage ?? null;
  const values: SqlValue[] = [
    runId,
    result.index,
    report.name,
    report.agent_id,
    report.team_id,
    json(report.tags),
    report.session_id,
    report.duration_seconds,
    report.judge_passed,
    report.judge_reason,
    report.judge_score,
    report.reliability_passed,
    rel ? json(rel.passedToolCalls) : null,
    rel ? json(rel.failedToolCalls) : null,
    rel ? json(rel.additionalToolCalls) : null,
    rel ? json(rel.missingToolCalls) : null,
    report.output,
    json(report.tools_called),
    report.timed_out,
    report.skipped,
    report.passed,
    report.error,
    report.score_value,
    report.score_passed,
    report.score_reason,
    score?.detail ? json(score.detail) : null,
    report.attempts,
    report.worker,
    JSON.stringify(report),
    recordedAt,
    usage?.inputTokens ?? null,
    usage?.outputTokens ?? null,
    usage?.totalTokens ?? null,
    usage?.costUsd ?? null,
  ];
  return { index: result.index, values };
}

// Rows cross a boundary: validate them. SQLite gives booleans as 0/1, PostgreSQL as booleans.
const bool = z.union([z.boolean(), z.number()]).transform((v) => Boolean(v));
const nbool = bool.nullable();
const num = z.union([z.number(), z.string().regex(/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i)]).transform(Number);
const nnum = num.nullable();
const text = z.string();
const ntext = z.string().nullable();
const jsonOf = <T extends z.ZodType>(schema: T) =>
  z.string().transform((s, ctx) => {
    try {
      return schema.parse(JSON.parse(s)) as z.infer<T>;
    } catch {
      ctx.addIssue({ code: "custom", message: "not the JSON expected" });
      return z.NEVER;
    }
  });
const strings = jsonOf(z.array(z.string()));
const object = jsonOf(z.record(z.string(), z.unknown()));
const STATUSES = ["running", "passed", "failed", "cancelled", "incomplete"] as const;

/** A row of `eval_runs`. */
export const RunRowSchema = z
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
    }),
  );

/** A row of `case_results`. */
export const CaseRowSchema = z
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
  })
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
    }),
  );

/** A row of `judge_evaluations`. */
export const JudgeEvaluationRowSchema = z
  .object({ position: num, input: text, output: text, criteria: text, score: nnum, reason: ntext, passed: nbool, failure: ntext })
  .transform((r): JudgeEvaluationRecord => ({ ...r }));

/** Parses rows with `schema`; a row that does not fit names the table, the row and the field. */
export function parseRows<T>(schema: z.ZodType<T>, rows: readonly SqlRow[], table: string): T[] {
  return rows.map((row, i) => {
    const parsed = schema.safeParse(row);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new Error(`${table}: row ${i + 1} is malformed: ${issue?.path.join(".") || "row"}: ${issue?.message}`);
  });
}
