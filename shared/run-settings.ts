// runs in: both
import * as z from "zod";
import {
  DEFAULT_ACK_WAIT_SECONDS,
  DEFAULT_ADAPTIVE_CONFIDENCE,
  DEFAULT_BROKER_TIMEOUT_SECONDS,
  DEFAULT_CANCEL_GRACE_SECONDS,
  DEFAULT_CASE_PASS_RATE,
  DEFAULT_CONFIDENCE,
  DEFAULT_GRACE_SECONDS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_OUTPUT_KB,
  DEFAULT_MAX_TRANSCRIPT_KB,
  DEFAULT_RECONCILE_SECONDS,
  DEFAULT_REGRESSION_ALPHA,
  DEFAULT_RETRIES,
  DEFAULT_SETUP_TIMEOUT_SECONDS,
  DEFAULT_TEARDOWN_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_WAIT_FOR_WORKERS_SECONDS,
  resolveDefaultTimeout,
} from "./defaults.ts";
import { SCORING_METHODS, type ScoringMethod } from "./datasets/scoring-methods.ts";
import { fraction, parseConfig, seconds, text, whole } from "./config.ts";
import { lazySchema } from "./runtime/lazy-schema.ts";
import { LimitTableSchema, mergeLimitTables, type LimitTable } from "./providers/limit-spec.ts";
import { PriceTableSchema, type PriceTable } from "./providers/prices.ts";
import { checkRunEvalFunctions, type EvalFunctions } from "./case/eval-functions.ts";
import { MAX_REPEAT } from "./trials/fold-repeats.ts";
import { ErrorCode, EvalfleetError } from "./errors.ts";
import { ORDER_VALUES, readOrderValue } from "./order-value.ts";

/**
 * Every run-wide setting, compiled once. Both front doors (the library's `runCases` /
 * `runSuiteLocal`, the command line) turn what they were given into a {@link RunSettingsInput}
 * with no defaults of their own and call {@link compileRunSettings}: the only place where the
 * defaults of shared/defaults.ts are applied, the suite's settings are merged under the caller's
 * and ranges are checked. What comes out is deep-frozen and read-only everywhere after (the shape
 * Temporal's worker uses: add defaults, compile, then only compiled options travel).
 */

const cacheSchema = () => z.object({ kind: z.enum(["local", "shared"]), ttlSeconds: z.number().positive({ error: "must be a number of seconds > 0" }) }).nullable();
const cassetteSchema = () =>
  z.object({ mode: z.enum(["record", "replay"]), dir: z.string().min(1, { error: "must be a folder" }), recordMissing: z.boolean() }).nullable();
const budgetSchema = () =>
  z.object({
    usd: z.number().positive({ error: "must be an amount of USD > 0" }).nullable(),
    tokens: whole(1).nullable(),
  });
/** Exclusive (0, 1): a confidence of 0 or 1 makes every interval empty or everything. */
const openFraction = () => {
  const rule = "must be a fraction strictly between 0 and 1 (0.95 for 95%)";
  return z.number({ error: rule }).gt(0, { error: rule }).lt(1, { error: rule });
};

/** A repeat count, with the message `checkRepeat` has always given (coordinator/run/policy.ts). */
const repeatCount = () => {
  const rule = `must be a whole number from 1 to ${MAX_REPEAT}`;
  return z.int({ error: rule }).min(1, { error: rule }).max(MAX_REPEAT, { error: rule });
};

