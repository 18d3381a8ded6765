import * as z from "zod";
import { natsSettingsFrom, type NatsSettings } from "../../shared/broker/nats-settings.ts";
import {
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_CONCURRENCY,
  DEFAULT_GRACE_SECONDS,
  DEFAULT_INLINE_CONCURRENCY,
  DEFAULT_LOAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_OUTPUT_KB,
  DEFAULT_MAX_TRANSCRIPT_KB,
  DEFAULT_RETRIES,
  DEFAULT_RUN_LOG_LEVEL,
  DEFAULT_STORE_TIMEOUT_SECONDS,
  defaultThreads,
} from "../../shared/defaults.ts";
import { LOG_LEVELS } from "../../shared/log-levels.ts";
import { SCORING_METHODS } from "../../shared/datasets/scoring-methods.ts";
import { booleanFromEnvironment, colorAllowedBy, limitsFromEnvironment, runIdFromEnvironment, suiteFileFrom, type Environment } from "../../shared/environment.ts";
import { LimitTableSchema, mergeLimitTables, splitLimitValues } from "../../shared/providers/limit-spec.ts";
import { fraction, parseConfig, positiveSeconds, seconds, text, whole } from "../../shared/config.ts";
import type { DbOption } from "../history/recording/record-run.ts";
import { cassetteWhere } from "./cassette-where.ts";
import { parseDurationSeconds } from "./flag-parsers.ts";
import type { CoordinatorFlags, RunFlags } from "./flag-types.ts";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import { lazySchema } from "../../shared/runtime/lazy-schema.ts";
import type { RunSettingsInput } from "../../shared/run-settings.ts";

/**
 * The options pipeline of a run command (`run`, `list`, `coordinator run|resume`, a script's
 * `cli(cases)`): commander's flags and the environment go in once, are validated by one zod
 * schema and come out as one frozen {@link RunConfig}, which is handed down to the pipeline and
 * the runners. Nothing downstream reads a flag or the environment. Defaults come from
 * shared/defaults.ts; the per-case timeout stays unresolved here (the suite's own default is only
 * known once the suite is loaded; `resolveDefaultTimeout` resolves it).
 */

/** The run commands. */
export type RunCommand = "run" | "list" | "script" | "coordinator-run" | "coordinator-resume" | "regrade";

const names = lazySchema(() => z.array(text()).nullable());

/** The distributed part of a run's config (`coordinator run|resume`). Durations in seconds. */
const DistributedConfigSchema = lazySchema(() => z.object({
  nats: z.custom<NatsSettings>((v) => v !== null && typeof v === "object"),
  waitForWorkersSeconds: seconds(),
  maxAttempts: whole(1),
  deadlineSeconds: seconds().nullable(),
  ackWaitSeconds: seconds(),
  cancelGraceSeconds: seconds(),
  brokerTimeoutSeconds: seconds(),
  /** `coordinator run`: resume the run when its id exists already. */
  resumeExisting: z.boolean(),
  /** `coordinator run`: what SIGTERM does. */
  onSigterm: z.enum(["cancel", "leave"]),
  /** `coordinator resume`: the run taken over. */
  resumeRunId: z.string().nullable(),
}));

