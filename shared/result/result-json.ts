// runs in: both
import type { CaseResultData, ExpectationsData, PhaseSeconds, ReliabilityDetails, RepeatResultData, ScoreData, TrajectoryData } from "../wire/result-data.ts";
import { classifyCase, type ErrorKind } from "./error-kind.ts";
import { caseCost, caseTokens, type UsageTotals } from "../providers/prices.ts";
import { casePassRateInterval, type MeanWithInterval, type RunStatistics } from "./run-statistics.ts";

/**
 * The JSON report (`--json-output`, `SuiteResult.toJSON()`): a projection of the result data
 * (shared/wire/result-data.ts) with its own stable contract, not a copy of it. Agno's keys in
 * Agno's order (spec K2), then evalfleet's additive keys; snake_case; `passed` and `score_*`
 * computed; no `response`, no score `detail`, no `reliability` lists (its reason and trajectory
 * only), no `usage`. Pure; no I/O.
 */

/**
 * The JSON form of the reliability check's trajectory ({@link TrajectoryData}; its keys are
 * single words already): each numbered step with its verdict, and every failure with the step it
 * points at.
 */
export type TrajectoryJSON = TrajectoryData;

/** The JSON form of {@link ExpectationsData}: the dataset field names as keys, in this order. */
export interface ExpectationsJSON {
  expected_output?: { method: string; passed: boolean; reason: string };
  expected_agent_tools?: { passed: boolean; reason: string };
  expected_knowledge_sources?: { passed: boolean; reason: string };
  /** One entry per named evaluation function, in the order they ran. */
  eval_functions?: { name: string; value: number; passed: boolean; reason: string }[];
}

/** The JSON form of one repeat, keys in the order of a case's. */
export interface RepeatResultJSON {
  repeat: number;
  session_id: string;
  duration_seconds: number;
  judge_passed: boolean | null;
  judge_reason: string | null;
  judge_score: number | null;
  reliability_passed: boolean | null;
  output: string | null;
  tools_called: string[];
  timed_out: boolean;
  skipped: boolean;
  passed: boolean;
  error: string | null;
  score_value: number | null;
  score_passed: boolean | null;
  score_reason: string | null;
  expectations: ExpectationsJSON | null;
  attempts: number;
  worker: string | null;
  /** Why this run failed (`infra`, `agent`, `check`, `timeout`), `null` when it passed or was skipped. */
  error_kind: ErrorKind | null;
  /** The reliability check's reason for this run, `null` when the check did not run (or in a report of an older evalfleet). */
  reliability_reason: string | null;
}

/** The JSON form of one case: Agno's 19 keys in Agno's order, then evalfleet's additive keys. */
export interface CaseResultJSON {
  name: string;
  agent_id: string | null;
  team_id: string | null;
  tags: string[];
  session_id: string;
  duration_seconds: number;
  judge_passed: boolean | null;
  judge_reason: string | null;
  judge_score: number | null;
  reliability_passed: boolean | null;
  output: string | null;
  tools_called: string[];
  timed_out: boolean;
  skipped: boolean;
  passed: boolean;
  error: string | null;
  score_value: number | null;
  score_passed: boolean | null;
  score_reason: string | null;
  index: number;
  attempts: number;
  worker: string | null;
  /** Verdicts of the data-driven checks, or `null` when the case has none. */
  expectations: ExpectationsJSON | null;
  /** `--repeat N` > 1: each run of the case; `null` otherwise. */
  repeats: RepeatResultJSON[] | null;
  /** `--repeat N` > 1: the fraction of the runs that passed (0-1); `null` otherwise. */
  pass_rate: number | null;
  /** `--repeat N` > 1: pass@k for k = 1..N (unbiased estimator, keys are k); `null` otherwise. */
  pass_at_k: Record<string, number> | null;
  /** Seconds per phase (`setup`, `run`, `checks`, `teardown`; 0 for a phase that did not run), or `null` when unknown. */
  phase_seconds: PhaseSeconds | null;
  /**
   * Why the case failed, by cause (shared/result/error-kind.ts): `infra` (the provider, the network, a
   * judge with no result, a lost worker), `agent`, `check` or `timeout`; `null` when it passed or was skipped.
   */
  error_kind: ErrorKind | null;
  /** Tokens of the case: its agent's, its judges', and both (0 for a side that reported none). */
  tokens: { agent: number; judge: number; total: number };
  /** US dollars, agent and judge, from the price table; `null` when a model's price is unknown. */
  cost_usd: number | null;
  /**
   * Why the reliability check passed or failed, one line (`expected get_weather(city="London"),
   * got get_weather(city="Paris") at step 2`); `null` when the check did not run.
   */
  reliability_reason: string | null;
  /** The tool calls as the reliability check graded them, step by step, with its failures; `null` when the check did not run. */
  trajectory: TrajectoryJSON | null;
  /** `--repeat N` > 1: Wilson's interval of `pass_rate` at the summary's `confidence`, `[low, high]`; `null` otherwise. */
  pass_rate_ci: [number, number] | null;
  /** `--repeat N` > 1: the case's pass rule, the fraction of its trials that must pass (its `passRate`, else the run's); `null` otherwise. */
  case_pass_rate: number | null;
  /** `--repeat MIN..MAX`: whether the case's stopping interval cleared its pass rule (false: judged on its point estimate); `null` otherwise. */
  decided: boolean | null;
  /** `--repeat MIN..MAX`: why the case stopped: `cleared` (its interval cleared the rule), `settled` (MAX could not change its verdict), `max`, or `stopped` (by the run: a budget, a cancel); `null` otherwise. */
  adaptive_stop: "cleared" | "settled" | "max" | "stopped" | null;
}