/** The compiled settings of one run: every field required, units in the names. */
export const RunSettingsSchema = lazySchema(() =>
  z.strictObject({
    /** Seconds, the timeout of cases that set none: the caller's, else the suite's, else 120. */
    defaultTimeoutSeconds: seconds(),
    /** Seconds, the setup bound of cases that set none: the caller's, else the suite's, else 60. */
    setupTimeoutSeconds: seconds(),
    /** Seconds, the teardown bound of cases that set none, as `setupTimeoutSeconds`. */
    teardownTimeoutSeconds: seconds(),
    /** Bytes of output kept on a result (the checks see all of it). Default 256 KiB. */
    maxOutputBytes: whole(1),
    /** Bytes of transcript kept per case; 0 keeps none. Default: 256 KiB for a recorded run, else 0. */
    maxTranscriptBytes: whole(0),
    /** Runs per case, 1 to {@link MAX_REPEAT} (MIN of `--repeat MIN..MAX`). Default 1. */
    repeat: repeatCount(),
    /**
     * The most runs a case may get: MAX of `--repeat MIN..MAX` (adaptive repeats,
     * shared/trials/adaptive-repeats.ts), else `repeat` (a fixed repeat). Never below `repeat`.
     */
    repeatMax: repeatCount(),
    /** Two-sided confidence of the interval that stops adaptive repeats. Default 0.75 (shared/defaults.ts says why). */
    adaptiveConfidence: openFraction(),
    /** Re-runs of a case whose failure is `infra`. Default 0. */
    retries: whole(0),
    /** The fraction (0-1) of cases that must pass for the run to pass; null: every case. Default: the suite's. */
    passThreshold: fraction().nullable(),
    /** A repeated case passes when at least this fraction of its trials pass. Default 1. */
    casePassRate: fraction(),
    /** Two-sided confidence of the intervals a report shows. Default 0.95. */
    confidence: openFraction(),
    /** `--fail-on-regression`'s bound on its false-alarm rate (run-level and per-case tests together). Default 0.05. */
    regressionAlpha: openFraction(),
    /** Names of the suite's evaluation functions that grade every case after its own, once each, in order. Default none. */
    evalFunctions: z.array(text()),
    /** A scoring method replacing every expected-output check's own; null: each case's. */
    scoringMethod: z.enum(SCORING_METHODS, { error: `must be one of ${SCORING_METHODS.join(", ")}` }).nullable(),
    /** The response cache of the model calls; null: off. */
    cache: cacheSchema(),
    /** Record (`--record DIR`) or replay (`--replay DIR`, `--record-missing`) each case's HTTP exchanges and wrapped tool calls; null: neither. */
    cassette: cassetteSchema(),
    /** Provider limits by key: the suite's, with the caller's merged over them key by key. */
    limits: LimitTableSchema,
    /** Prices by model over the built-in table: `{ ...suite.prices, ...input.prices }`. */
    prices: PriceTableSchema,
    /** What the whole run may spend; both null: no budget. */
    budget: budgetSchema(),
    /** Milliseconds past a deadline before a thread stuck in a case is terminated. Default 5000. */
    graceMs: whole(0),
    /** Distributed runs: deliveries per case before it is recorded as lost. Default 3. */
    maxAttempts: whole(1),
    /** Distributed runs: ms before an unacknowledged case is redelivered. Default 30000. */
    ackWaitMs: whole(1),
    /** Distributed runs: ms to wait for a compatible worker before giving up. Default 60000. */
    waitForWorkersMs: whole(0),
    /** Distributed runs: ms in-flight cases get to report after a cancel. Default 15000. */
    cancelGraceMs: whole(0),
    /** Distributed runs: ms the broker may be unreachable before the run is given up. Default 30000. */
    brokerLossMs: whole(0),
    /** Distributed runs: ms between reconciliations of lost cases. Default 5000. */
    reconcileMs: whole(1),
    /** Whole-run budget in ms (`--deadline`); null: none. */
    deadlineMs: whole(0).nullable(),
    /**
     * The order cases are started in (results are always reported in declaration order):
     * `history` longest first by recorded duration (a run with no durations to read starts in
     * declaration order), `declared`, or `random` with its seed. Default `history`.
     */
    order: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("declared") }),
      z.object({ kind: z.literal("history") }),
      z.object({ kind: z.literal("random"), seed: whole(0).max(0xffff_ffff) }),
    ]),
  }),
);

/** The compiled settings of one run (deep-frozen). */
export type RunSettings = Readonly<z.infer<typeof RunSettingsSchema>>;

/**
 * What a front door hands to {@link compileRunSettings}: each field as the caller gave it, in the
 * unit of its name, `undefined` when not given. `null` says "none" where that means something
 * (`passThreshold: null`: no threshold even when the suite has one). No defaults here.
 */
