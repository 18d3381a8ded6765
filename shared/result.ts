import type { RunOutput } from "./agent.ts";
import type { ScoreData } from "./score.ts";
import type { CaseUsage } from "./usage.ts";

/** Reliability details kept on the result for programmatic callers (not in the JSON report). */
export interface ReliabilityDetails {
  passed: boolean;
  passedToolCalls: string[];
  failedToolCalls: string[];
  additionalToolCalls: string[];
  missingToolCalls: string[];
}

/** The verdict of one data-driven check (`expected_output`, `expected_agent_tools`, `expected_knowledge_sources`). */
export interface ExpectationVerdict {
  passed: boolean;
  /** Why it passed or failed, one line (`missing member tool calls: multiply (members ran: add)`). */
  reason: string;
}

/** The data-driven checks a case ran; a check that is off is absent. */
export interface ExpectationsData {
  /** `method` is the scoring method used (`exact`, `contains`, `regex`, `json`, `numeric`, `judge`). */
  expectedOutput?: ExpectationVerdict & { method: string };
  expectedAgentTools?: ExpectationVerdict;
  expectedKnowledgeSources?: ExpectationVerdict;
}

/** The JSON form of {@link ExpectationsData}: the dataset field names as keys, in this order. */
export interface ExpectationsJSON {
  expected_output?: { method: string; passed: boolean; reason: string };
  expected_agent_tools?: { passed: boolean; reason: string };
  expected_knowledge_sources?: { passed: boolean; reason: string };
}

/** One run of a repeated case (`--repeat N`): its own session, evidence and verdicts. */
export interface RepeatResultData {
  /** 1-based. */
  repeat: number;
  passed: boolean;
  sessionId: string;
  /** Seconds. */
  durationSeconds: number;
  judgePassed: boolean | null;
  judgeReason: string | null;
  judgeScore: number | null;
  reliabilityPassed: boolean | null;
  output: string | null;
  toolsCalled: readonly string[];
  timedOut: boolean;
  skipped: boolean;
  error: string | null;
  score: { value: number; passed: boolean; reason?: string | null } | null;
  expectations: ExpectationsData | null;
  attempts: number;
  worker: string | null;
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
}

/** The fields of a {@link CaseResult}, as plain data (what crosses thread and process boundaries). */
export interface CaseResultData {
  name: string;
  tags: readonly string[];
  agentId: string | null;
  teamId: string | null;
  sessionId: string;
  /** Seconds, rounded to milliseconds; covers setup, the run, checks and teardown. */
  durationSeconds: number;
  judgePassed: boolean | null;
  judgeReason: string | null;
  /** 1-10 in numeric mode, `null` in binary mode. */
  judgeScore: number | null;
  reliabilityPassed: boolean | null;
  output: string | null;
  toolsCalled: readonly string[];
  timedOut: boolean;
  skipped: boolean;
  /** Every error of the case joined with `"; "`, each under its prefix (`agent:`, `judge:`, ...). */
  error: string | null;
  /** The raw final output (left out of the JSON report). */
  response: RunOutput | null;
  score: ScoreData | null;
  /** Position of the case in its suite (declaration order). */
  index: number;
  /** How many times the case was started (more than 1 after a thread crash or redelivery). */
  attempts: number;
  /** Which worker ran it: `local`, `thread-<id>`, or a worker process id in distributed mode. */
  worker: string | null;
  reliability: ReliabilityDetails | null;
  /** Verdicts of the data-driven checks; `null` when the case has none (or they did not run). */
  expectations?: ExpectationsData | null;
  /** With `--repeat N` (N > 1): every run of the case, in order; `null` otherwise. */
  repeats?: readonly RepeatResultData[] | null;
  /** Tokens and cost of the agent run, when the agent reports `metrics` (recorded by the results store, not in the JSON report). */
  usage?: CaseUsage | null;
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
}

/** The outcome of one case. Mutable while the case runs; `passed` is computed. */
export class CaseResult implements CaseResultData {
  name: string;
  tags: readonly string[];
  agentId: string | null = null;
  teamId: string | null = null;
  sessionId = "";
  durationSeconds = 0;
  judgePassed: boolean | null = null;
  judgeReason: string | null = null;
  judgeScore: number | null = null;
  reliabilityPassed: boolean | null = null;
  output: string | null = null;
  toolsCalled: readonly string[] = [];
  timedOut = false;
  skipped = false;
  error: string | null = null;
  response: RunOutput | null = null;
  score: ScoreData | null = null;
  index = 0;
  attempts = 0;
  worker: string | null = null;
  reliability: ReliabilityDetails | null = null;
  expectations: ExpectationsData | null = null;
  repeats: readonly RepeatResultData[] | null = null;
  usage: CaseUsage | null = null;

