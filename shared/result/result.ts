// runs in: both
import { passAtKTable } from "../trials/pass-at-k.ts";
import { meetsCasePassRate } from "../trials/case-pass-rule.ts";
import { runStatistics, type RunStatistics } from "./run-statistics.ts";
import { caseResultToJSON, type CaseResultJSON, type SuiteResultJSON, type SuiteStatus } from "./result-json.ts";
import type { CaseResultData } from "../wire/result-data.ts";
import { classifyCase, mergeErrorKind, type ErrorKind, type ErrorPartKind } from "./error-kind.ts";
import { usageTotals, type UsageTotals } from "../providers/prices.ts";
import { statisticsSummary, usageSummary } from "./result-json.ts";

/**
 * The outcome of one case ({@link CaseResult}) and of one run ({@link SuiteResult}), as classes
 * with the verdicts computed from the data. The data's shape is written once, as a zod schema
 * (shared/wire/result-data.ts); the JSON report is its projection (shared/result/result-json.ts).
 */

/** The data fields of a {@link CaseResult}: every field of {@link CaseResultData}, `null` when absent. */
export type CaseResultFields = { [K in keyof CaseResultData]-?: Exclude<CaseResultData[K], undefined> };

// The class's fields are the data's fields (declaration merging): written once, in the schema.
export interface CaseResult extends CaseResultFields {}

/** The outcome of one case. Mutable while the case runs; `passed` is computed. */
export class CaseResult {
  constructor(init: Partial<CaseResultData> & { name: string }) {
    // One named store per field, in the schema's order (`toData()` returns them in this order), so
    // every result has the same hidden class with its fields in the object. Copying them in a loop
    // or with Object.assign turned each result into a dictionary (measured: 1.6 KB of properties
    // and a map of its own per result, against about 280 B; docs/design.md, "What a case costs the
    // coordinator"). A test holds this list to the schema's fields and their order.
    this.name = init.name;
    this.tags = init.tags ?? [];
    this.agentId = init.agentId ?? null;
    this.teamId = init.teamId ?? null;
    this.sessionId = init.sessionId ?? "";
    this.durationSeconds = init.durationSeconds ?? 0;
    this.judgePassed = init.judgePassed ?? null;
    this.judgeReason = init.judgeReason ?? null;
    this.judgeScore = init.judgeScore ?? null;
    this.reliabilityPassed = init.reliabilityPassed ?? null;
    this.output = init.output ?? null;
    this.toolsCalled = init.toolsCalled ?? [];
    this.timedOut = init.timedOut ?? false;
    this.skipped = init.skipped ?? false;
    this.error = init.error ?? null;
    this.errorKind = init.errorKind ?? null;
    this.attempts = init.attempts ?? 0;
    this.worker = init.worker ?? null;
    this.response = init.response ?? null;
    this.score = init.score ?? null;
    this.index = init.index ?? 0;
    this.reliability = init.reliability ?? null;
    this.expectations = init.expectations ?? null;
    this.repeats = init.repeats ?? null;
    this.usage = init.usage ?? null;
    this.runStatus = init.runStatus ?? null;
    this.caseId = init.caseId ?? null;
    this.metadata = init.metadata ?? null;
    this.phaseSeconds = init.phaseSeconds ?? null;
    this.transcript = init.transcript ?? null;
    this.modelCache = init.modelCache ?? null;
    this.casePassRate = init.casePassRate ?? null;
    this.adaptive = init.adaptive ?? null;
  }

  /**
   * False when any error was recorded; otherwise true only when at least one check gave a
   * verdict and every verdict passed (spec J). Skipped and timed-out cases never pass.
   */
  get passed(): boolean {
    // A repeated case passes when enough of its runs passed: by default every one (its top-level fields are its first failing run's).
    if (this.repeats && this.repeats.length > 0) return meetsCasePassRate(this.repeats, this.casePassRate);
    if (this.error) return false;
    const checks: boolean[] = [];
    if (this.judgePassed !== null) checks.push(this.judgePassed);
    if (this.reliabilityPassed !== null) checks.push(this.reliabilityPassed);
    if (this.score) checks.push(this.score.passed);
    const e = this.expectations;
    if (e) for (const v of [e.expectedOutput, e.expectedAgentTools, e.expectedKnowledgeSources, ...(e.evalFunctions ?? [])]) if (v) checks.push(v.passed);
    return checks.length > 0 && checks.every(Boolean);
  }

  /** With repeats: the fraction of runs that passed (0-1); otherwise `null`. */
  get passRate(): number | null {
    if (!this.repeats || this.repeats.length === 0) return null;
    return this.repeats.filter((r) => r.passed).length / this.repeats.length;
  }

  /** With repeats: pass@k for k = 1..N (the chance that at least one of k runs drawn passes); otherwise `null`. */
  get passAtK(): Record<string, number> | null {
    return passAtKTable(this.repeats ?? []);
  }