export interface RunSettingsInput {
  defaultTimeoutSeconds?: number | null;
  setupTimeoutSeconds?: number | null;
  teardownTimeoutSeconds?: number | null;
  maxOutputBytes?: number | null;
  /** Used only when `recorded`: an unrecorded run keeps no transcript. */
  maxTranscriptBytes?: number | null;
  /** Whether the run is recorded in a results store (only then are transcripts kept). Default false. */
  recorded?: boolean;
  /** A fixed count (`--repeat N`), or adaptive repeats (`--repeat MIN..MAX`). */
  repeat?: number | RepeatRange | null;
  /** Adaptive repeats' stopping confidence; default 0.75. */
  adaptiveConfidence?: number | null;
  retries?: number | null;
  /** `undefined`: the suite's; `null`: none. */
  passThreshold?: number | null;
  casePassRate?: number | null;
  confidence?: number | null;
  regressionAlpha?: number | null;
  evalFunctions?: readonly string[] | null;
  scoringMethod?: ScoringMethod | string | null;
  cache?: { kind: "local" | "shared"; ttlSeconds: number } | null;
  /** A folder to record every case's cassette in (`--record DIR`). Default: none. */
  record?: string | null;
  /** A folder to answer every case's requests from (`--replay DIR`). Default: none. */
  replay?: string | null;
  /** With `replay`: send and record what a cassette lacks instead of failing the case (`--record-missing`). Default false. */
  recordMissing?: boolean | null;
  limits?: LimitTable | null;
  prices?: PriceTable | null;
  budget?: { usd?: number | null; tokens?: number | null } | null;
  graceSeconds?: number | null;
  maxAttempts?: number | null;
  ackWaitSeconds?: number | null;
  waitForWorkersSeconds?: number | null;
  cancelGraceSeconds?: number | null;
  brokerLossSeconds?: number | null;
  reconcileSeconds?: number | null;
  deadlineSeconds?: number | null;
  /** `declared`, `history` or `random[:SEED]` (as `--order` takes it), or the compiled value. Default `history`; `random` without a seed draws one. */
  order?: string | ScheduleOrder | null;
}

/** `--repeat MIN..MAX`: every case runs MIN trials, and more up to MAX while its interval is around its pass rule. */
export interface RepeatRange {
  min: number;
  max: number;
}

/** Where a run's cases are started from: see `order` in {@link RunSettingsSchema}. */
export type ScheduleOrder = RunSettings["order"];

/**
 * Parses an order as `--order` takes it (shared/order-value.ts); `random` without a seed gets
 * one from `drawSeed`. Throws a usage error naming `field` and the value otherwise.
 */
export function parseScheduleOrder(value: string, field = "order", drawSeed: () => number = () => Math.floor(Math.random() * 0x1_0000_0000)): ScheduleOrder {
  const read = readOrderValue(value);
  if (!read) throw new EvalfleetError(ErrorCode.Usage, `${field} must be ${ORDER_VALUES}, got '${value}'`, { field, value });
  return read.kind === "random" ? { kind: "random", seed: read.seed ?? drawSeed() >>> 0 } : read;
}

/** What a suite contributes to a run's settings (a `LoadedSuite` fits; `runCases` has none). */
export interface RunSettingsSuite {
  defaultTimeout?: number | null;
  setupTimeoutSeconds?: number | null;
  teardownTimeoutSeconds?: number | null;
  passThreshold?: number | null;
  /** The suite's pass rule of a repeated case, under `casePassRate` of the input. */
  casePassRate?: number | null;
  limits?: LimitTable | null;
  prices?: PriceTable | null;
  evalFunctions?: EvalFunctions | null;
}

/** The input fields by the name a caller knows them (an error names the input, not the compiled field). */
const INPUT_NAME: Readonly<Record<string, string>> = {
  graceMs: "graceSeconds",
  ackWaitMs: "ackWaitSeconds",
  waitForWorkersMs: "waitForWorkersSeconds",
  cancelGraceMs: "cancelGraceSeconds",
  brokerLossMs: "brokerLossSeconds",
  reconcileMs: "reconcileSeconds",
  deadlineMs: "deadlineSeconds",
  repeatMax: "repeat",
};