/** `"PASS"` only when every case passed and there was at least one. */
export type SuiteStatus = "PASS" | "FAIL";

/** The JSON report: `summary` then `cases`. */
export interface SuiteResultJSON {
  summary: {
    total: number;
    passed: number;
    failed: number;
    status: SuiteStatus;
    skipped: number;
    run_id: string | null;
    duration_seconds: number;
    /** passed / total (0 for an empty run). */
    pass_rate: number;
    /** The run-level pass threshold (0-1), or null when none was set. */
    pass_threshold: number | null;
    /** Runs per case (`--repeat`), 1 by default. */
    repeat: number;
    /** With repeats: the mean over cases of each case's pass@k, k = 1..repeat; null otherwise. */
    pass_at_k: Record<string, number> | null;
    /** Cases whose `error_kind` is `infra`. */
    infra_errors: number;
    /** Tokens of the run: the agents', the judges', and both. */
    tokens: { agent: number; judge: number; total: number };
    /** US dollars the run cost, from the price table; the cases of unknown cost count 0 (see `cost_unknown_cases`). */
    cost_usd: number;
    /** Cases whose cost is unknown (a model missing from the price table). */
    cost_unknown_cases: number;
    /** `--budget-usd` / `--budget-tokens` and whether they ran out, or null without a budget. */
    budget: { usd: number | null; tokens: number | null; exhausted: boolean } | null;
    /** With `--cache`: the built-in model clients' calls the response cache answered (`hits`) and those it passed on (`misses`). Absent otherwise. */
    model_cache?: { hits: number; misses: number };
    /** Two-sided confidence of every interval of the report (`--confidence`), 0.95 by default. */
    confidence: number;
    /** The interval of `trial_pass_rate` at `confidence`, `[low, high]`: Wilson's when each case ran once, cluster-robust over cases with repeats. */
    pass_rate_ci: [number, number];
    /** How `pass_rate_ci` was computed: `wilson` (one trial per case) or `clustered` (repeats; cases as clusters). */
    pass_rate_method: "wilson" | "clustered";
    /** The rate the interval is around: `pass_rate` when each case ran once; with repeats the mean over cases of each case's `pass_rate`. */
    trial_pass_rate: number;
    /** With repeats: the mean over cases of pass^k (all k trials pass), k = 1 up to the fewest trials of a case; null otherwise. */
    pass_hat_k: Record<string, number> | null;
    /** The run's pass rule of a repeated case (`--case-pass-rate`, else the suite's `casePassRate`, else 1); null when unknown. */
    case_pass_rate: number | null;
    /** The mean numeric judge score (1-10; over cases, each its trials' mean), or null when no case has one. */
    judge_score_mean: number | null;
    /** Its Student t interval over cases at `confidence`, clipped to [1, 10]; null when no case has a score. */
    judge_score_ci: [number, number] | null;
    /** The mean scorer value (0-1), as `judge_score_mean`. */
    score_value_mean: number | null;
    /** Its interval, clipped to [0, 1], as `judge_score_ci`. */
    score_value_ci: [number, number] | null;
    /**
     * `--repeat MIN..MAX`: the trials spent, the most a fixed `--repeat MAX` would have spent
     * (`trials_max`), the difference, and the cases judged on their point estimate
     * (`undecided_cases`, each marked `decided: false`); null for a fixed repeat.
     */
    adaptive_repeats: { min: number; max: number; trials_spent: number; trials_max: number; trials_saved: number; undecided_cases: number } | null;
  };
  cases: CaseResultJSON[];
}

