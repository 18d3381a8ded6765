import type { RunSettings } from "../../shared/run-settings.ts";
import type { EngineOptions } from "./dispatch-loop.ts";
import type { ScoringMethod } from "../../shared/datasets/scoring-methods.ts";
import type { LimitTable } from "../../shared/providers/limit-spec.ts";
import type { PriceTable } from "../../shared/providers/prices.ts";
import type { Budget } from "../../shared/providers/budget.ts";

/**
 * What the dispatch loop (dispatch-loop.ts) reads of a run's compiled settings. The local runners
 * (local/inline.ts, local/threads.ts) take the compiled {@link RunSettings} whole and hand the
 * loop these. Pure: no default is applied here (compileRunSettings did).
 */

/** The fields of {@link EngineOptions} that come from the compiled settings (a runner's options omit them and take `settings`). */
export type RunSettingsFields = "repeat" | "repeatMax" | "retries" | "passThreshold" | "casePassRate" | "confidence" | "limits" | "prices" | "budget";

/** The dispatch loop's options of `settings`. */
export function engineSettings(settings: Readonly<RunSettings>): Pick<EngineOptions, RunSettingsFields> {
  return {
    repeat: settings.repeat,
    repeatMax: settings.repeatMax,
    retries: settings.retries,
    passThreshold: settings.passThreshold,
    casePassRate: settings.casePassRate,
    confidence: settings.confidence,
    limits: settings.limits,
    prices: settings.prices,
    budget: settings.budget,
  };
}

/**
 * The run settings `runCases` and `runSuiteLocal` take, as a library caller knows them (each as
 * given, none defaulted: `librarySettingsInput` in coordinator/api.ts hands them to
 * compileRunSettings, as the command line hands its flags).
 */
export interface LibrarySettingsOptions {
  /** Setup and teardown bounds in seconds for cases that set none. Default: the suite's, then 60 each. */
  hookDefaults?: { setup?: number | null; teardown?: number | null };
  /** Largest output kept on a result, in bytes. Default 256 KiB. */
  maxOutputBytes?: number;
  /** Keep each case's transcript within this many bytes (a recorded run only). Default 256 KiB when recorded, else 0. */
  maxTranscriptBytes?: number;
  /**
   * Runs per case (`--repeat N`), or adaptive repeats (`--repeat MIN..MAX`, `{ min: 3, max: 20 }`:
   * MIN runs each, then more up to MAX while a case's interval still holds its pass rule). Default 1.
   */
  repeat?: number | { min: number; max: number };
  /** Retries of a case whose failure is `infra` (`--retries`, shared/trials/infra-retry.ts). Default 0. */
  retries?: number;
  /** The run passes when at least this fraction (0-1) of the cases pass. Default: the suite's, else none. */
  passThreshold?: number | null;
  /** The pass rule of a repeated case that sets none: it passes when at least this fraction (0-1) of its trials pass (`--case-pass-rate`). Default: the suite's `casePassRate`, else 1 (every trial). */
  casePassRate?: number;
  /** Two-sided confidence (strictly between 0 and 1) of the report's intervals (`--confidence`). Default 0.95. */
  confidence?: number;
  /** A scoring method that replaces every expected-output check's own (`--scoring-method`). Default none. */
  scoringMethod?: ScoringMethod | null;
  /** Provider limits by key (docs/providers.md), merged over the suite's key by key. Default: the suite's (`runCases`: the limiter is left as it is). */
  limits?: LimitTable | null;
  /** Prices by model over the built-in table and the suite's. Default: those. */
  prices?: PriceTable | null;
  /** `budgetUsd` / `budgetTokens`: once spent, nothing new starts and the rest is skipped. Default none. */
  budget?: Budget | null;
  /** Seconds past a deadline before a stuck thread is terminated (or, inline with `exitWhenBlocked`, the process ended). Default 5. */
  graceSeconds?: number;
}
