import type { CaseRecord } from "./store/case-record.ts";

/**
 * Why a recorded case failed, whatever the check: the error (with its kind), the judge's reason,
 * the tools the reliability check missed, the scorer's reason, the expected-output difference,
 * the data-driven checks and the named evaluation functions. The HTML reports show it in their
 * tables and group failures by it. Pure; no I/O.
 */

/** The part of a recorded case the cause is read from (a `CaseRecord` fits). */
export type CauseInput = Pick<
  CaseRecord,
  "passed" | "skipped" | "timedOut" | "error" | "judgePassed" | "judgeReason" | "judgeScore" | "reliabilityPassed" | "reliability" | "scorePassed" | "scoreValue" | "scoreReason" | "report"
> &
  Partial<Pick<CaseRecord, "errorKind">>;

/** One failed check of a case. */
export interface FailedCheck {
  /** `timeout`, the error's prefix (`agent`, `judge`, `setup`, ...), `judge`, `reliability`, `scorer`, `expected_output`, `expected_agent_tools`, `expected_knowledge_sources`, `eval_function:NAME`, `repeats`, or `unknown`. */
  check: string;
  /** Why, as the check said it (may hold several lines). */
  reason: string;
}

/** Why a case failed: its error kind and every failed check, the first being the main cause. */
export interface FailureCause {
  /**
   * The error kind: the result's `error_kind` when it has one (`infra`, `agent`, `check`,
   * `timeout`), else read from the record (a record from an evalfleet without error kinds).
   */
  kind: string | null;
  checks: FailedCheck[];
  /** Every reason joined with ` · `, for a table cell. */
  reason: string;
  /** The key failures are grouped by: kind, first check, first line of its reason (digits as `#`). */
  groupKey: string;
  /** The group's label: `kind · check · first line`. */
  groupLabel: string;
}

/** Longest first line a group key keeps (characters). */
const GROUP_LINE = 120;

/** The cause of a failed or skipped case; `null` for a case that passed. */
export function failureCause(c: CauseInput): FailureCause | null {
  if (c.passed && !c.skipped) return null;
  const checks: FailedCheck[] = [];
  if (c.skipped) checks.push({ check: "skipped", reason: c.error ?? "not run" });
  else {
    for (const part of splitErrors(c.error)) checks.push(part);
    if (c.judgePassed === false) checks.push({ check: "judge", reason: c.judgeReason ?? (c.judgeScore !== null ? `score ${c.judgeScore}` : "the judge said fail") });
    if (c.reliabilityPassed === false) checks.push({ check: "reliability", reason: recordedReason(c.report) ?? reliabilityReason(c.reliability) });
    if (c.scorePassed === false) checks.push({ check: "scorer", reason: c.scoreReason ?? `value ${c.scoreValue ?? "?"}` });
    const ex = c.report?.expectations;
    if (ex?.expected_output && !ex.expected_output.passed) checks.push({ check: "expected_output", reason: `${ex.expected_output.method}: ${ex.expected_output.reason}` });
    if (ex?.expected_agent_tools && !ex.expected_agent_tools.passed) checks.push({ check: "expected_agent_tools", reason: ex.expected_agent_tools.reason });
    if (ex?.expected_knowledge_sources && !ex.expected_knowledge_sources.passed) checks.push({ check: "expected_knowledge_sources", reason: ex.expected_knowledge_sources.reason });
    for (const f of ex?.eval_functions ?? []) if (!f.passed) checks.push({ check: `eval_function:${f.name}`, reason: f.reason });
    const repeats = c.report?.repeats;
    if (checks.length === 0 && repeats && repeats.length > 0) checks.push({ check: "repeats", reason: `passed ${repeats.filter((r) => r.passed).length} of ${repeats.length} runs` });
    if (checks.length === 0) checks.push({ check: "unknown", reason: "failed, and no check gave a reason" });
  }
  const kind = errorKindOf(c);
  const first = checks[0]!;
  const line = firstLine(first.reason).replace(/\d+(\.\d+)?/g, "#").slice(0, GROUP_LINE);
  return {
    kind,
    checks,
    reason: checks.map((k) => (k.check === "judge" || k.check === "skipped" || k.reason.startsWith(`${k.check}:`) ? k.reason : `${k.check}: ${k.reason}`)).join(" \u00b7 "),
    groupKey: `${kind ?? ""}\u0000${first.check}\u0000${line}`,
    groupLabel: [kind, first.check, line].filter((x) => x).join(" \u00b7 "),
  };
}

/**
 * The error kind of a failed case: the result's own `error_kind` when the record has one (its
 * column, or its JSON entry);
 * otherwise `timeout` for a timed-out case, `agent` for an error under another prefix, `check`
 * for a failed check, `null` for a case that passed or was skipped.
 */
export function errorKindOf(c: CauseInput): string | null {
  if (c.errorKind) return c.errorKind;
  const recorded = (c.report as { error_kind?: unknown } | undefined)?.error_kind;
  if (typeof recorded === "string") return recorded;
  if (c.skipped || c.passed) return null;
  if (c.timedOut) return "timeout";
  if (c.error) return "agent";
  return "check";
}

/** The errors of a result, one per prefix (`agent: ...; judge: ...`). */
function splitErrors(error: string | null): FailedCheck[] {
  if (!error) return [];
  const parts = error.split(/; (?=[a-z]+: )/);
  return parts.map((p) => {
    const m = /^([a-z]+): /.exec(p);
    return { check: m ? m[1]! : "error", reason: p };
  });
}

/** The reliability check's reason as the JSON entry recorded it (absent in a run of an older evalfleet). */
function recordedReason(report: CauseInput["report"] | undefined): string | null {
  const reason = (report as { reliability_reason?: unknown } | undefined)?.reliability_reason;
  return typeof reason === "string" && reason ? reason : null;
}

function reliabilityReason(r: CauseInput["reliability"]): string {
  if (!r) return "the expected tool calls were not made";
  const parts: string[] = [];
  if (r.missingToolCalls.length) parts.push(`missing tools: ${r.missingToolCalls.join(", ")}`);
  if (r.failedToolCalls.length) parts.push(`failed tools: ${r.failedToolCalls.join(", ")}`);
  if (r.additionalToolCalls.length) parts.push(`additional tools: ${r.additionalToolCalls.join(", ")}`);
  return parts.join("; ") || "the expected tool calls were not made";
}

function firstLine(text: string): string {
  const nl = text.indexOf("\n");
  return (nl >= 0 ? text.slice(0, nl) : text).trim();
}