  constructor(init: Partial<CaseResultData> & { name: string }) {
    for (const [k, v] of Object.entries(init)) if (v !== undefined) (this as Record<string, unknown>)[k] = v;
    this.name = init.name;
    this.tags = init.tags ?? [];
  }

  /**
   * False when any error was recorded; otherwise true only when at least one check gave a
   * verdict and every verdict passed (spec J). Skipped and timed-out cases never pass.
   */
  get passed(): boolean {
    // A repeated case passes only when every run passed (its top-level fields are its first failing run's).
    if (this.repeats && this.repeats.length > 0) return this.repeats.every((r) => r.passed);
    if (this.error) return false;
    const checks: boolean[] = [];
    if (this.judgePassed !== null) checks.push(this.judgePassed);
    if (this.reliabilityPassed !== null) checks.push(this.reliabilityPassed);
    if (this.score) checks.push(this.score.passed);
    const e = this.expectations;
    if (e) for (const v of [e.expectedOutput, e.expectedAgentTools, e.expectedKnowledgeSources]) if (v) checks.push(v.passed);
    return checks.length > 0 && checks.every(Boolean);
  }

  /** With repeats: the fraction of runs that passed (0-1); otherwise `null`. */
  get passRate(): number | null {
    if (!this.repeats || this.repeats.length === 0) return null;
    return this.repeats.filter((r) => r.passed).length / this.repeats.length;
  }

  /** With repeats: pass@k for k = 1..N (the chance that at least one of k runs drawn passes); otherwise `null`. */
  get passAtK(): Record<string, number> | null {
    if (!this.repeats || this.repeats.length === 0) return null;
    const n = this.repeats.length;
    const c = this.repeats.filter((r) => r.passed).length;
    const out: Record<string, number> = {};
    for (let k = 1; k <= n; k++) out[String(k)] = passAtK(n, c, k);
    return out;
  }

  /** Appends one error part, joined with `"; "` (spec L4). */
  addError(message: string): void {
    if (!message) return;
    this.error = this.error ? `${this.error}; ${message}` : message;
  }

  /** Plain data (with `response` as given: sanitise it before it crosses a boundary). */
  toData(): CaseResultData {
    // Own fields only: the computed `passed` getter lives on the prototype.
    return { ...this };
  }

  /** Rebuilds a result from plain data. */
  static fromData(data: CaseResultData): CaseResult {
    return new CaseResult({ ...data });
  }

  /** The stable JSON contract (spec K2 plus `index`, `attempts`, `worker`). */
  toJSON(): CaseResultJSON {
    return {
      name: this.name,
      agent_id: this.agentId,
      team_id: this.teamId,
      tags: [...this.tags],
      session_id: this.sessionId,
      duration_seconds: this.durationSeconds,
      judge_passed: this.judgePassed,
      judge_reason: this.judgeReason,
      judge_score: this.judgeScore,
      reliability_passed: this.reliabilityPassed,
      output: this.output,
      tools_called: [...this.toolsCalled],
      timed_out: this.timedOut,
      skipped: this.skipped,
      passed: this.passed,
      error: this.error,
      score_value: this.score ? this.score.value : null,
      score_passed: this.score ? this.score.passed : null,
      score_reason: this.score ? (this.score.reason ?? null) : null,
      index: this.index,
      attempts: this.attempts,
      worker: this.worker,
      expectations: expectationsToJSON(this.expectations),
      repeats: this.repeats && this.repeats.length > 0 ? this.repeats.map(repeatToJSON) : null,
      pass_rate: this.passRate,
      pass_at_k: this.passAtK,
    };
  }
}

/**
 * pass@k from n runs of which c passed: 1 - C(n-c, k) / C(n, k), the unbiased estimator of the
 * chance that at least one of k runs passes (Chen et al., 2021). Pure.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k <= 0 || n <= 0 || k > n) return Number.NaN;
  if (n - c < k) return 1;
  // pass@1 is the pass rate, exactly (the product form would round it differently).
  if (k === 1) return c / n;
  // The product form avoids huge binomials: C(n-c,k)/C(n,k) = prod_{i<k} (n-c-i)/(n-i).
  let fail = 1;
  for (let i = 0; i < k; i++) fail *= (n - c - i) / (n - i);
  return 1 - fail;
}

/** The JSON form of the data-driven verdicts (snake_case keys, fixed order), or null. */
export function expectationsToJSON(e: ExpectationsData | null | undefined): ExpectationsJSON | null {
  if (!e) return null;
  const out: ExpectationsJSON = {};
  if (e.expectedOutput) out.expected_output = { method: e.expectedOutput.method, passed: e.expectedOutput.passed, reason: e.expectedOutput.reason };
  if (e.expectedAgentTools) out.expected_agent_tools = { passed: e.expectedAgentTools.passed, reason: e.expectedAgentTools.reason };
  if (e.expectedKnowledgeSources) out.expected_knowledge_sources = { passed: e.expectedKnowledgeSources.passed, reason: e.expectedKnowledgeSources.reason };
  return Object.keys(out).length > 0 ? out : null;
}

