import type { CaseResultJSON, SuiteResultJSON } from "../../shared/result/result-json.ts";
import type { RunRecord } from "./store/run-record.ts";
import type { CaseRecord } from "./store/case-record.ts";

/**
 * A recorded run written out (`evalfleet export RUN_ID --format exulu|json`): as Exulu's
 * `eval_runs` record with one result per test case, or as evalfleet's own JSON report. Pure: the
 * records in, plain data out (the command reads the store and writes the file).
 */

/**
 * Exulu's `eval_runs` type, every field (seed: Exulu's GraphQL types, "Evaluations"). A field
 * evalfleet has no value for is `null`.
 */
export interface ExuluEvalRun {
  id: string;
  /** `--run-name`, else the suite's name (Exulu's `name` is required). */
  name: string;
  description: string | null;
  /** The agent (or team) every case of the run used; `null` when they used several. */
  agent_id: string | null;
  /** Each case's id (a dataset row's: Exulu's test case id), else its name, in suite order. */
  test_case_ids: string[];
  /** The evaluation functions the run applied (`--eval-function`), then those cases named, once each. */
  eval_functions: string[];
  /** How evalfleet ran it: its run config, the suite, the selection, the judge, git, the outcome. */
  config: Record<string, unknown>;
  /** `--scoring-method`, else the one method every expected-output check used, else `null`. */
  scoring_method: string | null;
  /** evalfleet's pass threshold: the fraction (0-1) of cases that must pass. */
  pass_threshold: number | null;
  timeout_in_seconds: number | null;
  /** When the run started (ISO 8601). */
  createdAt: string;
  /** When it ended, else when its last case was recorded. */
  updatedAt: string;
  RBAC: Record<string, unknown> | null;
}

/** One test case's result in an Exulu export. */
export interface ExuluEvalResult {
  /** `<run id>:<case index>`. */
  id: string;
  eval_run_id: string;
  test_case_id: string;
  name: string;
  agent_id: string | null;
  passed: boolean;
  skipped: boolean;
  timed_out: boolean;
  error: string | null;
  output: string | null;
  duration_seconds: number;
  tools_called: string[];
  session_id: string;
  /** Every check's verdict, as the JSON report has them. */
  checks: {
    judge: { passed: boolean | null; score: number | null; reason: string | null } | null;
    reliability: { passed: boolean | null } | null;
    scorer: { value: number | null; passed: boolean | null; reason: string | null } | null;
    expectations: CaseResultJSON["expectations"];
  };
  /** The named evaluation functions' verdicts (Exulu's eval function results). */
  eval_function_results: { name: string; value: number; passed: boolean; reason: string }[];
  /** The case's metadata (Exulu's test case `createdAt`, `updatedAt`, `RBAC` under `exulu`). */
  metadata: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
}

/** `evalfleet export --format exulu`: the run's record and its results. */
export interface ExuluExport {
  eval_run: ExuluEvalRun;
  results: ExuluEvalResult[];
}

/** The run's single agent (or team), from the record, else from its cases; `null` when several. */
export function runComponentId(run: Pick<RunRecord, "agentId" | "teamId">, cases: readonly Pick<CaseRecord, "agentId" | "teamId">[]): string | null {
  if (run.agentId || run.teamId) return run.agentId ?? run.teamId ?? null;
  const ids = new Set(cases.map((c) => c.agentId ?? c.teamId ?? ""));
  return ids.size === 1 && !ids.has("") ? [...ids][0]! : null;
}

/** A recorded run as Exulu's `eval_runs` record plus one result per test case. */
export function toExuluExport(run: RunRecord, cases: readonly CaseRecord[]): ExuluExport {
  const functions = new Set<string>(run.evalFunctions ?? []);
  const methods = new Set<string>();
  for (const c of cases) {
    for (const f of c.report.expectations?.eval_functions ?? []) functions.add(f.name);
    const method = c.report.expectations?.expected_output?.method;
    if (method) methods.add(method);
  }
  const lastRecorded = cases.reduce<string | null>((latest, c) => (latest === null || c.recordedAt > latest ? c.recordedAt : latest), null);
  const summary = run.summary as SuiteResultJSON["summary"] | null;
  const evalRun: ExuluEvalRun = {
    id: run.id,
    name: run.runName ?? run.suiteName,
    description: run.description ?? null,
    agent_id: runComponentId(run, cases),
    test_case_ids: cases.map((c) => c.caseId ?? c.name),
    eval_functions: [...functions],
    config: {
      ...run.config,
      suite: run.suiteName,
      suite_path: run.suitePath,
      suite_fingerprint: run.suiteFingerprint,
      kind: run.kind,
      selection: run.selection,
      judge_model: run.judgeModel,
      status: run.status,
      summary,
      git_commit: run.gitCommit,
      git_branch: run.gitBranch,
      host: run.host,
    },
    scoring_method: run.scoringMethod ?? (methods.size === 1 ? [...methods][0]! : null),
    pass_threshold: run.passThreshold ?? summary?.pass_threshold ?? null,
    // Exulu's timeout is whole seconds (Int): a fractional timeout is rounded up, never cut shorter.
    timeout_in_seconds: run.timeoutSeconds === null ? null : Math.ceil(run.timeoutSeconds),
    createdAt: run.startedAt,
    updatedAt: run.finishedAt ?? lastRecorded ?? run.startedAt,
    RBAC: null,
  };
  const results = cases.map((c): ExuluEvalResult => {
    const r = c.report;
    return {
      id: `${run.id}:${c.index}`,
      eval_run_id: run.id,
      test_case_id: c.caseId ?? c.name,
      name: c.name,
      agent_id: c.agentId ?? c.teamId ?? null,
      passed: c.passed,
      skipped: c.skipped,
      timed_out: c.timedOut,
      error: c.error,
      output: c.output,
      duration_seconds: c.durationSeconds,
      tools_called: [...c.toolsCalled],
      session_id: c.sessionId,
      checks: {
        judge: r.judge_passed === null && r.judge_reason === null ? null : { passed: r.judge_passed, score: r.judge_score, reason: r.judge_reason },
        reliability: r.reliability_passed === null ? null : { passed: r.reliability_passed },
        scorer: r.score_value === null && r.score_passed === null ? null : { value: r.score_value, passed: r.score_passed, reason: r.score_reason },
        expectations: r.expectations ?? null,
      },
      eval_function_results: (r.expectations?.eval_functions ?? []).map((f) => ({ ...f })),
      metadata: c.metadata ?? null,
      createdAt: c.recordedAt,
      updatedAt: c.recordedAt,
    };
  });
  return { eval_run: evalRun, results };
}

/** `evalfleet export --format json`: the run's JSON report as `--json-output` wrote it (the summary is `null` for a run that never ended). */
export function toReportExport(run: RunRecord, cases: readonly CaseRecord[]): { summary: SuiteResultJSON["summary"] | null; cases: CaseResultJSON[] } {
  return { summary: (run.summary as SuiteResultJSON["summary"] | null) ?? null, cases: cases.map((c) => c.report) };
}
