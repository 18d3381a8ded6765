import { localResponseCacheDir } from "../shared/response-cache-dir.ts";
import type { ThreadCache, ThreadCassette } from "../shared/wire/thread.ts";
import type { Case } from "../shared/case/case.ts";
import { deliveryOfSubject } from "../shared/broker/subjects.ts";
import { cassetteFolder } from "../shared/cassette/cassette.ts";
import { CaseResult } from "../shared/result/result.ts";
import type { LoadedSuite } from "../shared/suite/suite.ts";
import { CaseMessageSchema, CaseTokenSchema, NATS_PROTOCOL, type CaseMessage, type RunManifest } from "../shared/wire/nats.ts";
import { versionMismatch } from "../shared/wire/protocol.ts";
import { plainlyValidCaseMessage } from "../shared/wire/case-message-check.ts";
import type { PoolCaseRequest } from "./pool/pool-request.ts";
import { resultShell } from "../shared/result/result-shell.ts";

/**
 * A case message as a worker receives it: checked against the size limit, the schema, the
 * protocol version, the run's manifest and the worker's own suite, then turned into a request to
 * the pool, or into an error result naming what was wrong. No I/O.
 */

/** Largest case message a worker accepts, in bytes: a real one is a few hundred bytes. */
export const MAX_CASE_MESSAGE_BYTES = 64 * 1024;

/** One decoder for every message. */
const utf8 = new TextDecoder();

/** What {@link checkCaseMessage} made of a message. */
export type CaseMessageCheck =
  /** A case of the run and of this worker's suite: run it. */
  | { kind: "ok"; message: CaseMessage; case: Case }
  /**
   * Not a case message of this run (garbage, another protocol version, outside the manifest):
   * disposed of. `recordOn` is the case whose subject it took, when the manifest knows it and the
   * message carries a delivery token to answer it with (the coordinator keeps the answer only
   * when the token is the case's: a forged message cannot spoil a real case).
   */
  | { kind: "bad"; why: string; recordOn: RecordOn | null }
  /** A case of the run that this worker's suite does not have (another suite): recorded on the case it names. */
  | { kind: "foreign"; why: string; recordOn: RecordOn };

/** The case a disposed-of message is answered on, with the token the answer echoes. */
export interface RecordOn {
  index: number;
  /** The trial whose subject it took (1-based). */
  trial: number;
  name: string;
  token: string;
}

/** Where a case message came from, and the run it must belong to. */
export interface CaseMessageContext {
  subject: string;
  runId: string;
  /** The indexes the run's manifest selected. */
  selected: ReadonlySet<number>;
  /** The suite this worker loaded. */
  suite: LoadedSuite;
}

/** Checks a received case message (see {@link CaseMessageCheck}); never throws. */
export function checkCaseMessage(data: Uint8Array, context: CaseMessageContext): CaseMessageCheck {
  const { suite, runId } = context;
  const delivery = deliveryOfSubject(context.subject);
  const index = delivery?.index ?? null;
  const selected = index !== null && context.selected.has(index) ? suite.cases[index] : undefined;
  const size = data.length;
  let parsed: unknown;
  let notJson = false;
  if (size <= MAX_CASE_MESSAGE_BYTES) {
    try {
      parsed = JSON.parse(utf8.decode(data));
    } catch {
      notJson = true;
    }
  }
  // The common message is checked in plain code (shared/wire/case-message-check.ts); the schema checks the rest and words the error.
  const msg = plainlyValidCaseMessage(parsed, NATS_PROTOCOL) ? { success: true as const, data: parsed as CaseMessage } : CaseMessageSchema.safeParse(parsed);
  if (size > MAX_CASE_MESSAGE_BYTES || !msg.success || msg.data.runId !== runId || msg.data.index !== index || msg.data.trial !== delivery?.trial || !selected || msg.data.name !== selected.name) {
    // The first problem in this order is the one reported: size, JSON, version, schema, manifest.
    const why =
      size > MAX_CASE_MESSAGE_BYTES
        ? `case message of ${size} bytes exceeds the ${MAX_CASE_MESSAGE_BYTES}-byte limit`
        : notJson
          ? "malformed case message: not valid JSON"
          : (versionMismatch(parsed, { ours: NATS_PROTOCOL, what: "case message", who: "worker" }) ??
            (!msg.success
              ? `malformed case message: ${msg.error.issues.map((i) => `${i.path.join(".") || "message"}: ${i.message}`).join("; ")}`
              : !selected
                ? `case index ${index} is not in the run's manifest`
                : `case message does not match the run's manifest (run '${msg.data.runId}', index ${msg.data.index}${msg.data.trial === 1 ? "" : ` trial ${msg.data.trial}`}, name '${msg.data.name}')`));
    const token = tokenOf(parsed);
    return { kind: "bad", why, recordOn: selected && index !== null && token !== null ? { index, trial: delivery!.trial, name: selected.name, token } : null };
  }
  const c = suite.cases[msg.data.index];
  if (!c || c.name !== msg.data.name || msg.data.fingerprint !== suite.fingerprint) {
    const why = `case ${msg.data.index} '${msg.data.name}' is not in this worker's suite (fingerprint ${suite.fingerprint.slice(0, 12)})`;
    return { kind: "foreign", why, recordOn: { index: msg.data.index, trial: msg.data.trial, name: msg.data.name, token: msg.data.token } };
  }
  return { kind: "ok", message: msg.data, case: c };
}

