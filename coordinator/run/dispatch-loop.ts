import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import pLimit from "p-limit";
import type { RunEvent } from "../../shared/case/agent.ts";
import type { Case } from "../../shared/case/case.ts";
import { CaseResult, SuiteResult } from "../../shared/result/result.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { round3 } from "../../shared/py-format.ts";
import { callSyncHook, type SuiteHooks } from "../../shared/hooks.ts";
import { ResultCollector } from "./reassemble.ts";
import type { LimitTable } from "../../shared/providers/limit-spec.ts";
import { BUILTIN_PRICES, priceUsage, type PriceTable } from "../../shared/providers/prices.ts";
import { BUDGET_EXHAUSTED, BudgetMeter, hasBudget, type Budget } from "../../shared/providers/budget.ts";
import type { SelectedCase } from "./select.ts";
import { applyCasePassRule } from "../../shared/trials/case-pass-rule.ts";
import type { RunPhase } from "./state.ts";

/**
 * The dispatch loop shared by the inline runner and the thread pool: bounded concurrency,
 * presentation hooks, cancellation, and reassembly in declaration order. Writes nothing to the console.
 */

/** Why unrun cases are skipped when the suite stops early (Agno's text, kept for every early stop). */
export const SUITE_ABORTED_REASON = "suite aborted after cancelled run";


/** Runs one selected case; must never throw (a crash becomes an error result). */
export type CaseExecutor = (selected: SelectedCase, context: ExecutorContext) => Promise<CaseResult>;

/** What the loop hands an executor with each case. */
export interface ExecutorContext {
  signal: AbortSignal;
  onRunEvent: SuiteHooks["onRunEvent"];
  /**
   * Adaptive repeats: how many of the `wanted` trials of a case's next batch may run, given its
   * trials so far: 0 once the run stops; with a budget, those that fit in what is left at the
   * mean cost of its trials (the extra trials are what a budget bounds first).
   */
  trialsAllowed: (trials: readonly CaseResult[], wanted: number) => number;
}

/** Options of {@link runSelected}. */
export interface EngineOptions extends SuiteHooks {
  /** Cases in flight at once, >= 1: the caller's compiled value (1 keeps Agno's sequential order). */
  concurrency: number;
  /** Cancels the run: nothing new starts, in-flight cases are aborted, unrun cases are skipped. */
  signal?: AbortSignal | null;
  /** Default: a new UUID. */
  runId?: string | null;
  /** Told of every state change. */
  onStateChange?: ((state: RunPhase) => void) | null;
  /** The run passes when at least this fraction (0-1) of the cases pass; kept on the SuiteResult. Default: none. */
  passThreshold?: number | null;
  /** Runs per case (`--repeat`; MIN of `--repeat MIN..MAX`); kept on the SuiteResult (the executor runs them). Default 1. */
  repeat?: number;
  /** MAX of adaptive repeats (`--repeat MIN..MAX`), kept on the SuiteResult. Default: `repeat`. */
  repeatMax?: number;
  /**
   * A repeated case passes when at least this fraction of its trials pass, unless the case sets its
   * own `passRate` (shared/trials/case-pass-rule.ts). Default: every trial (1).
   */
  casePassRate?: number | null;
  /** Two-sided confidence of the report's intervals, kept on the SuiteResult. Default: the statistics' (0.95). */
  confidence?: number;
  /** Retries of a case whose failure is `infra` (`--retries`; the executor runs them, shared/trials/infra-retry.ts). Default 0. */
  retries?: number;
  /**
   * Provider limits by key for this process's limiter (the executor's; docs/providers.md), already
   * merged (suite, `EVALFLEET_LIMITS`, `--limit`). Default: none configured (keys learn their limits).
   */
  limits?: LimitTable | null;
  /** Prices by model over the built-in table (shared/providers/prices.ts): each result's cost is filled in as it arrives. Default: the built-in table. */
  prices?: PriceTable | null;
  /** `--budget-usd` / `--budget-tokens`: once spent, nothing new starts and the rest is skipped (`skipped: budget exhausted`). Default none. */
  budget?: Budget | null;
}

/**
 * True when the case's agent run ended `cancelled` (spec M1: the suite stops). Read from the run
 * status a thread or a worker sends with the result, or from the raw response of an inline run.
 */