/** What {@link caseResultToJSON} reads: a case's data and the verdicts computed from it. */
export type ProjectedCase = CaseResultData & {
  readonly passed: boolean;
  readonly passRate: number | null;
  readonly passAtK: Record<string, number> | null;
};

/**
 * The stable JSON entry of one case (spec K2 plus `index`, `attempts`, `worker` and the data-driven
 * keys); `confidence` is that of its `pass_rate_ci` (default: the statistics' 0.95).
 */
export function caseResultToJSON(r: ProjectedCase, confidence?: number): CaseResultJSON {
  const repeated = Boolean(r.repeats && r.repeats.length > 0);
  const ci = casePassRateInterval(r, confidence);
  return {
    name: r.name,
    agent_id: r.agentId,
    team_id: r.teamId,
    tags: [...r.tags],
    session_id: r.sessionId,
    duration_seconds: r.durationSeconds,
    judge_passed: r.judgePassed,
    judge_reason: r.judgeReason,
    judge_score: r.judgeScore,
    reliability_passed: r.reliabilityPassed,
    output: r.output,
    tools_called: [...r.toolsCalled],
    timed_out: r.timedOut,
    skipped: r.skipped,
    passed: r.passed,
    error: r.error,
    ...scoreToJSON(r.score),
    index: r.index,
    attempts: r.attempts,
    worker: r.worker,
    expectations: expectationsToJSON(r.expectations),
    repeats: r.repeats && r.repeats.length > 0 ? r.repeats.map(repeatToJSON) : null,
    pass_rate: r.passRate,
    pass_at_k: r.passAtK,
    phase_seconds: r.phaseSeconds ? { setup: r.phaseSeconds.setup, run: r.phaseSeconds.run, checks: r.phaseSeconds.checks, teardown: r.phaseSeconds.teardown } : null,
    error_kind: classifyCase(r),
    tokens: caseTokens(r.usage),
    cost_usd: caseCost(r.usage),
    reliability_reason: r.reliability?.reason ?? null,
    trajectory: trajectoryToJSON(r.reliability),
    pass_rate_ci: ci ? [ci[0], ci[1]] : null,
    // A result of an older evalfleet carries no rule: it was judged by 1, every trial.
    case_pass_rate: repeated ? (r.casePassRate ?? 1) : null,
    decided: r.adaptive?.decided ?? null,
    adaptive_stop: r.adaptive?.stop ?? null,
  };
}

/** The summary's statistics keys, in their order, from a run's statistics and its pass rule. */
export function statisticsSummary(
  s: RunStatistics,
  casePassRate: number | null,
): Pick<SuiteResultJSON["summary"], "confidence" | "pass_rate_ci" | "pass_rate_method" | "trial_pass_rate" | "pass_hat_k" | "case_pass_rate" | "judge_score_mean" | "judge_score_ci" | "score_value_mean" | "score_value_ci"> {
  const ci = (m: MeanWithInterval | null): [number, number] | null => (m ? [m.interval[0], m.interval[1]] : null);
  return {
    confidence: s.confidence,
    pass_rate_ci: [s.passRateInterval[0], s.passRateInterval[1]],
    pass_rate_method: s.method,
    trial_pass_rate: s.trialPassRate,
    pass_hat_k: s.passHatK,
    case_pass_rate: casePassRate,
    judge_score_mean: s.judgeScore?.mean ?? null,
    judge_score_ci: ci(s.judgeScore),
    score_value_mean: s.scoreValue?.mean ?? null,
    score_value_ci: ci(s.scoreValue),
  };
}

/** The trajectory of the reliability details as plain JSON (fresh objects), or null. */
export function trajectoryToJSON(r: ReliabilityDetails | null | undefined): TrajectoryJSON | null {
  const t = r?.trajectory;
  if (!t) return null;
  return {
    order: t.order,
    steps: t.steps.map((s) => ({ step: s.step, tool: s.tool, member: s.member, outcome: s.outcome, verdict: s.verdict, expectation: s.expectation })),
    failures: t.failures.map((f) => ({ kind: f.kind, expectation: f.expectation, step: f.step, message: f.message })),
    cut: t.cut ? { steps: t.cut.steps, failures: t.cut.failures } : null,
  };
}

/** The summary's usage keys from a run's totals. */
export function usageSummary(t: UsageTotals): Pick<SuiteResultJSON["summary"], "tokens" | "cost_usd" | "cost_unknown_cases"> {
  return { tokens: { ...t.tokens }, cost_usd: t.costUsd, cost_unknown_cases: t.unknownCostCases };
}

