// runs in: both
import { availableParallelism } from "node:os";
import type { LogLevel } from "./log-levels.ts";
import { CONVENTIONAL_ALPHA, CONVENTIONAL_CONFIDENCE } from "./stats/conventional-levels.ts";

/**
 * The default of every setting of evalfleet (a run's, a worker's, a command's), written once.
 * Only the settings compiler (shared/run-settings.ts) and the config modules read this file
 * (`defaults-only-in-config-modules` in .dependency-cruiser.mjs lists them): they apply these
 * values once, and everything downstream gets compiled values, with no fallback of its own. The
 * public entry (index.ts) re-exports the few that are documented. Constants that no one sets
 * (protocol timings, heartbeats, vocabularies such as the scoring methods or the log levels) live
 * beside their topic instead. Pure; the only I/O-like call is the CPU count of {@link defaultThreads}.
 */

// ---- a case and its timeouts ----------------------------------------------------------------

/** Per-case timeout in seconds when neither the case, the runner (`--timeout`) nor the suite sets one. */
export const DEFAULT_TIMEOUT_SECONDS = 120;
/** Seconds past a case's deadline before the thread stuck in it is terminated (`--grace`). */
export const DEFAULT_GRACE_SECONDS = 5;

/**
 * Bound on a case's `setup` hook in seconds when neither the case, the runner (`--setup-timeout`)
 * nor the suite sets one. Setup stays outside the case's timeout (Agno D3/D11) but is never unbounded.
 */
export const DEFAULT_SETUP_TIMEOUT_SECONDS = 60;
/** Bound on a case's `teardown` hook in seconds, as {@link DEFAULT_SETUP_TIMEOUT_SECONDS} (`--teardown-timeout`). */
export const DEFAULT_TEARDOWN_TIMEOUT_SECONDS = 60;
/** Bound on loading a suite file (its import, top-level awaits and datasets), in seconds (`--load-timeout`). */
export const DEFAULT_LOAD_TIMEOUT_SECONDS = 60;
/** Largest case output kept in a result, in KiB (UTF-8); longer output is cut with a marker (`--max-output-kb`). */
export const DEFAULT_MAX_OUTPUT_KB = 256;
/**
 * Largest full run output (transcript) kept per case when a run is recorded, in KiB of its JSON
 * (UTF-8); a bigger one is cut, saying so (`--max-transcript-kb`; 0 keeps none).
 */
export const DEFAULT_MAX_TRANSCRIPT_KB = 256;

// ---- the response cache of the built-in model clients (`--cache`) ----------------------------

/** Seconds a cached model answer stays good (`--cache-ttl`): 7 days. */
export const DEFAULT_CACHE_TTL_SECONDS = 7 * 24 * 3600;

/** Bound on connecting one MCP client a suite declares, in milliseconds. */
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

// ---- how many run at once -------------------------------------------------------------------

/** Cases in flight at once on a pool of worker threads (`evalfleet run`, `evalfleet worker`, `runSuiteLocal`, `CasePool`). */
export const DEFAULT_CONCURRENCY = 4;
/**
 * Cases in flight at once in the calling thread for `runCases` and a script's `cli(cases)`: 1 keeps
 * Agno's sequential order. (`evalfleet run --threads 0` also runs cases in the main thread, but at
 * the given `--concurrency`, default {@link DEFAULT_CONCURRENCY}.)
 */
export const DEFAULT_INLINE_CONCURRENCY = 1;

/**
 * Worker threads when none is asked for: the smaller of the CPU count and `concurrency` (more
 * threads than cases in flight would only idle), at least 1. The one threads default of every pool.
 */
export function defaultThreads(concurrency: number): number {
  return Math.max(1, Math.min(availableParallelism(), concurrency));
}

// ---- distributed runs (NATS JetStream) ------------------------------------------------------

/** Where the broker is when neither `--nats` nor `NATS_URL` says. */
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";
/** Seconds before an unacknowledged case is redelivered (`--ack-wait`; workers extend it while a case runs). */
export const DEFAULT_ACK_WAIT_SECONDS = 30;
/** Deliveries per case before it is recorded as lost (`--max-attempts`). */
export const DEFAULT_MAX_ATTEMPTS = 3;