/** The delivery token a message carries, when it carries a well-formed one. */
function tokenOf(message: unknown): string | null {
  const token = message !== null && typeof message === "object" ? (message as { token?: unknown }).token : undefined;
  return CaseTokenSchema.safeParse(token).success ? (token as string) : null;
}

/** The pool request for one run of a checked case, with the run's settings from its manifest. */
export function poolRequest(c: Case, index: number, manifest: RunManifest, signal: AbortSignal, onEvent?: PoolCaseRequest["onEvent"]): PoolCaseRequest {
  return {
    index,
    name: c.name,
    defaultTimeout: manifest.defaultTimeout,
    timeoutSeconds: c.resolveTimeout(manifest.defaultTimeout),
    hookDefaults: { setup: manifest.setupTimeout, teardown: manifest.teardownTimeout },
    hookTimeouts: c.resolveHookTimeouts({ setup: manifest.setupTimeout, teardown: manifest.teardownTimeout }),
    maxOutputBytes: manifest.maxOutputBytes,
    hasTeardown: c.teardown !== null,
    shell: () => resultShell(c, index),
    signal,
    onEvent,
    runEvalFunctions: manifest.evalFunctions,
    scoringMethod: manifest.scoringMethod,
    maxTranscriptBytes: manifest.maxTranscriptBytes,
    cache: manifestCache(manifest),
    cassette: manifestCassette(manifest),
  };
}

/** The run's cassettes as a case's thread setting: the suite's folder in the fleet's bucket, or null. */
export function manifestCassette(manifest: RunManifest): ThreadCassette | null {
  if (!manifest.cassette) return null;
  return { mode: manifest.cassette.mode, dir: cassetteFolder(manifest.suite.name), recordMissing: manifest.cassette.recordMissing, fleet: true };
}

/** The error result a worker publishes for a case it cannot run: `error` on attempt `attempt`. */
export function caseErrorResult(suite: LoadedSuite, index: number, name: string, error: string, attempt: number, workerId: string): CaseResult {
  const c = suite.cases[index];
  // A case not in this worker's suite keeps the identity the message gave it.
  const result = c && c.name === name ? resultShell(c, index) : new CaseResult({ name, index, tags: [] });
  result.addError(error);
  result.attempts = attempt;
  result.worker = workerId;
  return result;
}

/** The response cache a run's manifest asks for, as a case's setting: a local one is this worker's own folder. */
export function manifestCache(manifest: RunManifest): ThreadCache | null {
  const cache = manifest.cache;
  if (!cache) return null;
  return cache.kind === "shared" ? { kind: "shared", ttlSeconds: cache.ttlSeconds } : { kind: "local", dir: localResponseCacheDir(), ttlSeconds: cache.ttlSeconds };
}
