// runs in: both
import { EvalfleetError, ErrorCode } from "../errors.ts";

/**
 * Every NATS name evalfleet uses (subjects, streams, consumers, KV keys), built in this one place.
 *
 * ```
 * KV     EVALFLEET_RUNS     <run>.manifest  <run>.state  <run>.cancel  <run>.workers.<worker>
 * KV     EVALFLEET_RUN_KEYS <run>                             the run's key (coordinators only)
 * KV     EVALFLEET_CACHE    <sha256>                          shared response cache (`--cache shared`)
 * stream EVALFLEET_CASES    evalfleet.<run>.cases.<delivery>  WorkQueue (delivery: <index>, or <index>t<trial> past trial 1)
 * stream EVALFLEET_RESULTS  evalfleet.<run>.results.<delivery>-<seal>   Limits
 * core   evalfleet.<run>.events.<index>                       live progress, disposable (one event; an older worker's)
 * core   evalfleet.<run>.events.batch                         live progress, disposable (a worker's events of one tick)
 * core   evalfleet.<run>.limits.acquire                       a worker asks the coordinator for a provider permit (request/reply)
 * core   evalfleet.<run>.limits.release                       a worker gives a permit back, with what the provider said
 * core   evalfleet.<run>.starts                               a worker asks the coordinator whether a case may start (a run with a budget; request/reply)
 * KV     EVALFLEET_RUNS     <run>.limits                      the coordinator's pace and counts per provider key (status)
 * consumer run-<run> on EVALFLEET_CASES
 * ```
 */

/** Work-queue stream of queued and in-flight cases. */
export const CASES_STREAM = "EVALFLEET_CASES";
/** Limits stream of results, one per case (create-only per subject). */
export const RESULTS_STREAM = "EVALFLEET_RESULTS";
/** KV bucket of run records: manifest, state, cancel, worker presence. */
export const RUNS_BUCKET = "EVALFLEET_RUNS";
/**
 * KV bucket of run keys, one per run (shared/wire/case-token.ts): readable and writable by the
 * coordinator's NATS user only. The shipped permissions give a worker's user no access to it.
 */
export const RUN_KEYS_BUCKET = "EVALFLEET_RUN_KEYS";
/**
 * KV bucket of the shared response cache (`--cache shared`): one model answer per key, the key a
 * SHA-256 of the request (worker/models/response-cache.ts). Workers read and write it.
 */
export const CACHE_BUCKET = "EVALFLEET_CACHE";

/** The key of a cached answer in {@link CACHE_BUCKET}: the request's SHA-256, checked to be one. */
export function cacheBucketKey(hash: string): string {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new EvalfleetError(ErrorCode.Usage, `a response cache key is a SHA-256 in hex, got '${hash.slice(0, 80)}'`);
  return hash;
}

/**
 * Object store bucket of the fleet's cassettes (`--record nats`, `--replay nats`): one object per
 * case and trial, under a folder per suite (`cassetteFolder` of shared/cassette/cassette.ts), so any worker replays any
 * case. One bucket for every suite, not one per suite: NATS permissions match whole subject tokens,
 * so a worker's user can be given exactly one named bucket, but not "every bucket whose name starts
 * with EVALFLEET_CASSETTES_" (docs/security.md).
 */
export const CASSETTE_BUCKET = "EVALFLEET_CASSETTES";

/** Subject root. */
export const SUBJECT_ROOT = "evalfleet";

/** Subjects bound to {@link CASES_STREAM}. */
export const CASES_STREAM_SUBJECTS = [`${SUBJECT_ROOT}.*.cases.*`];
/** Subjects bound to {@link RESULTS_STREAM}. */
export const RESULTS_STREAM_SUBJECTS = [`${SUBJECT_ROOT}.*.results.*`];

const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** A run id must be one subject token (letters, digits, `_`, `-`). Throws a usage error otherwise. */
export function assertRunId(runId: string): string {
  if (!TOKEN.test(runId)) {
    throw new EvalfleetError(ErrorCode.Usage, `run id must be 1-128 letters, digits, '_' or '-', got '${runId}'`, { field: "runId", value: runId });
  }
  return runId;
}

/** Reduces any label (a host name, a pod name) to a subject token. */
export function toToken(label: string): string {
  const t = label.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 128);
  return t.length > 0 ? t : "_";
}

/**
 * One delivery's subject token: `<index>` for a case's first trial (the names of protocol 3), else
 * `<index>t<trial>` (`--repeat`: each trial of a case is its own delivery, see docs/distributed.md).
 */
export function deliveryToken(index: number, trial = 1): string {
  if (!Number.isInteger(trial) || trial < 1) throw new RangeError(`a trial is an integer >= 1, got ${trial}`);
  return trial === 1 ? `${index}` : `${index}t${trial}`;
}

