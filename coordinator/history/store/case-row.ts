import type { CaseInput } from "../../../shared/case/agent.ts";
import type { CaseResult } from "../../../shared/result/result.ts";
import { caseResultToJSON } from "../../../shared/result/result-json.ts";
import type { SqlValue } from "./driver.ts";

/**
 * How a case result becomes a `case_results` row (and its transcript a `case_transcripts` one):
 * the columns the store writes, in order, and the values it binds. Pure; no I/O.
 */

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
  "checks_fingerprint",
  "input",
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

/** Longest input text kept per case, in characters: enough to search it, bounded so that a conversation of megabytes does not grow the row and its index. */
export const INPUT_TEXT_MAX_CHARS = 20_000;

/**
 * A case's input as the text the store keeps and the viewer searches (`input`): a prompt as it
 * is; a conversation one message a line, `role: content`. Cut to {@link INPUT_TEXT_MAX_CHARS}.
 * Null when the input is not known (a row built without its case).
 */
export function inputText(input: CaseInput | null | undefined): string | null {
  if (input === null || input === undefined) return null;
  const text = typeof input === "string" ? input : input.map((m) => `${m.role}: ${m.content}`).join("\n");
  return text.length > INPUT_TEXT_MAX_CHARS ? text.slice(0, INPUT_TEXT_MAX_CHARS) : text;
}

const json = (v: unknown): string | null => (v === null || v === undefined ? null : JSON.stringify(v));

/**
 * A case result as a row. The typed columns hold the report's values (and the details the report
 * leaves out); `report` holds the case's JSON entry verbatim, so keys added to the report later
 * are kept too. Built by column name, so the order is written once ({@link CASE_COLUMNS}).
 * `checksFingerprint` is the fingerprint of the checks that graded it (recording/checks-fingerprint.ts);
 * default null: unknown, as in runs recorded before version 7. `input` is the case's input as text
 * ({@link inputText}, redacted by the caller: the result's redactor does not see it); default null:
 * unknown, as in runs recorded before version 9.
 */
export function caseRow(runId: string, result: CaseResult, recordedAt: string, checksFingerprint: string | null = null, confidence?: number, input: string | null = null): CaseRow {
  // The entry as the run's JSON report writes it: a repeated case's interval at the run's confidence.
  const report = caseResultToJSON(result, confidence);
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
    checks_fingerprint: checksFingerprint,
    input,
  };
  return { index: result.index, values: CASE_COLUMNS.map((c) => row[c]), transcript: transcriptRow(result) };
}