/** The JSON form of the data-driven verdicts (snake_case keys, fixed order), or null. */
export function expectationsToJSON(e: ExpectationsData | null | undefined): ExpectationsJSON | null {
  if (!e) return null;
  const out: ExpectationsJSON = {};
  if (e.expectedOutput) out.expected_output = { method: e.expectedOutput.method, passed: e.expectedOutput.passed, reason: e.expectedOutput.reason };
  if (e.expectedAgentTools) out.expected_agent_tools = { passed: e.expectedAgentTools.passed, reason: e.expectedAgentTools.reason };
  if (e.expectedKnowledgeSources) out.expected_knowledge_sources = { passed: e.expectedKnowledgeSources.passed, reason: e.expectedKnowledgeSources.reason };
  if (e.evalFunctions && e.evalFunctions.length > 0) out.eval_functions = e.evalFunctions.map((f) => ({ name: f.name, value: f.value, passed: f.passed, reason: f.reason }));
  return Object.keys(out).length > 0 ? out : null;
}

/** The data-driven verdicts of a JSON report entry, back in their data form (the inverse of {@link expectationsToJSON}). */
export function expectationsFromJSON(j: ExpectationsJSON | null | undefined): ExpectationsData | null {
  if (!j) return null;
  const out: { -readonly [K in keyof ExpectationsData]: ExpectationsData[K] } = {};
  if (j.expected_output) out.expectedOutput = { method: j.expected_output.method, passed: j.expected_output.passed, reason: j.expected_output.reason };
  if (j.expected_agent_tools) out.expectedAgentTools = { passed: j.expected_agent_tools.passed, reason: j.expected_agent_tools.reason };
  if (j.expected_knowledge_sources) out.expectedKnowledgeSources = { passed: j.expected_knowledge_sources.passed, reason: j.expected_knowledge_sources.reason };
  if (j.eval_functions && j.eval_functions.length > 0) out.evalFunctions = j.eval_functions.map((f) => ({ name: f.name, value: f.value, passed: f.passed, reason: f.reason }));
  return Object.keys(out).length > 0 ? out : null;
}

/** The JSON entry of one repeat. */
export function repeatToJSON(r: RepeatResultData): RepeatResultJSON {
  return {
    repeat: r.repeat,
    session_id: r.sessionId,
    duration_seconds: r.durationSeconds,
    judge_passed: r.judgePassed,
    judge_reason: r.judgeReason,
    judge_score: r.judgeScore,
    reliability_passed: r.reliabilityPassed,
    output: r.output,
    tools_called: [...r.toolsCalled],
    timed_out: r.timedOut,
    skipped: r.skipped,
    passed: r.passed,
    error: r.error,
    ...scoreToJSON(r.score),
    expectations: expectationsToJSON(r.expectations),
    attempts: r.attempts,
    worker: r.worker,
    error_kind: classifyCase(r),
    reliability_reason: r.reliabilityReason ?? null,
  };
}

/**
 * One repeat back in its data form from its JSON entry (the inverse of {@link repeatToJSON}, for a
 * run read back from the results store): what the report keeps of it, `errorKind` from its `error_kind`.
 */
export function repeatFromJSON(j: RepeatResultJSON): RepeatResultData {
  return {
    repeat: j.repeat,
    passed: j.passed,
    sessionId: j.session_id,
    durationSeconds: j.duration_seconds,
    judgePassed: j.judge_passed,
    judgeReason: j.judge_reason,
    judgeScore: j.judge_score,
    reliabilityPassed: j.reliability_passed,
    output: j.output,
    toolsCalled: [...j.tools_called],
    timedOut: j.timed_out,
    skipped: j.skipped,
    error: j.error,
    errorKind: j.error_kind ?? null,
    score: j.score_value !== null ? { value: j.score_value, passed: j.score_passed ?? false, reason: j.score_reason } : null,
    expectations: expectationsFromJSON(j.expectations),
    attempts: j.attempts,
    worker: j.worker,
    reliabilityReason: j.reliability_reason ?? null,
  };
}

/** A score as the report's three keys; all three null without one (spec K3). */
function scoreToJSON(score: Pick<ScoreData, "value" | "passed" | "reason"> | null): Pick<CaseResultJSON, "score_value" | "score_passed" | "score_reason"> {
  return { score_value: score ? score.value : null, score_passed: score ? score.passed : null, score_reason: score ? (score.reason ?? null) : null };
}
