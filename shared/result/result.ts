// runs in: both
import { passAtKTable } from "../trials/pass-at-k.ts";
import { meetsCasePassRate } from "../trials/case-pass-rule.ts";
import type { RunStatistics } from "./run-statistics.ts";
import { arrayResultSource, type ResultSource } from "./result-source.ts";
import { tallyCases, type SuiteTally } from "./suite-tally.ts";
import { caseResultToJSON, type CaseResultJSON, type SuiteResultJSON, type SuiteStatus } from "./result-json.ts";
import type { CaseResultData } from "../wire/result-data.ts";
import { classifyCase, mergeErrorKind, type ErrorKind, type ErrorPartKind } from "./error-kind.ts";
import type { UsageTotals } from "../providers/prices.ts";
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
  /** Where the case results come from (shared/result/result-source.ts). */
  readonly #source: ResultSource<CaseResult>;
  /** The results in memory: the given array, or a spooled run's once {@link results} was read. */
  #held: readonly CaseResult[] | null;
  /** The figures of a source that reads copies (they cannot change): computed once. */
  #tallied: SuiteTally | null = null;

  /**
   * `results`: the case results in declaration order, in memory, or a {@link ResultSource} that
   * reads them back (a distributed run's spool), walked by {@link cases} without holding them all.
   */
  constructor(results: readonly CaseResult[] | ResultSource<CaseResult> = [], meta: SuiteResultMeta = {}) {
    const inMemory = Array.isArray(results);
    this.#source = inMemory ? arrayResultSource(results as readonly CaseResult[]) : (results as ResultSource<CaseResult>);
    this.#held = inMemory ? (results as readonly CaseResult[]) : null;
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

  /**
   * Every case result in declaration order, as an array in memory. A run whose results are spooled
   * (a distributed run's) reads every one back from its file at the first read and holds them from
   * then on: about 500 B per trivial case and the full size of each output; a report that can walk
   * the results reads {@link cases} instead. Changes made to these objects are what the run reports.
   */
  get results(): readonly CaseResult[] {
    if (this.#held === null) {
      this.#held = [...this.#source];
      this.#tallied = null;
    }
    return this.#held;
  }

  /** The case results in declaration order, one at a time: a spooled run reads each back as it is reached (a fresh copy each walk). */
  cases(): Iterable<CaseResult> {
    return this.#held ?? this.#source;
  }

  /** Whether the results are read back from a spool (fresh copies each walk), not held in memory (until {@link results} is read). */
  get spooled(): boolean {
    return this.#held === null && this.#source.readsCopies;
  }

  /**
   * Lets go of a spooled run's file (its results can no longer be read; the figures already
   * computed stay). Without a call, the file goes when this object is collected or the process
   * exits. Nothing to do for results in memory.
   */
  release(): void {
    if (this.#held === null) this.#tally();
    this.#source.close?.();
  }

  /** The same run with other case results (every run-level fact kept: id, duration, start, cancel, threshold, repeat). */
  withResults(results: readonly CaseResult[] | ResultSource<CaseResult>): SuiteResult {
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
   * Every figure of the cases, in one walk (shared/result/suite-tally.ts). Results in memory are
   * mutable until the run is reported, so their figures are computed on each read, in O(cases +
   * trials); a spool's copies cannot change, so its figures are computed once.
   */
  #tally(): SuiteTally {
    if (this.#tallied) return this.#tallied;
    const t = tallyCases(this.cases(), this.repeat, this.#confidence);
    if (this.#held === null && this.#source.readsCopies) this.#tallied = t;
    return t;
  }

  /**
   * The run's statistics (shared/result/run-statistics.ts): the pass rate's interval, pass^k, the
   * mean scores with intervals, at the run's confidence. Computed on each read (results are mutable
   * until the run is reported), in O(cases + trials).
   */
  get statistics(): RunStatistics {
    return statisticsOf(this.#tally());
  }

  /** passed / total; 0 for an empty run. */
  get passRate(): number {
    const t = this.#tally();
    return t.total === 0 ? 0 : t.passed / t.total;
  }

  /**
   * With a pass threshold: whether at least that fraction of the cases passed (an empty run never
   * meets it). Without one: `null` (the run then needs every case to pass).
   */
  get thresholdMet(): boolean | null {
    if (this.passThreshold === null) return null;
    const t = this.#tally();
    // The tiny slack absorbs float rounding: 19/20 must meet 0.95.
    return t.total > 0 && t.passed / t.total >= this.passThreshold - 1e-12;
  }

  /** With repeats: the mean over cases of pass@k, k = 1..repeat (a case without runs counts 0); otherwise null. */
  get passAtK(): Record<string, number> | null {
    return this.#passAtKOf(this.#tally());
  }

  #passAtKOf(t: SuiteTally): Record<string, number> | null {
    if (this.repeat <= 1 || t.total === 0 || !t.passAtKSums) return null;
    const out: Record<string, number> = {};
    t.passAtKSums.forEach((sum, i) => (out[String(i + 1)] = sum / t.total));
    return out;
  }

  get total(): number {
    return this.#held ? this.#held.length : this.#source.size;
  }

  get passed(): number {
    return this.#tally().passed;
  }

  /** Every case that did not pass, skipped ones included. */
  get failed(): number {
    const t = this.#tally();
    return t.total - t.passed;
  }

  get skipped(): number {
    return this.#tally().skipped;
  }

  /** Tokens (agent, judge, both) and cost of the run; cost of cases of unknown cost counted as 0, and how many they are. */
  get usage(): UsageTotals {
    const u = this.#tally().usage;
    return { tokens: { ...u.tokens }, costUsd: u.costUsd, unknownCostCases: u.unknownCostCases };
  }

  /** Cases that failed for the infrastructure's sake (`error_kind: "infra"`). */
  get infraErrors(): number {
    return this.#tally().infraErrors;
  }

  /** Whether the run failed only for the infrastructure's sake: some case failed, and every failed case is `infra` (skipped ones aside). */
  get onlyInfraFailures(): boolean {
    const t = this.#tally();
    return t.failedRun > 0 && t.failedRun === t.failedRunInfra;
  }

  /** An empty suite is `"FAIL"`, so a mistyped `--tag` cannot pass a gate. */
  get status(): SuiteStatus {
    return this.#statusOf(this.#tally());
  }

  #statusOf(t: SuiteTally): SuiteStatus {
    return t.total > 0 && t.passed === t.total ? "PASS" : "FAIL";
  }

  /** The response cache's hits and misses over every case (`--cache`), or null when no case went through it. */
  get modelCache(): { hits: number; misses: number } | null {
    return this.#modelCacheOf(this.#tally());
  }

  #modelCacheOf(t: SuiteTally): { hits: number; misses: number } | null {
    return t.modelCache.cases === 0 ? null : { hits: t.modelCache.hits, misses: t.modelCache.misses };
  }

  /**
   * Adaptive repeats (`--repeat MIN..MAX`): the trials the run spent, the most it could have spent
   * (every case at MAX), the difference, and the cases stopped at MAX or by the run with their
   * interval still around their rule. Null for a fixed repeat.
   */
  get adaptiveRepeats(): AdaptiveRepeatsSummary | null {
    return this.#adaptiveOf(this.#tally());
  }

  #adaptiveOf(t: SuiteTally): AdaptiveRepeatsSummary | null {
    if (this.repeatMax <= this.repeat) return null;
    const max = t.total * this.repeatMax;
    return { min: this.repeat, max: this.repeatMax, trialsSpent: t.trialsSpent, trialsMax: max, trialsSaved: max - t.trialsSpent, undecidedCases: t.undecidedCases };
  }

  /** The JSON report's `summary`: every figure of the run, in the report's key order, from one walk over its cases. */
  summaryJSON(): SuiteResultJSON["summary"] {
    const t = this.#tally();
    const statistics = statisticsOf(t);
    const a = this.#adaptiveOf(t);
    const cache = this.#modelCacheOf(t);
    return {
      total: t.total,
      passed: t.passed,
      failed: t.total - t.passed,
      status: this.#statusOf(t),
      skipped: t.skipped,
      run_id: this.runId,
      duration_seconds: this.durationSeconds,
      pass_rate: t.total === 0 ? 0 : t.passed / t.total,
      pass_threshold: this.passThreshold,
      repeat: this.repeat,
      pass_at_k: this.#passAtKOf(t),
      infra_errors: t.infraErrors,
      ...usageSummary({ tokens: { ...t.usage.tokens }, costUsd: t.usage.costUsd, unknownCostCases: t.usage.unknownCostCases }),
      budget: this.budget ? { usd: this.budget.usd, tokens: this.budget.tokens, exhausted: this.budget.exhausted } : null,
      ...(cache ? { model_cache: cache } : {}),
      ...statisticsSummary(statistics, this.casePassRate),
      adaptive_repeats: a ? { min: a.min, max: a.max, trials_spent: a.trialsSpent, trials_max: a.trialsMax, trials_saved: a.trialsSaved, undecided_cases: a.undecidedCases } : null,
    };
  }

  /** The JSON report's `cases`, one entry at a time in declaration order (a spooled run reads each result back as it is reached). */
  *casesJSON(): Generator<CaseResultJSON> {
    const confidence = statisticsOf(this.#tally()).confidence;
    for (const r of this.cases()) yield caseResultToJSON(r, confidence);
  }

  /**
   * The stable JSON report: Agno's keys in Agno's order, then additive keys. The whole document in
   * memory: coordinator/report/json-report.ts writes the same text from {@link summaryJSON} and
   * {@link casesJSON} a case at a time.
   */
  toJSON(): SuiteResultJSON {
    return { summary: this.summaryJSON(), cases: [...this.casesJSON()] };
  }
}

/** The statistics of a tally, or the error computing them met (thrown where they are read, as before). */
function statisticsOf(t: SuiteTally): RunStatistics {
  if (t.statistics instanceof Error) throw t.statistics;
  return t.statistics;
}