  /**
   * Why the case failed, by cause (the JSON report's `error_kind`, shared/result/error-kind.ts): `null`
   * when it passed or was skipped, `timeout`, or the cause its errors were recorded with.
   */
  get failureKind(): ErrorKind | null {
    return classifyCase(this);
  }

  /**
   * Appends one error part, joined with `"; "` (spec L4). `kind` is its cause (default `agent`:
   * the case's own code); `null` leaves the recorded cause as it is (a timeout, a cancel).
   */
  addError(message: string, kind: ErrorPartKind | null = "agent"): void {
    if (!message) return;
    this.error = this.error ? `${this.error}; ${message}` : message;
    if (kind) this.errorKind = mergeErrorKind(this.errorKind === "timeout" ? null : this.errorKind, kind);
  }

  /** Plain data (with `response` as given: sanitise it before it crosses a boundary). */
  toData(): CaseResultData {
    // Own fields only: the computed `passed` getter lives on the prototype. Copied key by key in
    // one loop: V8 spreads a class instance of this many fields slowly (about 5 us against 1 us,
    // measured), and every case's result is copied once on its way out of its thread.
    const data: Record<string, unknown> = {};
    for (const k of Object.keys(this)) data[k] = (this as Record<string, unknown>)[k];
    return data as unknown as CaseResultData;
  }

  /** Rebuilds a result from plain data (the data is copied, never kept). */
  static fromData(data: CaseResultData): CaseResult {
    return new CaseResult(data);
  }

  /** The stable JSON contract (spec K2 plus `index`, `attempts`, `worker`); see shared/result/result-json.ts. */
  toJSON(): CaseResultJSON {
    return caseResultToJSON(this);
  }
}

/** Options of a {@link SuiteResult} besides its results. */
export interface SuiteResultMeta {
  runId?: string | null;
  /** Wall time of the run in seconds. */
  durationSeconds?: number;
  /** When the run started (ISO 8601); a resumed distributed run's is its first coordinator's. Default: unknown (null). */
  startedAt?: string | null;
  /** The run was cancelled (signal, Ctrl-C, deadline) before every case finished. */
  cancelled?: boolean;
  /** The run passes when at least this fraction (0-1) of its cases pass. Default: none (every case must pass). */
  passThreshold?: number | null;
  /** Runs per case (MIN of `--repeat MIN..MAX`). Default 1. */
  repeat?: number;
  /** The most runs a case may get: MAX of `--repeat MIN..MAX`; `repeat` (the default) for a fixed repeat. */
  repeatMax?: number;
  /** The run's budgets (`--budget-usd`, `--budget-tokens`) and whether they ran out; null without any. */
  budget?: RunBudget | null;
  /** Two-sided confidence of the report's intervals (`--confidence`, 0-1 exclusive). Default: the statistics' (0.95). */
  confidence?: number;
  /** The run's pass rule of a repeated case (`--case-pass-rate`, else the suite's); null: unknown (a run rebuilt from the store). */
  casePassRate?: number | null;
}

/** What adaptive repeats spent and saved (the summary's `adaptive_repeats`). */
export interface AdaptiveRepeatsSummary {
  min: number;
  max: number;
  /** Trials that ran (a trial skipped by a cancel does not count). */
  trialsSpent: number;
  /** Cases x MAX: what a fixed `--repeat MAX` would have run. */
  trialsMax: number;
  trialsSaved: number;
  /** Cases marked `decided: false`: judged on their point estimate. */
  undecidedCases: number;
}

/** A run's budgets and whether they ran out (the summary's `budget`). */
export interface RunBudget {
  usd: number | null;
  tokens: number | null;
  exhausted: boolean;
}

/** The results of one run, in declaration order. */
export class SuiteResult {
  readonly results: readonly CaseResult[];
  readonly runId: string | null;
  readonly durationSeconds: number;
  /** When the run started (ISO 8601), when known: JUnit's `timestamp` and the results store's start. */
  readonly startedAt: string | null;
  readonly cancelled: boolean;
  /** The run-level pass threshold (0-1), or null. */
  readonly passThreshold: number | null;
  /** Runs per case (MIN of an adaptive run). */
  readonly repeat: number;
  /** The most runs a case may get (MAX of `--repeat MIN..MAX`); `repeat` for a fixed repeat. */
  readonly repeatMax: number;
  /** The run's budgets and whether they ran out, or null. */
  readonly budget: RunBudget | null;
  /** The confidence of the intervals, as given (undefined: the statistics' default). */
  readonly #confidence: number | undefined;
  /** The run's pass rule of a repeated case, or null when unknown. */
  readonly casePassRate: number | null;