/** A run command's config, validated. Durations in seconds, memory in MB. */
export const RunConfigSchema = lazySchema(() => z.object({
  command: z.enum(["run", "list", "script", "coordinator-run", "coordinator-resume", "regrade"]),
  /** How the cases run (and how the run is recorded). */
  mode: z.enum(["inline", "threads", "distributed"]),
  /** The suite file (`[suite]`, else `$EVALFLEET_SUITE`); null for a script's `cli(cases)`. */
  suiteFile: text().nullable(),
  selector: z.object({ name: names, tag: names, set: names }),
  /** `--timeout`, unresolved: null lets the suite's default apply. */
  timeout: seconds().nullable(),
  /** `--setup-timeout`, unresolved: null lets the suite's bound apply, then 60 s (`resolveHookTimeouts`). */
  setupTimeout: seconds().nullable(),
  /** `--teardown-timeout`, unresolved, as `setupTimeout`. */
  teardownTimeout: seconds().nullable(),
  /** `--max-output-kb`: the largest output kept on a result, in KiB. */
  maxOutputKb: whole(1),
  /** `--max-transcript-kb`: the largest transcript kept per case of a recorded run, in KiB; 0: none. */
  maxTranscriptKb: whole(0),
  /** `--load-timeout`: the bound on loading the suite file, in seconds. */
  loadTimeoutSeconds: positiveSeconds(),
  list: z.boolean(),
  jsonOutput: text().nullable(),
  junit: text().nullable(),
  verbose: z.boolean(),
  logLevel: z.enum(LOG_LEVELS),
  /** Colors on a terminal (not with `NO_COLOR`). */
  color: z.boolean(),
  /** `--repeat`; null: the default (a resumed run keeps its own). */
  repeat: z.union([whole(1), z.object({ min: whole(1), max: whole(1) })]).nullable(),
  /** `--pass-threshold`; null: the suite's. */
  passThreshold: fraction().nullable(),
  /** `--case-pass-rate`; null: the suite's, else 1. */
  casePassRate: fraction().nullable(),
  /** `--confidence`; null: 0.95 (checked by compileRunSettings). */
  confidence: z.number().nullable(),
  concurrency: whole(1),
  /** `--threads` as given (recorded so); null: not given; 0: inline. */
  threads: whole(0).nullable(),
  /** The pool's worker threads (mode `threads`): `--threads`, else `defaultThreads(concurrency)`, the smaller of the CPUs and `concurrency`. */
  poolThreads: whole(1),
  graceSeconds: seconds(),
  threadMemoryMb: whole(16).nullable(),
  /** The run id when it is fixed before the run (`--run-id`, `$EVALFLEET_RUN_ID`, a resumed run). */
  runId: text().nullable(),
  store: z.object({
    /** The results store (`--db`, `$EVALFLEET_DB`, or a script's `cli(cases, { db })`); null: not recorded. */
    db: z.custom<DbOption>((v) => typeof v === "string" || (v !== null && typeof v === "object")).nullable(),
    timeoutSeconds: positiveSeconds(),
    failOnRegression: z.boolean(),
    /** `--baseline`: the run the gate compares with; null: the last run of the suite on this branch. */
    baseline: text().nullable(),
    /** `--quarantine-flaky`. */
    quarantineFlaky: z.boolean(),
    /** `--regression-alpha`; null: the default (compiled into the run settings). */
    regressionAlpha: z.number().nullable(),
    /** Reopen a run already recorded (a resumed distributed run). */
    resume: z.boolean(),
  }),
  /** The settings kept with a recorded run, under their flag names (never a credential). */
  recorded: z.record(z.string(), z.unknown()),
  /** The run in Exulu's terms: its name and description (kept in the store), what grades it. */
  definition: z.object({
    /** `--run-name`; null: the suite's name where one is needed. */
    runName: text().nullable(),
    description: z.string().nullable(),
    /** `--eval-function`, in order, once each; checked against the suite's when it is loaded. */
    evalFunctions: z.array(text()),
    /** `--scoring-method`; null: each case's own. */
    scoringMethod: z.enum(SCORING_METHODS, { error: `must be one of ${SCORING_METHODS.join(", ")}` }).nullable(),
  }),
  /** `evalfleet regrade`: the recorded run whose stored outputs are graded again; null for the other commands. */
  regradeRunId: text().nullable(),
  /** `--judge-model` (regrade): the default judge with this model grades the cases that name no judge; null: the suite's judge. */
  judgeModelName: text().nullable(),
  /** The response cache (`--cache`, `--cache-ttl`): a folder, or the fleet's shared bucket (distributed runs); null: off. */
  cache: z.object({ kind: z.enum(["local", "shared"]), ttlSeconds: z.number().positive() }).nullable(),
  /** `--record DIR`, `--replay DIR` (absolute paths), `--record-missing`; checked together by compileRunSettings. */
  cassette: z.object({ record: text().nullable(), replay: text().nullable(), recordMissing: z.boolean() }),
  /** A re-run from the results store: which cases of which recorded run (null for `--last-failed`: found when the suite is loaded). */
  rerun: z.object({ kind: z.enum(["failed", "errors", "incomplete", "last-failed"]), runId: text().nullable() }).nullable(),
  /** Quick subsets (coordinator/run/subset.ts); `seed` null with `sample` set: a new one is drawn and printed. */
  subset: z.object({
    grep: text().nullable(),
    limit: whole(1).nullable(),
    sample: whole(1).nullable(),
    seed: whole(0).max(0xffff_ffff).nullable(),
    filterMetadata: z.array(z.string()),
  }),
  distributed: DistributedConfigSchema.nullable(),
  /** `--order`, as given (checked by its parser; compiled by compileRunSettings); null: the default. */
  order: text().nullable(),
  /** `--estimate`: print what the run is expected to take and cost, run nothing; `slots` (`--slots`): the pool it is played on, null: `concurrency`. */
  estimate: z.object({ slots: whole(1).nullable() }).nullable(),
  /** The model providers of the run (shared/result/error-kind.ts, shared/providers/). */
  providers: z.object({
    /** `--retries`: re-runs of a case whose failure is `infra`; null on `coordinator resume` (the run keeps its own). */
    retries: whole(0).nullable(),
    /** `--infra-errors-incomplete`: a run whose failures are all `infra` exits 3. */
    infraErrorsIncomplete: z.boolean(),
    /** `EVALFLEET_LIMITS` then `--limit`, by key (the suite's `limits` are merged under them once it is loaded). */
    limits: LimitTableSchema,
    /** `--budget-usd`, `--budget-tokens`: what the whole run may spend; null: no budget. */
    budget: z.object({ usd: z.number().positive().nullable(), tokens: whole(1).nullable() }),
  }),
}));

