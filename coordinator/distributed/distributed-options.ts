import { randomUUID } from "node:crypto";
import type { SuiteResult } from "../../shared/result/result.ts";
import type { Logger } from "../../shared/logger.ts";
import type { NatsSettings } from "../../shared/broker/connection.ts";
import type { SuiteHooks } from "../../shared/hooks.ts";
import type { ScoringMethod } from "../../shared/datasets/scoring-methods.ts";
import type { Budget } from "../../shared/providers/budget.ts";
import type { PriceTable } from "../../shared/providers/prices.ts";
import type { LimitTable } from "../../shared/providers/limit-spec.ts";
import type { SelectedCase, Selector } from "../run/select.ts";
import { compileRunSettings, type RunSettings, type RunSettingsSuite } from "../../shared/run-settings.ts";
import type { RunManifest } from "../../shared/wire/nats.ts";
import { checkRepeat } from "../run/policy.ts";
import { adaptiveManifestFields } from "./publish.ts";
import type { AdaptiveCollecting } from "./collect.ts";

/** What a distributed run (distributed-run.ts) is told by its caller, and what it answers. */

/** Options of {@link runDistributed} and {@link resumeDistributed}. */
export interface DistributedRunOptions extends SuiteHooks, Selector {
  nats: NatsSettings;
  /** Default: a new id (time + random), told through `onRunId` first. */
  runId?: string | null;
  /** The selected cases when the caller has made the selection already (the command line); default: selected here from the selector options. */
  selected?: readonly SelectedCase[] | null;
  /** Seconds for cases that set none; default: the suite's, then 120. */
  defaultTimeout?: number | null;
  /** Seconds, the setup bound of cases that set none; default: the suite's, then 60 (a resumed run keeps its own). */
  setupTimeout?: number | null;
  /** Seconds, the teardown bound of cases that set none; default: the suite's, then 60 (a resumed run keeps its own). */
  teardownTimeout?: number | null;
  /** Largest output a worker keeps on a result, in bytes. Default 256 KiB (a resumed run keeps its own). */
  maxOutputBytes?: number;
  /** Keep each case's transcript within this many bytes, published with its result (a recorded run). Default 0: none. */
  maxTranscriptBytes?: number;
  /** The response cache of the workers' model calls: each worker's folder, or the fleet's shared bucket. Default none. */
  cache?: { kind: "local" | "shared"; ttlSeconds: number } | null;
  /** The run's cassettes in the fleet's bucket (`--record nats`, `--replay nats`). Default none. */
  cassette?: { mode: "record" | "replay"; recordMissing: boolean } | null;
  /** Give up (exit 3) when no compatible worker has joined within this many seconds. Default 60. */
  waitForWorkersSeconds?: number;
  /** Deliveries per case before it is recorded as lost. Default 3. */
  maxAttempts?: number;
  /** Whole-run budget in seconds: when it passes, the run is cancelled. Default: none. */
  deadlineSeconds?: number | null;
  /** Seconds before an unacknowledged case is redelivered (workers extend it while a case runs). Default 30. */
  ackWaitSeconds?: number;
  /** After a cancel, seconds in-flight cases get to report before the report is final. Default 15. */
  cancelGraceSeconds?: number;
  /** Seconds the broker may be unreachable before the run is given up (exit 3). Default 30. */
  brokerLossSeconds?: number;
  /** Ask workers to stream run events (for `-v`). Default false. */
  forwardEvents?: boolean;
  /** Runs per case (`--repeat`); workers run every repeat of a case they take. Default 1 (a resumed run keeps its own). */
  repeat?: number;
  /** `--repeat MIN..MAX`: MAX (with `repeat` MIN); the coordinator plans more trials of a case while its interval holds its pass rule. Default: `repeat` (fixed). */
  repeatMax?: number | null;
  /** Adaptive repeats' stopping confidence (RunSettings' `adaptiveConfidence`). Default 0.75. */
  adaptiveConfidence?: number | null;
  /** Retries of a case whose failure is `infra` (`--retries`), on the worker that ran it. Default 0 (a resumed run keeps its own). */
  retries?: number;
  /**
   * Provider limits by key, merged (suite, `EVALFLEET_LIMITS`, `--limit`), enforced across every
   * worker by this coordinator's permits (permit-server.ts). Default: the suite's (a resumed run: its manifest's).
   */
  limits?: LimitTable | null;
  /** Prices by model over the built-in table (the suite's). Default: the suite's. */
  prices?: PriceTable | null;
  /** `--budget-usd` / `--budget-tokens`: once spent, the run stops like `--deadline` (`skipped: budget exhausted`, exit 3). Default none. */
  budget?: Budget | null;
  /** Names of the suite's evaluation functions that grade every case after its own (`--eval-function`). Default none (a resumed run keeps its own). */
  evalFunctions?: readonly string[] | null;
  /** A scoring method replacing every case's expected-output method (`--scoring-method`). Default: the cases' own (a resumed run keeps its own). */
  scoringMethod?: ScoringMethod | null;
  /** The run passes when at least this fraction (0-1) of the cases pass. Default: the suite's (a resumed run: the one it was started with). */
  passThreshold?: number | null;
  /** A repeated case passes when at least this fraction of its trials pass, unless it sets its own `passRate`. Default: every trial (1). */
  casePassRate?: number | null;
  /** Two-sided confidence of the report's intervals. Default: the statistics' (0.95). */
  confidence?: number;
  /**
   * Keep each case's result in a temporary file once it is in, not in memory (coordinator/run/result-spool.ts):
   * the outcome's `suite` reads them back as it is walked (`cases()`, the reports), and holds them
   * all only when `suite.results` is read. Default true; false holds every result in memory.
   */
  spoolResults?: boolean;
  /** Seconds between reconciliations (lost cases). Default 5. */
  reconcileSeconds?: number;
  /** Cancels the run (SIGINT, SIGTERM). */
  signal?: AbortSignal | null;
  logger?: Logger;
  /** Told the run id before anything is published. */
  onRunId?: (runId: string) => void;
  /** One-line notes for the console (a worker joined, a refusal, cancelling). */
  onNote?: (line: string) => void;
  /** Seconds the run is expected to go on, from history (coordinator/run/run-eta.ts): written with the run's state for `coordinator status`. Default none. */
  etaSeconds?: (() => number) | null;
  /** Which workers are busy: in-flight cases per worker, and how many workers joined. */
  onWorkers?: (busy: ReadonlyMap<string, number>, joined: number) => void;
}

