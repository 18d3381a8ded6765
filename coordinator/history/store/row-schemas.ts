import * as z from "zod";
import { ErrorKindSchema } from "../../../shared/result/error-kind.ts";
import type { CaseResultJSON } from "../../../shared/result/result-json.ts";
import { lazySchema } from "../../../shared/runtime/lazy-schema.ts";
import type { SqlRow } from "./driver.ts";
import type { CaseRecord, JudgeEvaluationRecord } from "./case-record.ts";
import type { CaseColumn } from "./case-row.ts";
import type { RunRecord } from "./run-record.ts";

/**
 * Rows read back from the results store, validated with zod (the database is outside the process)
 * and turned into records: `eval_runs` into {@link RunRecord}, `case_results` into
 * {@link CaseRecord}, `judge_evaluations` into {@link JudgeEvaluationRecord}. Pure; no I/O.
 */

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
    // Null in runs recorded before schema version 7.
    checks_fingerprint: ntext,
    // Null in runs recorded before schema version 9.
    input: ntext,
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
      checksFingerprint: r.checks_fingerprint,
      input: r.input,
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
