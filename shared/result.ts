import type { RunOutput } from "./agent.ts";
import type { ScoreData } from "./score.ts";

/** Reliability details kept on the result for programmatic callers (not in the JSON report). */
export interface ReliabilityDetails {
  passed: boolean;
  passedToolCalls: string[];
  failedToolCalls: string[];
  additionalToolCalls: string[];
  missingToolCalls: string[];
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
    if (this.error) return false;
    const checks: boolean[] = [];
    if (this.judgePassed !== null) checks.push(this.judgePassed);
    if (this.reliabilityPassed !== null) checks.push(this.reliabilityPassed);
    if (this.score) checks.push(this.score.passed);
    return checks.length > 0 && checks.every(Boolean);
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
    };
  }
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
}

/** The results of one run, in declaration order. */
export class SuiteResult {
  readonly results: readonly CaseResult[];
  readonly runId: string | null;
  readonly durationSeconds: number;
  readonly cancelled: boolean;

  constructor(results: readonly CaseResult[] = [], meta: SuiteResultMeta = {}) {
    this.results = results;
    this.runId = meta.runId ?? null;
    this.durationSeconds = meta.durationSeconds ?? 0;
    this.cancelled = meta.cancelled ?? false;
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
      },
      cases: this.results.map((r) => r.toJSON()),
    };
  }
}