  constructor(results: readonly CaseResult[] = [], meta: SuiteResultMeta = {}) {
    this.results = results;
    this.runId = meta.runId ?? null;
    this.durationSeconds = meta.durationSeconds ?? 0;
    this.startedAt = meta.startedAt ?? null;
    this.cancelled = meta.cancelled ?? false;
    this.passThreshold = meta.passThreshold ?? null;
    this.repeat = meta.repeat ?? 1;
    this.repeatMax = Math.max(this.repeat, meta.repeatMax ?? this.repeat);
    this.budget = meta.budget ?? null;
    this.#confidence = meta.confidence;
    this.casePassRate = meta.casePassRate ?? null;
  }

  /** The same run with other case results (every run-level fact kept: id, duration, start, cancel, threshold, repeat). */
  withResults(results: readonly CaseResult[]): SuiteResult {
    return new SuiteResult(results, {
      runId: this.runId,
      durationSeconds: this.durationSeconds,
      startedAt: this.startedAt,
      cancelled: this.cancelled,
      passThreshold: this.passThreshold,
      repeat: this.repeat,
      repeatMax: this.repeatMax,
      budget: this.budget,
      ...(this.#confidence === undefined ? {} : { confidence: this.#confidence }),
      casePassRate: this.casePassRate,
    });
  }

  /**
   * The run's statistics (shared/result/run-statistics.ts): the pass rate's interval, pass^k, the
   * mean scores with intervals, at the run's confidence. Computed on each read (results are mutable
   * until the run is reported), in O(cases + trials).
   */
  get statistics(): RunStatistics {
    return runStatistics(this.results, this.#confidence);
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

  /** Tokens (agent, judge, both) and cost of the run; cost of cases of unknown cost counted as 0, and how many they are. */
  get usage(): UsageTotals {
    return usageTotals(this.results.map((r) => r.usage));
  }

  /** Cases that failed for the infrastructure's sake (`error_kind: "infra"`). */
  get infraErrors(): number {
    return this.results.filter((r) => r.failureKind === "infra").length;
  }

  /** Whether the run failed only for the infrastructure's sake: some case failed, and every failed case is `infra` (skipped ones aside). */
  get onlyInfraFailures(): boolean {
    const failed = this.results.filter((r) => !r.passed && !r.skipped);
    return failed.length > 0 && failed.every((r) => r.failureKind === "infra");
  }

  /** An empty suite is `"FAIL"`, so a mistyped `--tag` cannot pass a gate. */
  get status(): SuiteStatus {
    return this.total > 0 && this.passed === this.total ? "PASS" : "FAIL";
  }

  /** The response cache's hits and misses over every case (`--cache`), or null when no case went through it. */
  get modelCache(): { hits: number; misses: number } | null {
    const used = this.results.filter((r) => r.modelCache);
    if (used.length === 0) return null;
    return { hits: used.reduce((n, r) => n + r.modelCache!.hits, 0), misses: used.reduce((n, r) => n + r.modelCache!.misses, 0) };
  }

  /**
   * Adaptive repeats (`--repeat MIN..MAX`): the trials the run spent, the most it could have spent
   * (every case at MAX), the difference, and the cases stopped at MAX or by the run with their
   * interval still around their rule. Null for a fixed repeat.
   */
  get adaptiveRepeats(): AdaptiveRepeatsSummary | null {
    if (this.repeatMax <= this.repeat) return null;
    let spent = 0;
    let undecided = 0;
    for (const r of this.results) {
      spent += r.repeats?.filter((t) => !t.skipped).length ?? 0;
      if (r.adaptive && !r.adaptive.decided) undecided++;
    }
    const max = this.total * this.repeatMax;
    return { min: this.repeat, max: this.repeatMax, trialsSpent: spent, trialsMax: max, trialsSaved: max - spent, undecidedCases: undecided };
  }

  #adaptiveJSON(): SuiteResultJSON["summary"]["adaptive_repeats"] {
    const a = this.adaptiveRepeats;
    return a ? { min: a.min, max: a.max, trials_spent: a.trialsSpent, trials_max: a.trialsMax, trials_saved: a.trialsSaved, undecided_cases: a.undecidedCases } : null;
  }

  #modelCacheJSON(): { model_cache?: { hits: number; misses: number } } {
    const cache = this.modelCache;
    return cache ? { model_cache: cache } : {};
  }

  /** The stable JSON report: Agno's keys in Agno's order, then additive keys. */
  toJSON(): SuiteResultJSON {
    const passed = this.passed;
    const statistics = this.statistics;
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
        infra_errors: this.infraErrors,
        ...usageSummary(this.usage),
        budget: this.budget ? { usd: this.budget.usd, tokens: this.budget.tokens, exhausted: this.budget.exhausted } : null,
        ...this.#modelCacheJSON(),
        ...statisticsSummary(statistics, this.casePassRate),
        adaptive_repeats: this.#adaptiveJSON(),
      },
      cases: this.results.map((r) => caseResultToJSON(r, statistics.confidence)),
    };
  }
}