/** Seconds to whole ms; a non-number is passed through for the schema to name. */
function ms(value: number | null | undefined, fallbackSeconds: number): unknown {
  const s = value ?? fallbackSeconds;
  return typeof s === "number" && Number.isFinite(s) && s >= 0 ? Math.round(s * 1000) : s;
}

/**
 * The one compile step: defaults applied, the suite merged under the input, ranges checked. A bad
 * value throws a usage error (exit 2 on the command line) naming the field and the value:
 * `repeat must be a whole number from 1 to 1000, got 0`. Returns a deep-frozen {@link RunSettings}.
 *
 * Merges: timeouts, the pass threshold and the case pass rate are the input's, else the suite's, else the default;
 * limits are merged key by key, the input's over the suite's (`mergeLimitTables`); prices are
 * `{ ...suite.prices, ...input.prices }` (a model the input prices replaces the suite's price of
 * it whole). `evalFunctions` are deduplicated and must name functions the suite registers.
 */
export function compileRunSettings(input: Readonly<RunSettingsInput>, suite: Readonly<RunSettingsSuite> | null = null): RunSettings {
  const recorded = input.recorded === true;
  const transcript = input.maxTranscriptBytes ?? DEFAULT_MAX_TRANSCRIPT_KB * 1024;
  const raw = {
    defaultTimeoutSeconds: resolveDefaultTimeout(input.defaultTimeoutSeconds, suite?.defaultTimeout),
    setupTimeoutSeconds: input.setupTimeoutSeconds ?? suite?.setupTimeoutSeconds ?? DEFAULT_SETUP_TIMEOUT_SECONDS,
    teardownTimeoutSeconds: input.teardownTimeoutSeconds ?? suite?.teardownTimeoutSeconds ?? DEFAULT_TEARDOWN_TIMEOUT_SECONDS,
    maxOutputBytes: input.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_KB * 1024,
    // The library has always cut a fractional or negative transcript bound to a whole number >= 0.
    maxTranscriptBytes: !recorded ? 0 : typeof transcript === "number" && Number.isFinite(transcript) ? Math.max(0, Math.floor(transcript)) : transcript,
    ...repeatFields(input.repeat),
    adaptiveConfidence: input.adaptiveConfidence ?? DEFAULT_ADAPTIVE_CONFIDENCE,
    retries: input.retries ?? DEFAULT_RETRIES,
    passThreshold: input.passThreshold !== undefined ? input.passThreshold : (suite?.passThreshold ?? null),
    casePassRate: input.casePassRate ?? suite?.casePassRate ?? DEFAULT_CASE_PASS_RATE,
    confidence: input.confidence ?? DEFAULT_CONFIDENCE,
    regressionAlpha: input.regressionAlpha ?? DEFAULT_REGRESSION_ALPHA,
    evalFunctions: [...new Set(input.evalFunctions ?? [])],
    scoringMethod: input.scoringMethod ?? null,
    cache: input.cache ?? null,
    cassette: cassetteSetting(input),
    limits: mergeLimitTables(suite?.limits, input.limits),
    prices: { ...(suite?.prices ?? {}), ...(input.prices ?? {}) },
    budget: { usd: input.budget?.usd ?? null, tokens: input.budget?.tokens ?? null },
    graceMs: ms(input.graceSeconds, DEFAULT_GRACE_SECONDS),
    maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    ackWaitMs: ms(input.ackWaitSeconds, DEFAULT_ACK_WAIT_SECONDS),
    waitForWorkersMs: ms(input.waitForWorkersSeconds, DEFAULT_WAIT_FOR_WORKERS_SECONDS),
    cancelGraceMs: ms(input.cancelGraceSeconds, DEFAULT_CANCEL_GRACE_SECONDS),
    brokerLossMs: ms(input.brokerLossSeconds, DEFAULT_BROKER_TIMEOUT_SECONDS),
    reconcileMs: ms(input.reconcileSeconds, DEFAULT_RECONCILE_SECONDS),
    deadlineMs: input.deadlineSeconds === null || input.deadlineSeconds === undefined ? null : ms(input.deadlineSeconds, 0),
    order: typeof input.order === "string" ? parseScheduleOrder(input.order) : (input.order ?? { kind: "history" }),
  };
  const settings = parseConfig(RunSettingsSchema, raw, (path) => INPUT_NAME[path.split(".")[0]!] ?? path);
  // Names of evaluation functions only mean something against the suite's registry.
  if (settings.evalFunctions.length > 0) checkRunEvalFunctions(settings.evalFunctions, suite?.evalFunctions ?? new Map());
  return settings;
}