function repeatToJSON(r: RepeatResultData): RepeatResultJSON {
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
    score_value: r.score ? r.score.value : null,
    score_passed: r.score ? r.score.passed : null,
    score_reason: r.score ? (r.score.reason ?? null) : null,
    expectations: expectationsToJSON(r.expectations),
    attempts: r.attempts,
    worker: r.worker,
  };
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
  };
  cases: CaseResultJSON[];
}

/** Options of a {@link SuiteResult} besides its results. */
export interface SuiteResultMeta {
  runId?: string | null;
  /** Wall time of the run in seconds. */
  durationSeconds?: number;
  /** The run was cancelled (signal, Ctrl-C, deadline) before every case finished. */
  cancelled?: boolean;
  /** The run passes when at least this fraction (0-1) of its cases pass. Default: none (every case must pass). */
  passThreshold?: number | null;
  /** Runs per case. Default 1. */
  repeat?: number;
}

/** The results of one run, in declaration order. */
export class SuiteResult {
  readonly results: readonly CaseResult[];
  readonly runId: string | null;
  readonly durationSeconds: number;
  readonly cancelled: boolean;
  /** The run-level pass threshold (0-1), or null. */
  readonly passThreshold: number | null;
  /** Runs per case. */
  readonly repeat: number;

  constructor(results: readonly CaseResult[] = [], meta: SuiteResultMeta = {}) {
    this.results = results;
    this.runId = meta.runId ?? null;
    this.durationSeconds = meta.durationSeconds ?? 0;
    this.cancelled = meta.cancelled ?? false;
    this.passThreshold = meta.passThreshold ?? null;
    this.repeat = meta.repeat ?? 1;
  }

  /** passed / total; 0 for an empty run. */
  get passRate(): number {
    return this.total === 0 ? 0 : this.passed / this.total;
  }

  /**
   * With a pass threshold: whether at least that fraction of the cases passed (an empty run never
   * meets it). Without one: `null` (the run then needs every case to pass).
   */
  get thresholdMet(): boolean | null {
    if (this.passThreshold === null) return null;
    // The tiny slack absorbs float rounding: 19/20 must meet 0.95.
    return this.total > 0 && this.passed / this.total >= this.passThreshold - 1e-12;
  }

  /** With repeats: the mean over cases of pass@k, k = 1..repeat (a case without runs counts 0); otherwise null. */
  get passAtK(): Record<string, number> | null {
    if (this.repeat <= 1 || this.total === 0) return null;
    const sums: number[] = new Array<number>(this.repeat).fill(0);
    for (const r of this.results) {
      const p = r.passAtK;
      if (!p) continue;
      for (let k = 1; k <= this.repeat; k++) sums[k - 1]! += p[String(k)] ?? 0;
    }
    const out: Record<string, number> = {};
    sums.forEach((sum, i) => (out[String(i + 1)] = sum / this.total));
    return out;
  }

  get total(): number {
    return this.results.length;
  }

  get passed(): number {
    return this.results.filter((r) => r.passed).length;
  }

  /** Every case that did not pass, skipped ones included. */
  get failed(): number {
    return this.total - this.passed;
  }

  get skipped(): number {
    return this.results.filter((r) => r.skipped).length;
  }

  /** An empty suite is `"FAIL"`, so a mistyped `--tag` cannot pass a gate. */
  get status(): SuiteStatus {
    return this.total > 0 && this.passed === this.total ? "PASS" : "FAIL";
  }

  /** The stable JSON report: Agno's keys in Agno's order, then additive keys. */
  toJSON(): SuiteResultJSON {
    const passed = this.passed;
    return {
      summary: {
        total: this.total,
        passed,
        failed: this.total - passed,
        status: this.status,
        skipped: this.skipped,
        run_id: this.runId,
        duration_seconds: this.durationSeconds,
        pass_rate: this.total === 0 ? 0 : passed / this.total,
        pass_threshold: this.passThreshold,
        repeat: this.repeat,
        pass_at_k: this.passAtK,
      },
      cases: this.results.map((r) => r.toJSON()),
    };
  }
}
