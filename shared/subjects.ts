import { EvalfleetError, ErrorCode } from "./errors.ts";

/**
 * Every NATS name evalfleet uses (subjects, streams, consumers, KV keys), built in this one place.
 *
 * ```
 * KV     EVALFLEET_RUNS     <run>.manifest  <run>.state  <run>.cancel  <run>.workers.<worker>
 * stream EVALFLEET_CASES    evalfleet.<run>.cases.<index>     WorkQueue
 * stream EVALFLEET_RESULTS  evalfleet.<run>.results.<index>   Limits
 * core   evalfleet.<run>.events.<index>                       live progress, disposable
 * consumer run-<run> on EVALFLEET_CASES
 * ```
 */

/** Work-queue stream of queued and in-flight cases. */
export const CASES_STREAM = "EVALFLEET_CASES";
/** Limits stream of results, one per case (create-only per subject). */
export const RESULTS_STREAM = "EVALFLEET_RESULTS";
/** KV bucket of run records: manifest, state, cancel, worker presence. */
export const RUNS_BUCKET = "EVALFLEET_RUNS";
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

/** The subject of one case of a run. */
export function caseSubject(runId: string, index: number): string {
  return `${SUBJECT_ROOT}.${runId}.cases.${index}`;
}
/** Every case subject of a run (for purges and stream-info filters). */
export function caseSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.cases.*`;
}
/** The subject of one case's result. */
export function resultSubject(runId: string, index: number): string {
  return `${SUBJECT_ROOT}.${runId}.results.${index}`;
}
/** Every result subject of a run. */
export function resultSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.results.*`;
}
/** The core subject of a case's live events. */
export function eventSubject(runId: string, index: number): string {
  return `${SUBJECT_ROOT}.${runId}.events.${index}`;
}
/** Every event subject of a run. */
export function eventSubjects(runId: string): string {
  return `${SUBJECT_ROOT}.${runId}.events.*`;
}
/** The durable consumer of a run on {@link CASES_STREAM}. */
export function runConsumer(runId: string): string {
  return `run-${runId}`;
}
/** Message id of a published case (dedup within the stream's window). */
export function caseMsgId(runId: string, index: number): string {
  return `${runId}:${index}`;
}
/** Message id of a published result. */
export function resultMsgId(runId: string, index: number): string {
  return `${runId}:${index}:r`;
}
/** The index in a case or result subject, or `null` when the subject is not one. */
export function indexOfSubject(subject: string): number | null {
  const m = /^[^.]+\.[^.]+\.(?:cases|results|events)\.(\d+)$/.exec(subject);
  return m ? Number(m[1]) : null;
}
/** The run id in a case, result or event subject, or `null`. */
export function runOfSubject(subject: string): string | null {
  const m = /^[^.]+\.([^.]+)\.(?:cases|results|events)\.\d+$/.exec(subject);
  return m ? m[1]! : null;
}

/** KV keys of a run. */
export const runKeys = {
  manifest: (runId: string) => `${runId}.manifest`,
  state: (runId: string) => `${runId}.state`,
  cancel: (runId: string) => `${runId}.cancel`,
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