/** `repeat` and `repeatMax` from a count or a range; MAX below MIN is a usage error naming both. */
function repeatFields(repeat: number | RepeatRange | null | undefined): { repeat: unknown; repeatMax: unknown } {
  if (repeat === null || repeat === undefined) return { repeat: 1, repeatMax: 1 };
  if (typeof repeat !== "object") return { repeat, repeatMax: repeat };
  const { min, max } = repeat;
  if (typeof min === "number" && typeof max === "number" && max < min) {
    throw new EvalfleetError(ErrorCode.Usage, `repeat (--repeat MIN..MAX) needs MAX >= MIN, got ${min}..${max}`, { field: "repeat", value: `${min}..${max}` });
  }
  return { repeat: min, repeatMax: max };
}

/** `record`, `replay` and `recordMissing` as one setting; a combination that means nothing is a usage error naming it. */
function cassetteSetting(input: Readonly<RunSettingsInput>): unknown {
  const { record, replay } = input;
  const recordMissing = input.recordMissing === true;
  if (record != null && replay != null) throw new EvalfleetError(ErrorCode.Usage, `record (--record) and replay (--replay) cannot both be set (record '${record}', replay '${replay}'): replay with recordMissing records what a cassette lacks`, { field: "record" });
  if (recordMissing && replay == null) throw new EvalfleetError(ErrorCode.Usage, "recordMissing (--record-missing) needs replay (--replay DIR)", { field: "recordMissing" });
  if (replay != null) return { mode: "replay", dir: replay, recordMissing };
  if (record != null) return { mode: "record", dir: record, recordMissing: false };
  return null;
}

/** One case's bounds, in seconds: resolved once per case and read by every phase of it. */
export interface CaseBounds {
  /** The run and its checks (the case's `timeoutSeconds`, else the run's). */
  timeoutSeconds: number;
  /** The `setup` hook, outside the timeout. */
  setupSeconds: number;
  /** The `teardown` hook, outside the timeout. */
  teardownSeconds: number;
  /** Bytes of output kept on the result (the checks see all of it). */
  maxOutputBytes: number;
}

/** What a case's bounds are resolved against: the run's, each defaulted when not given (runCase's public options). */
export interface CaseBoundsInput {
  defaultTimeout?: number;
  setupTimeout?: number;
  teardownTimeout?: number;
  maxOutputBytes?: number;
}

/**
 * The bounds of `c` in a run: the case's own (even 0) win over the run's, and a bound the caller
 * did not give is the default, as {@link compileRunSettings} would make it (the one other place
 * that applies these defaults: a runner hands runCase the compiled values, so none is left unset).
 */
export function caseBounds(
  c: { readonly timeoutSeconds?: number | null; readonly setupTimeoutSeconds?: number | null; readonly teardownTimeoutSeconds?: number | null },
  run: Readonly<CaseBoundsInput>,
): CaseBounds {
  return {
    timeoutSeconds: c.timeoutSeconds ?? run.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS,
    setupSeconds: c.setupTimeoutSeconds ?? run.setupTimeout ?? DEFAULT_SETUP_TIMEOUT_SECONDS,
    teardownSeconds: c.teardownTimeoutSeconds ?? run.teardownTimeout ?? DEFAULT_TEARDOWN_TIMEOUT_SECONDS,
    maxOutputBytes: run.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_KB * 1024,
  };
}