/** The subject of one trial of one case of a run (trial 1: `cases.<index>`). */
export function caseSubject(runId: string, index: number, trial = 1): string {
  return `${SUBJECT_ROOT}.${runId}.cases.${deliveryToken(index, trial)}`;
}
/** Every case subject of a run (for purges and stream-info filters). */
export function caseSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.cases.*`;
}
/**
 * The subject of one trial's result: `<delivery>-<seal>`, the seal of the trial's delivery token
 * (shared/wire/case-token.ts). One subject token, so the results stream's subjects and the
 * permissions that name them are those of every evalfleet version.
 */
export function resultSubject(runId: string, index: number, seal: string, trial = 1): string {
  return `${SUBJECT_ROOT}.${runId}.results.${deliveryToken(index, trial)}-${seal}`;
}
/**
 * The case index, trial and seal of a result subject; `seal` is null when the subject carries
 * none. Null when it is not a result subject.
 */
export function resultSubjectParts(subject: string): { index: number; trial: number; seal: string | null } | null {
  const m = /^[^.]+\.[^.]+\.results\.(\d+)(?:t([1-9]\d*))?(?:-([0-9a-f]{32}))?$/.exec(subject);
  return m ? { index: Number(m[1]), trial: m[2] ? Number(m[2]) : 1, seal: m[3] ?? null } : null;
}
/** Every result subject of a run. */
export function resultSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.results.*`;
}
/** The core subject of a case's live events. */
export function eventSubject(runId: string, index: number): string {
  return `${SUBJECT_ROOT}.${runId}.events.${index}`;
}
/**
 * The core subject of a worker's batched live events (shared/wire/nats.ts `EventBatchSchema`):
 * one token under `events`, so the subscription and the permissions that name
 * `evalfleet.*.events.*` cover it, and no index reads `batch`.
 */
export function eventBatchSubject(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.events.batch`;
}
/** Every event subject of a run (single events and batches). */
export function eventSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.events.*`;
}
/** The core subject on which a run's workers ask its coordinator for provider permits (request/reply). */
export function limitAcquireSubject(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.limits.acquire`;
}
/** The core subject on which a run's workers give provider permits back. */
export function limitReleaseSubject(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.limits.release`;
}
/**
 * The core subject on which a run's workers ask its coordinator whether a case may start
 * (request/reply), in a run whose manifest says `startGate` (a run with a budget).
 */
export function startGateSubject(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.starts`;
}
/** The durable consumer of a run on {@link CASES_STREAM}. */
export function runConsumer(runId: string): string {
  return `run-${runId}`;
}
/** Message id of a published trial of a case (dedup within the stream's window); trial 1 keeps `<run>:<index>`. */
export function caseMsgId(runId: string, index: number, trial = 1): string {
  return trial === 1 ? `${runId}:${index}` : `${runId}:${index}:t${trial}`;
}
/**
 * Message id of a published result. It carries the seal: an id anyone could compute would let a
 * forgery published first make the real result a "duplicate" the stream drops.
 */
export function resultMsgId(runId: string, index: number, seal: string, trial = 1): string {
  return `${runId}:${deliveryToken(index, trial)}:r:${seal}`;
}
/** The case index and trial of a case or result subject (an event subject: trial 1), or `null` when the subject is not one. */
export function deliveryOfSubject(subject: string): { index: number; trial: number } | null {
  const m = /^[^.]+\.[^.]+\.(?:cases|events)\.(\d+)(?:t([1-9]\d*))?$/.exec(subject);
  if (m) return { index: Number(m[1]), trial: m[2] ? Number(m[2]) : 1 };
  const r = resultSubjectParts(subject);
  return r ? { index: r.index, trial: r.trial } : null;
}
/** The index in a case, result or event subject, or `null` when the subject is not one. */
export function indexOfSubject(subject: string): number | null {
  return deliveryOfSubject(subject)?.index ?? null;
}

/** KV keys of a run. */
export const runKeys = {
  manifest: (runId: string) => `${runId}.manifest`,
  state: (runId: string) => `${runId}.state`,
  cancel: (runId: string) => `${runId}.cancel`,
  /** The coordinator's provider limiter, per key (pace, in flight, 429s, tokens): `coordinator status` reads it. */
  limits: (runId: string) => `${runId}.limits`,
  worker: (runId: string, workerId: string) => `${runId}.workers.${toToken(workerId)}`,
  workers: (runId: string) => `${runId}.workers.*`,
  everything: (runId: string) => `${runId}.>`,
  /** Every manifest of every run (a standing worker pool watches this). */
  allManifests: () => `*.manifest`,
};
/** The run id of a `<run>.manifest` key. */
export function runOfManifestKey(key: string): string | null {
  const m = /^([^.]+)\.manifest$/.exec(key);
  return m ? m[1]! : null;
}

/** The advisory the server raises when a case message of a run used up its deliveries. */
export function maxDeliveriesAdvisory(runId: string): string {
  return `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${CASES_STREAM}.${runConsumer(runId)}`;
}