export function endedCancelled(result: Pick<CaseResult, "runStatus" | "response">): boolean {
  return (result.runStatus ?? result.response?.status) === "cancelled";
}

/**
 * Validates a concurrency-like count: a whole number >= 1, returned as is; else a usage error
 * naming `field` and `given` (what the caller wrote, when `value` was defaulted from it).
 */
export function positiveInt(value: number, field: string, given: unknown = value): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a whole number >= 1, got ${String(given)}`, { field, value: given });
  }
  return value;
}

/** Runs the selected cases and returns them in declaration order, every one accounted for. */
export async function runSelected(selected: readonly SelectedCase[], execute: CaseExecutor, options: EngineOptions): Promise<SuiteResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const concurrency = positiveInt(options.concurrency, "concurrency");
  const runId = options.runId || randomUUID();
  const setState = (s: RunPhase): void => void options.onStateChange?.(s);
  const collector = new ResultCollector(selected);
  const cancel = new AbortController();
  // Every in-flight case listens on this signal; thousands may be in flight.
  setMaxListeners(0, cancel.signal);
  let stopped = false;
  const onAbort = (): void => {
    stopped = true;
    setState("cancelling");
    cancel.abort(options.signal?.reason);
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  setState("dispatching");
  const limit = pLimit(concurrency);
  const prices: PriceTable = { ...BUILTIN_PRICES, ...(options.prices ?? {}) };
  const meter = hasBudget(options.budget) ? new BudgetMeter(options.budget) : null;
  let budgetSpent = false;
  const trialsAllowed = (trials: readonly CaseResult[], wanted: number): number => (stopped ? 0 : meter ? meter.trialsThatFit(trials.map((t) => priceUsage(t.usage, prices)), wanted, false) : wanted);
  try {
    await Promise.all(
      selected.map((sel) =>
        limit(async () => {
          if (stopped) return;
          const startErrors: string[] = [];
          if (options.onCaseStart) callSyncHook("onCaseStart", () => options.onCaseStart!(sel.case), (m) => startErrors.push(m));
          const result = await execute(sel, { signal: cancel.signal, onRunEvent: options.onRunEvent, trialsAllowed });
          // The pass rule first: every hook and report after this reads the verdict it gives.
          applyCasePassRule(result, sel.case.passRate, options.casePassRate);
          // Costs from the price table, where the results are collected (the threads need no prices).
          result.usage = priceUsage(result.usage, prices);
          // Recorded after the body and teardown, as Agno does.
          for (const m of startErrors) result.addError(m);
          if (options.onCaseEnd) callSyncHook("onCaseEnd", () => options.onCaseEnd!(sel.case, result), (m) => result.addError(m));
          collector.add(result);
          // The budget is spent: nothing new starts; the cases in flight finish (the overshoot is theirs).
          if (meter?.add(result.usage) && !budgetSpent) {
            budgetSpent = true;
            stopped = true;
          }
          // A run that ends cancelled (a user's Ctrl-C inside the agent) stops the suite (spec M1).
          if (endedCancelled(result)) stopped = true;
        }),
      ),
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  setState("collecting");
  const results = collector.finish(budgetSpent ? BUDGET_EXHAUSTED : SUITE_ABORTED_REASON);
  if (options.onCaseEnd) {
    const byIndex = new Map(selected.map((s) => [s.index, s.case]));
    for (const r of results) {
      // Only the cases skipped here: a case the executor reported skipped (cancelled before its
      // thread started) was told to onCaseEnd when it came back; telling it twice printed it twice.
      if (r.skipped && !collector.has(r.index)) callSyncHook("onCaseEnd", () => options.onCaseEnd!(byIndex.get(r.index)!, r), (m) => r.addError(m));
    }
  }
  setState("done");
  return new SuiteResult(results, {
    runId,
    durationSeconds: round3((performance.now() - started) / 1000),
    startedAt,
    cancelled: Boolean(options.signal?.aborted),
    budget: meter ? { ...meter.budget, exhausted: budgetSpent } : null,
    passThreshold: options.passThreshold ?? null,
    repeat: options.repeat ?? 1,
    repeatMax: options.repeatMax ?? options.repeat ?? 1,
    casePassRate: options.casePassRate ?? null,
    ...(options.confidence === undefined ? {} : { confidence: options.confidence }),
  });
}