/** A run command's config: validated once, frozen, handed down as one object. */
export type RunConfig = Readonly<z.infer<typeof RunConfigSchema>>;

/** What a run command's action hands to {@link runConfigFrom}. */
export interface RunConfigInput {
  command: RunCommand;
  /** The `[suite]` argument; ignored for a script. */
  suiteArgument?: string;
  flags: RunFlags | CoordinatorFlags;
  env: Environment;
  /** `coordinator resume RUN_ID`. */
  resumeRunId?: string | null;
  /** A script's `cli(cases, { db })`: the store when `--db` is not given (before `$EVALFLEET_DB`). */
  scriptDb?: DbOption | null;
  /** `evalfleet regrade RUN_ID`: the run (already found in the store). */
  regradeRunId?: string | null;
}

/** The settings worth keeping with a run, by flag name (never a credential: no NATS URL or token). */
const RECORDED_FLAGS = [
  "concurrency",
  "threads",
  "grace",
  "threadMemory",
  "setupTimeout",
  "teardownTimeout",
  "maxOutputKb",
  "repeat",
  "passThreshold",
  "casePassRate",
  "confidence",
  "maxAttempts",
  "ackWait",
  "waitForWorkers",
  "deadline",
  "cancelGrace",
  "brokerTimeout",
  "retries",
  "infraErrorsIncomplete",
  "limit",
  "budgetUsd",
  "budgetTokens",
  "rerunFailed",
  "rerunErrors",
  "rerunIncomplete",
  "lastFailed",
  "grep",
  "sample",
  "seed",
  "filterMetadata",
  "order",
] as const;