/**
 * What a distributed run reads compiled: the bounds its manifest records (the case timeout, the
 * setup and teardown bounds, the output kept, the deliveries, the ack wait) and the coordinator's
 * own timings (waiting for workers, the cancel grace, the broker's absence, reconciling), in the
 * units of RunSettings.
 */
export type DistributedSettings = Pick<
  RunSettings,
  "defaultTimeoutSeconds" | "setupTimeoutSeconds" | "teardownTimeoutSeconds" | "maxOutputBytes" | "maxAttempts" | "ackWaitMs" | "waitForWorkersMs" | "cancelGraceMs" | "brokerLossMs" | "reconcileMs" | "adaptiveConfidence"
>;

/**
 * The bounds and timings of a distributed run, compiled once from its options and the suite by
 * compileRunSettings: the option's value, else the suite's (the timeouts), else the default of
 * shared/defaults.ts; a value out of range is a usage error naming the option. The command line
 * hands over values it compiled already, so they come back unchanged.
 */
export function compileDistributedSettings(options: DistributedRunOptions, suite: RunSettingsSuite): DistributedSettings {
  const settings = compileRunSettings(
    {
      defaultTimeoutSeconds: options.defaultTimeout,
      setupTimeoutSeconds: options.setupTimeout,
      teardownTimeoutSeconds: options.teardownTimeout,
      maxOutputBytes: options.maxOutputBytes,
      maxAttempts: options.maxAttempts,
      ackWaitSeconds: options.ackWaitSeconds,
      waitForWorkersSeconds: options.waitForWorkersSeconds,
      cancelGraceSeconds: options.cancelGraceSeconds,
      brokerLossSeconds: options.brokerLossSeconds,
      reconcileSeconds: options.reconcileSeconds,
      adaptiveConfidence: options.adaptiveConfidence,
    },
    // Only what the bounds are merged from: the suite's limits, prices and evaluation functions are the manifest's business (publish.ts).
    { defaultTimeout: suite.defaultTimeout, setupTimeoutSeconds: suite.setupTimeoutSeconds, teardownTimeoutSeconds: suite.teardownTimeoutSeconds },
  );
  return {
    defaultTimeoutSeconds: settings.defaultTimeoutSeconds,
    setupTimeoutSeconds: settings.setupTimeoutSeconds,
    teardownTimeoutSeconds: settings.teardownTimeoutSeconds,
    maxOutputBytes: settings.maxOutputBytes,
    maxAttempts: settings.maxAttempts,
    ackWaitMs: settings.ackWaitMs,
    waitForWorkersMs: settings.waitForWorkersMs,
    cancelGraceMs: settings.cancelGraceMs,
    brokerLossMs: settings.brokerLossMs,
    reconcileMs: settings.reconcileMs,
    adaptiveConfidence: settings.adaptiveConfidence,
  };
}

/** A distributed run's outcome: the results, and whether the run finished or why not. */
export interface DistributedOutcome {
  suite: SuiteResult;
  runId: string;
  /** Set when the run is incomplete for reasons outside the agents (exit 3). */
  incomplete: string | null;
}

/** A new run id: sortable by time, unique, one subject token. */
export function newRunId(): string {
  return `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;
}

/** The collector's adaptive rule: the manifest's (a resumed run) or the options'; null for a fixed repeat. */
export function adaptiveOf(resume: RunManifest | null, options: DistributedRunOptions, settings: DistributedSettings, trialsAllowed: AdaptiveCollecting["trialsAllowed"]): AdaptiveCollecting | null {
  // A new run's fields as its manifest will record them: one derivation of MAX for both.
  const m = resume ?? { repeat: checkRepeat(options.repeat), ...adaptiveManifestFields(options, settings.adaptiveConfidence) };
  return m.repeatMax !== null && m.repeatMax > m.repeat ? { max: m.repeatMax, confidence: m.adaptiveConfidence ?? settings.adaptiveConfidence, trialsAllowed } : null;
}
