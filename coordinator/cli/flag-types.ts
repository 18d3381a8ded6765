import type { NatsFlags } from "../../shared/broker/nats-settings.ts";

/**
 * The shapes commander hands each command's action: its flags by name, as parsed (before the
 * config modules, coordinator/cli/config.ts and worker/config.ts, validate and default them).
 * Types only.
 */

/** The flags of the run commands as commander parses them (`run`, `list`, `coordinator run|resume`, `cli()`). */
export interface RunFlags extends StoreFlags {
  name?: string[];
  tag?: string[];
  set?: string[];
  passThreshold?: number;
  repeat?: number | { min: number; max: number };
  /** `--case-pass-rate`: a repeated case passes when at least this fraction of its trials pass. */
  casePassRate?: number;
  /** `--confidence`: the two-sided confidence of the report's intervals. */
  confidence?: number;
  /** Seconds. */
  timeout?: number;
  /** Seconds. */
  setupTimeout?: number;
  /** Seconds. */
  teardownTimeout?: number;
  /** KiB. */
  maxOutputKb?: number;
  /** Seconds. */
  loadTimeout?: number;
  jsonOutput?: string;
  junit?: string;
  list?: boolean;
  verbose?: boolean;
  concurrency?: number;
  threads?: number;
  /** Seconds. */
  grace?: number;
  /** MB. */
  threadMemory?: number;
  /** Absent on `list`, which logs nothing. */
  logLevel?: string;
  runId?: string;
  /** Exulu's run fields (`--run-name`, `--description`, `--eval-function`, `--scoring-method`). */
  runName?: string;
  description?: string;
  evalFunction?: string[];
  scoringMethod?: string;
  /** `--retries`: re-runs of a case whose failure is `infra`. */
  retries?: number;
  /** `--infra-errors-incomplete`: a run whose failures are all `infra` exits 3, not 1. */
  infraErrorsIncomplete?: boolean;
  /** `--budget-usd`: US dollars the whole run may spend. */
  budgetUsd?: number;
  /** `--budget-tokens`: tokens the whole run may use. */
  budgetTokens?: number;
  /** `--limit`, raw (repeatable): `KEY=rpm:N,tpm:N,concurrency:N` provider limits, or a bare N (the first N cases); split by `splitLimitValues`. */
  limit?: string[];
  /** Re-runs from the results store (`--rerun-failed RUN_ID`, ...). */
  rerunFailed?: string;
  rerunErrors?: string;
  rerunIncomplete?: string;
  lastFailed?: boolean;
  /** Quick subsets. */
  grep?: string;
  sample?: number;
  seed?: number;
  filterMetadata?: string[];
  /** `regrade`: the default judge's model for this regrade. */
  judgeModel?: string;
  /** `--cache` (true: local) or `--cache <mode>`. */
  cache?: boolean | string;
  /** `--cache-ttl`, as given (`7d`, `12h`, `30m`, `45s`, or seconds). */
  cacheTtl?: string;
  /** `--order`: `declared`, `history` or `random[:SEED]` (checked by its parser). */
  order?: string;
  /** `--estimate`: print the expected duration, tokens and cost from history; run nothing. */
  estimate?: boolean;
  /** `coordinator run --slots`: the slots an estimate plays the run on (workers x their concurrency). */
  slots?: number;
  /** `--record DIR`, `--replay DIR`, `--record-missing`: the cases' cassettes. */
  record?: string;
  replay?: string;
  recordMissing?: boolean;
}

/** The results-store flags of a run command. */
export interface StoreFlags {
  /** The store URL (`--db`, else `$EVALFLEET_DB`). */
  db?: string;
  /** Seconds. */
  dbTimeout?: number;
  failOnRegression?: boolean;
  /** `--regression-alpha`: the gate's false-alarm bound, strictly between 0 and 1. */
  regressionAlpha?: number;
  /** `--baseline`: the run the gate compares with, instead of the last run on this branch. */
  baseline?: string;
  /** `--quarantine-flaky`: known-flaky cases are reported by the gate, never failing it. */
  quarantineFlaky?: boolean;
  /** KiB; 0 keeps no transcripts. */
  maxTranscriptKb?: number;
}

/** The NATS connection flags, and the log level of the command. */
export interface NatsCliFlags extends NatsFlags {
  logLevel: string;
}

/** The flags of `coordinator run` and `coordinator resume`. All durations in seconds. */
export interface CoordinatorFlags extends RunFlags, NatsCliFlags {
  logLevel: string;
  waitForWorkers: number;
  maxAttempts: number;
  deadline?: number;
  ackWait: number;
  cancelGrace: number;
  brokerTimeout: number;
  /** `coordinator run` only: resume the run when its id already exists (a replaced Job pod). */
  resumeExisting?: boolean;
  /** `coordinator run` only: what SIGTERM does. */
  onSigterm?: "cancel" | "leave";
}

/** The HTTP endpoint flags of the standing services. */
export interface HttpFlags {
  httpPort?: number;
  httpHost: string;
}

/** The flags of the history commands that read the store. */
export interface HistoryReadFlags {
  db?: string;
  /** Seconds. */
  dbTimeout: number;
  json?: boolean;
}