/** The flag a config field came from, for error messages. */
const FLAG_OF: Readonly<Record<string, string>> = {
  timeout: "--timeout",
  setupTimeout: "--setup-timeout",
  teardownTimeout: "--teardown-timeout",
  maxOutputKb: "--max-output-kb",
  maxTranscriptKb: "--max-transcript-kb",
  loadTimeoutSeconds: "--load-timeout",
  repeat: "--repeat",
  passThreshold: "--pass-threshold",
  casePassRate: "--case-pass-rate",
  confidence: "--confidence",
  concurrency: "--concurrency",
  threads: "--threads",
  poolThreads: "--threads",
  graceSeconds: "--grace",
  threadMemoryMb: "--thread-memory",
  runId: "--run-id",
  logLevel: "--log-level",
  "store.timeoutSeconds": "--db-timeout",
  "distributed.waitForWorkersSeconds": "--wait-for-workers",
  "distributed.maxAttempts": "--max-attempts",
  "distributed.deadlineSeconds": "--deadline",
  "distributed.ackWaitSeconds": "--ack-wait",
  "distributed.cancelGraceSeconds": "--cancel-grace",
  "distributed.brokerTimeoutSeconds": "--broker-timeout",
  "distributed.onSigterm": "--on-sigterm",
  "definition.runName": "--run-name",
  "definition.description": "--description",
  "definition.evalFunctions": "--eval-function",
  "definition.scoringMethod": "--scoring-method",
  "providers.retries": "--retries",
  "rerun.runId": "--rerun-failed/--rerun-errors/--rerun-incomplete",
  "subset.grep": "--grep",
  "subset.limit": "--limit",
  "subset.sample": "--sample",
  "subset.seed": "--seed",
  order: "--order",
  "estimate.slots": "--slots",
};

/** The re-run a run command asks for (at most one of the four flags, and a results store to read). */
function rerunFrom(flags: RunFlags, db: unknown): { kind: "failed" | "errors" | "incomplete" | "last-failed"; runId: string | null } | null {
  const asked = [
    flags.rerunFailed !== undefined ? { flag: "--rerun-failed", kind: "failed" as const, runId: flags.rerunFailed } : null,
    flags.rerunErrors !== undefined ? { flag: "--rerun-errors", kind: "errors" as const, runId: flags.rerunErrors } : null,
    flags.rerunIncomplete !== undefined ? { flag: "--rerun-incomplete", kind: "incomplete" as const, runId: flags.rerunIncomplete } : null,
    flags.lastFailed ? { flag: "--last-failed", kind: "last-failed" as const, runId: null } : null,
  ].filter((a) => a !== null);
  if (asked.length === 0) return null;
  if (asked.length > 1) throw new EvalfleetError(ErrorCode.Usage, `${asked.map((a) => a.flag).join(" and ")} cannot be used together: pick one`, { field: "rerun" });
  const [one] = asked as [(typeof asked)[number]];
  if (!db) throw new EvalfleetError(ErrorCode.Usage, `${one.flag} reads a recorded run: pass --db URL or set EVALFLEET_DB`, { field: "rerun" });
  return { kind: one.kind, runId: one.runId };
}


/** `--cache [mode]` and `--cache-ttl`: the cache a run asks for, or null. */
function cacheFrom(flags: RunFlags, distributed: boolean): { kind: "local" | "shared"; ttlSeconds: number } | null {
  if (flags.cache === undefined || flags.cache === false) {
    if (flags.cacheTtl !== undefined) throw new EvalfleetError(ErrorCode.Usage, "--cache-ttl needs --cache", { field: "cacheTtl" });
    return null;
  }
  const mode = flags.cache === true ? "local" : flags.cache.trim();
  if (mode !== "local" && mode !== "shared") throw new EvalfleetError(ErrorCode.Usage, `--cache must be local or shared, got '${mode}' (a suite file goes before --cache)`, { field: "cache", value: mode });
  if (mode === "shared" && !distributed) {
    throw new EvalfleetError(ErrorCode.Usage, "--cache shared is the fleet's cache on NATS: it needs a distributed run (evalfleet coordinator run); use --cache here", { field: "cache" });
  }
  const ttlSeconds = flags.cacheTtl === undefined ? DEFAULT_CACHE_TTL_SECONDS : parseDurationSeconds(flags.cacheTtl);
  if (ttlSeconds === null) throw new EvalfleetError(ErrorCode.Usage, `--cache-ttl must be a duration such as 7d, 12h, 30m, 45s or a number of seconds, got '${flags.cacheTtl}'`, { field: "cacheTtl", value: flags.cacheTtl });
  return { kind: mode, ttlSeconds };
}

/** The gate's own flags mean nothing without the gate: a usage error rather than a silent no-op. */
function checkGateFlags(flags: RunFlags): void {
  if (flags.failOnRegression) return;
  const given = [flags.baseline !== undefined && "--baseline", flags.regressionAlpha !== undefined && "--regression-alpha", flags.quarantineFlaky && "--quarantine-flaky"].filter((x): x is string => Boolean(x));
  if (given.length > 0) throw new EvalfleetError(ErrorCode.Usage, `${given.join(" and ")} ${given.length === 1 ? "is" : "are"} --fail-on-regression's: add --fail-on-regression`, { field: "failOnRegression" });
}