/** Retries of a case whose failure is `infra` (`--retries`): none unless asked. */
export const DEFAULT_RETRIES = 0;
/** After a cancel, seconds in-flight cases get to report before the report is final (`--cancel-grace`). */
export const DEFAULT_CANCEL_GRACE_SECONDS = 15;
/** Seconds the broker may be unreachable before a run is given up, exit 3 (`--broker-timeout`). */
export const DEFAULT_BROKER_TIMEOUT_SECONDS = 30;
/** Seconds to wait for a compatible worker to join before a run is given up, exit 3 (`--wait-for-workers`). */
export const DEFAULT_WAIT_FOR_WORKERS_SECONDS = 60;
/** Seconds between two reconciliations of lost cases by the coordinator. */
export const DEFAULT_RECONCILE_SECONDS = 5;
/** On SIGTERM, seconds a worker's in-flight cases get to finish before they are handed back (`--drain`). */
export const DEFAULT_DRAIN_SECONDS = 20;
/** Replicas of the streams and the runs bucket when `EVALFLEET_STREAM_REPLICAS` is unset. */
export const DEFAULT_STREAM_REPLICAS = 1;
/** The run id's prefix when `EVALFLEET_RUN_PREFIX` is unset (`<prefix>-<trailing number of EVALFLEET_JOB_NAME>`). */
export const DEFAULT_RUN_PREFIX = "job";
/** Why a run was cancelled when `evalfleet coordinator cancel --reason` is not given. */
export const DEFAULT_CANCEL_REASON = "cancelled from the command line";

// ---- HTTP endpoints (worker health and metrics, queue metrics) ------------------------------

/** Interface the HTTP endpoints bind when neither `--http-host` nor `EVALFLEET_HTTP_HOST` says. */
export const DEFAULT_HTTP_HOST = "0.0.0.0";


// ---- judge, store, history ------------------------------------------------------------------

/** The default judge's model when `EVALFLEET_JUDGE_MODEL` is unset. */
export const DEFAULT_JUDGE_MODEL = "gpt-5-mini";
/** Bound on each judge call of a standalone `AgentAsJudgeEval`, in seconds. */
export const DEFAULT_JUDGE_TIMEOUT_SECONDS = 120;
/** Bound on connecting to the results store, each write and the final flush, in seconds (`--db-timeout`). */
export const DEFAULT_STORE_TIMEOUT_SECONDS = 10;
/** Runs the history commands look at: `runs --limit`, `flaky --last`, `report --last`. */
export const DEFAULT_HISTORY_RUNS = 20;
/** The suite name of a run of cases that belong to no suite file (`runCases`, `cli(cases)`). */
export const DEFAULT_SUITE_NAME = "evals";

// ---- statistics: intervals, the significance-aware gate, adaptive repeats --------------------

/** Two-sided confidence level of every interval a report shows (`--confidence`): 0.95. */
export const DEFAULT_CONFIDENCE = CONVENTIONAL_CONFIDENCE;
/**
 * The gate's bound on its false-alarm rate (`--regression-alpha`): two runs of the same agent are
 * called a regression at most this often, the run-level and the per-case tests together.
 */
export const DEFAULT_REGRESSION_ALPHA = CONVENTIONAL_ALPHA;
/** A repeated case passes when at least this fraction of its trials pass (`--case-pass-rate`): 1, every trial. */
export const DEFAULT_CASE_PASS_RATE = 1;
/**
 * Two-sided confidence of the interval that stops adaptive repeats (`--repeat MIN..MAX`): a case
 * stops once its Wilson interval at this level is clear of the pass rule. Lower than the reports'
 * 0.95 on purpose: at 0.95 a case that passes every trial needs 16 trials to clear 0.8, and
 * `--repeat 3..20` spends 0.75 of a fixed `--repeat 20`'s trials; at 0.75 it needs 6, the run
 * spends 0.35, and its verdicts are still the fixed run's on 98.8% of cases
 * (bench/verdict-simulation.ts: `adaptive_trials_ratio`, `adaptive_agreement`).
 */
export const DEFAULT_ADAPTIVE_CONFIDENCE = 0.75;

// ---- logging --------------------------------------------------------------------------------

/** Log level of a run (`evalfleet run`, `list`, `coordinator run`, `cli(cases)`) and of the library's loggers and threads. */
export const DEFAULT_RUN_LOG_LEVEL: LogLevel = "warn";
/** Log level of the standing services (`evalfleet worker`, `evalfleet queue-metrics`). */
export const DEFAULT_SERVICE_LOG_LEVEL: LogLevel = "info";

// ---- resolution chains ----------------------------------------------------------------------

/**
 * The per-case timeout, in seconds, of cases that set none: the runner's (`--timeout`, the
 * `defaultTimeout` option), else the suite's, else {@link DEFAULT_TIMEOUT_SECONDS}. The one place
 * this chain is resolved; a case's own `timeoutSeconds` still wins over the result
 * (`Case.resolveTimeout`).
 */
export function resolveDefaultTimeout(runner: number | null | undefined, suite: number | null | undefined = null): number {
  return runner ?? suite ?? DEFAULT_TIMEOUT_SECONDS;
}

