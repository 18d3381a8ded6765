import { DEFAULT_CONCURRENCY, DEFAULT_INLINE_CONCURRENCY, DEFAULT_RUN_LOG_LEVEL, DEFAULT_SUITE_NAME, defaultThreads } from "../shared/defaults.ts";
import { positiveInt } from "./run/dispatch-loop.ts";

/**
 * The config module of the library's front doors (`runCases`, `runSuiteLocal`, a script's
 * `cli(cases)`): what they take beyond the run-wide settings (those go through
 * compileRunSettings) — how many cases run at once and on how many threads, the threads' log
 * level, the suite name of a run of loose cases — compiled once, with
 * the defaults of shared/defaults.ts, as coordinator/cli/config.ts compiles them for the command
 * line. The runners past this point take every value as given: none of them has a fallback.
 */

/** How a run in the calling thread runs its cases. */
export interface InlineEngine {
  /** Cases in flight at once, >= 1. Default 1: Agno's sequential order. */
  concurrency: number;
}

/** How a run on a pool of worker threads runs its cases. */
export interface ThreadEngine {
  /** Cases in flight across the pool, >= 1. Default 4. */
  concurrency: number;
  /** Worker threads, >= 1. Default: the smaller of the CPU count and `concurrency` (`defaultThreads`). */
  threads: number;
  /** Level of the threads' loggers. Default `warn`. */
  logLevel: string;
}

/** The engine of `runCases` / `cli(cases)`: the caller's concurrency (a whole number >= 1, else a usage error), else 1. */
export function inlineEngine(options: { readonly concurrency?: number | null }): InlineEngine {
  return { concurrency: positiveInt(options.concurrency ?? DEFAULT_INLINE_CONCURRENCY, "concurrency", options.concurrency) };
}

/** The engine of `runSuiteLocal`: the caller's concurrency, threads and log level, each else its default; a bad count is a usage error naming it. */
export function threadEngine(options: { readonly concurrency?: number | null; readonly threads?: number | null; readonly logLevel?: string | null }): ThreadEngine {
  const concurrency = positiveInt(options.concurrency ?? DEFAULT_CONCURRENCY, "concurrency", options.concurrency);
  return {
    concurrency,
    threads: positiveInt(options.threads ?? defaultThreads(concurrency), "threads", options.threads),
    logLevel: options.logLevel ?? DEFAULT_RUN_LOG_LEVEL,
  };
}

/** The suite name a run of cases that belong to no suite file is recorded under: the caller's, else `"evals"`. */
export function looseCasesSuiteName(name: string | null | undefined): string {
  return name ?? DEFAULT_SUITE_NAME;
}