/**
 * The config of a run command from its flags and the environment: validated (a bad value names its
 * flag or variable and the value, exit 2) and frozen.
 */
export function runConfigFrom(input: RunConfigInput): RunConfig {
  const { command, flags, env } = input;
  const distributed = command === "coordinator-run" || command === "coordinator-resume";
  const f = flags as Partial<CoordinatorFlags>;
  const mode = distributed ? "distributed" : (command === "run" || command === "regrade") && flags.threads !== 0 ? "threads" : "inline";
  const concurrency = flags.concurrency ?? (mode === "inline" ? DEFAULT_INLINE_CONCURRENCY : DEFAULT_CONCURRENCY);
  const runId = command === "coordinator-resume" ? (input.resumeRunId ?? null) : command === "coordinator-run" ? (flags.runId ?? runIdFromEnvironment(env)) : (flags.runId ?? null);
  // `--resume-existing`, else `$EVALFLEET_RESUME_EXISTING` (a replaced Kubernetes Job pod).
  const resumeExisting = command === "coordinator-run" && (Boolean(f.resumeExisting) || booleanFromEnvironment("EVALFLEET_RESUME_EXISTING", env));
  const db = command === "script" ? (flags.db ?? input.scriptDb ?? env.EVALFLEET_DB ?? null) : (flags.db ?? null);
  const limitValues = splitLimitValues(flags.limit);
  checkGateFlags(flags);
  const recorded: Record<string, unknown> = {};
  for (const k of RECORDED_FLAGS) if (f[k] !== undefined && f[k] !== null) recorded[k] = f[k];
  return parseConfig(
    RunConfigSchema,
    {
      command,
      mode,
      suiteFile: command === "script" ? null : suiteFileFrom(input.suiteArgument, env),
      selector: { name: flags.name ?? null, tag: flags.tag ?? null, set: flags.set ?? null },
      timeout: flags.timeout ?? null,
      setupTimeout: flags.setupTimeout ?? null,
      teardownTimeout: flags.teardownTimeout ?? null,
      maxOutputKb: flags.maxOutputKb ?? DEFAULT_MAX_OUTPUT_KB,
      maxTranscriptKb: flags.maxTranscriptKb ?? DEFAULT_MAX_TRANSCRIPT_KB,
      loadTimeoutSeconds: flags.loadTimeout ?? DEFAULT_LOAD_TIMEOUT_SECONDS,
      list: command === "list" || Boolean(flags.list),
      jsonOutput: flags.jsonOutput ?? null,
      junit: flags.junit ?? null,
      verbose: Boolean(flags.verbose),
      logLevel: flags.logLevel ?? DEFAULT_RUN_LOG_LEVEL,
      color: colorAllowedBy(env),
      repeat: flags.repeat ?? null,
      passThreshold: flags.passThreshold ?? null,
      casePassRate: flags.casePassRate ?? null,
      confidence: flags.confidence ?? null,
      concurrency,
      threads: flags.threads ?? null,
      // `--threads 0` runs inline and leaves the pool unused; a bad count is left for the schema to name.
      poolThreads: flags.threads === undefined || flags.threads === 0 ? defaultThreads(concurrency) : flags.threads,
      graceSeconds: flags.grace ?? DEFAULT_GRACE_SECONDS,
      threadMemoryMb: flags.threadMemory ?? null,
      runId,
      store: {
        db: typeof db === "string" ? db.trim() || null : db,
        timeoutSeconds: flags.dbTimeout ?? DEFAULT_STORE_TIMEOUT_SECONDS,
        failOnRegression: Boolean(flags.failOnRegression),
        baseline: flags.baseline ?? null,
        quarantineFlaky: Boolean(flags.quarantineFlaky),
        regressionAlpha: flags.regressionAlpha ?? null,
        resume: command === "coordinator-resume" || resumeExisting,
      },
      recorded,
      definition: {
        runName: flags.runName ?? null,
        description: flags.description ?? null,
        evalFunctions: [...new Set(flags.evalFunction ?? [])],
        scoringMethod: flags.scoringMethod ?? null,
      },
      providers: {
        retries: command === "coordinator-resume" ? null : (flags.retries ?? DEFAULT_RETRIES),
        infraErrorsIncomplete: Boolean(flags.infraErrorsIncomplete),
        limits: mergeLimitTables(limitsFromEnvironment(env), limitValues.limits),
        budget: { usd: flags.budgetUsd ?? null, tokens: flags.budgetTokens ?? null },
      },
      regradeRunId: command === "regrade" ? (input.regradeRunId ?? null) : null,
      cache: cacheFrom(flags, distributed),
      cassette: {
        record: flags.record === undefined ? null : cassetteWhere(flags.record, "--record", distributed),
        replay: flags.replay === undefined ? null : cassetteWhere(flags.replay, "--replay", distributed),
        recordMissing: Boolean(flags.recordMissing),
      },
      judgeModelName: command === "regrade" ? (flags.judgeModel?.trim() || null) : null,
      rerun: command === "coordinator-resume" || command === "list" || command === "regrade" ? null : rerunFrom(flags, db),
      subset: {
        grep: flags.grep ?? null,
        limit: limitValues.firstN,
        sample: flags.sample ?? null,
        seed: flags.seed ?? null,
        filterMetadata: [...(flags.filterMetadata ?? [])],
      },
      order: flags.order ?? null,
      estimate: flags.estimate ? { slots: f.slots ?? null } : null,
      distributed: distributed
        ? {
            nats: natsSettingsFrom(f, env),
            waitForWorkersSeconds: f.waitForWorkers,
            maxAttempts: f.maxAttempts,
            deadlineSeconds: f.deadline ?? null,
            ackWaitSeconds: f.ackWait,
            cancelGraceSeconds: f.cancelGrace,
            brokerTimeoutSeconds: f.brokerTimeout,
            resumeExisting,
            onSigterm: f.onSigterm ?? "cancel",
            resumeRunId: input.resumeRunId ?? null,
          }
        : null,
    },
    (path) => FLAG_OF[path] ?? path,
  );
}

/**
 * The run-wide settings of a run command as a {@link RunSettingsInput}: the flags and environment
 * as given, the suite's settings and the defaults left to `compileRunSettings` (as for the library,
 * coordinator/api.ts). A run is recorded (and keeps transcripts) when it has a results store.
 */
export function cliSettingsInput(config: RunConfig): RunSettingsInput {
  const d = config.distributed;
  return {
    defaultTimeoutSeconds: config.timeout,
    setupTimeoutSeconds: config.setupTimeout,
    teardownTimeoutSeconds: config.teardownTimeout,
    maxOutputBytes: config.maxOutputKb * 1024,
    maxTranscriptBytes: config.maxTranscriptKb * 1024,
    recorded: Boolean(config.store.db || config.store.failOnRegression),
    repeat: config.repeat,
    retries: config.providers.retries,
    // null from the flags means "not given": the suite's threshold applies.
    passThreshold: config.passThreshold ?? undefined,
    casePassRate: config.casePassRate,
    confidence: config.confidence,
    regressionAlpha: config.store.regressionAlpha,
    evalFunctions: config.definition.evalFunctions,
    scoringMethod: config.definition.scoringMethod,
    cache: config.cache,
    record: config.cassette.record,
    replay: config.cassette.replay,
    recordMissing: config.cassette.recordMissing,
    limits: config.providers.limits,
    budget: config.providers.budget,
    graceSeconds: config.graceSeconds,
    order: config.order,
    ...(d
      ? {
          maxAttempts: d.maxAttempts,
          ackWaitSeconds: d.ackWaitSeconds,
          waitForWorkersSeconds: d.waitForWorkersSeconds,
          cancelGraceSeconds: d.cancelGraceSeconds,
          brokerLossSeconds: d.brokerTimeoutSeconds,
          deadlineSeconds: d.deadlineSeconds,
        }
      : {}),
  };
}
