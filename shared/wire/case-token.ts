// runs in: main
import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Delivery tokens: how a result proves that its case was delivered to whoever publishes it.
 *
 * Each run has a random key (32 bytes) that only the coordinator's NATS user can read (it is kept
 * in the `EVALFLEET_RUN_KEYS` bucket, see shared/broker/subjects.ts). The token of trial `t` of
 * case `i` is `HMAC-SHA256(key, run id, i, t)` (each trial of a repeated case is its own delivery,
 * so a result of trial 1 can never stand for trial 2): indistinguishable from a random value to anyone without the key,
 * and the same every time it is computed, so a coordinator that takes over a run (`coordinator
 * resume`) recovers every token of the cases published before the crash from the one key. The
 * token travels in the case message only; a worker echoes it in the result, and publishes the
 * result on a subject that carries the token's seal (a one-way digest of it), so that:
 *
 * - a result without the token is dropped, whatever it says;
 * - the subject a result is stored under cannot be taken by someone who never received the case
 *   (results are create-only per subject), so a forgery cannot hold back the real result;
 * - a redelivered case can look up whether its result is stored without reading any result.
 *
 * Pure; no I/O.
 */

/** Bytes of a run key. */
export const RUN_KEY_BYTES = 32;

/** A token as it travels: 43 characters of base64url (the 32 bytes of an HMAC-SHA256). */
export const CASE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A seal as it appears in a result subject: 32 lowercase hex characters (128 bits). */
export const RESULT_SEAL_PATTERN = /^[0-9a-f]{32}$/;

/** A new random run key. */
export function newRunKey(): Buffer {
  return randomBytes(RUN_KEY_BYTES);
}

/** The token of trial `trial` (1-based) of case `index` of run `runId` under the run's key. */
export function caseToken(runKey: Uint8Array, runId: string, index: number, trial: number): string {
  return caseTokenBytes(runKey, runId, index, trial).toString("base64url");
}

/** The 32 bytes of {@link caseToken}. */
function caseTokenBytes(runKey: Uint8Array, runId: string, index: number, trial: number): Buffer {
  return createHmac("sha256", runKey).update(`evalfleet case token\n${runId}\n${index}\n${trial}`).digest();
}

/** Bytes of a token (an HMAC-SHA256). */
const TOKEN_BYTES = 32;

/** The seal of a token: what a result subject carries instead of the token itself. */
export function resultSeal(token: string): string {
  return createHash("sha256").update(`evalfleet result seal\n${token}`).digest("hex").slice(0, 32);
}

/** The tokens and seals of one run's cases, computed from its key. */
export class RunTokens {
  readonly #key: Uint8Array;
  readonly #runId: string;
  /** The first trials' tokens computed so far, {@link TOKEN_BYTES} each by case index; null until {@link remember}. */
  #kept: Buffer | null = null;
  /** 1 for each case index whose first trial's token is in {@link #kept}. */
  #known: Uint8Array | null = null;

  constructor(runKey: Uint8Array, runId: string) {
    if (runKey.length !== RUN_KEY_BYTES) throw new RangeError(`a run key has ${RUN_KEY_BYTES} bytes, got ${runKey.length}`);
    this.#key = runKey;
    this.#runId = runId;
  }

  /**
   * Keeps each first trial's token of the cases below `caseCount` once computed (33 bytes a case,
   * for as long as this object lives): a coordinator computes a case's token for its message and
   * again for its result, an HMAC each, which was a tenth of its CPU per case. Returns this.
   */
  remember(caseCount: number): this {
    this.#kept = Buffer.alloc(caseCount * TOKEN_BYTES);
    this.#known = new Uint8Array(caseCount);
    return this;
  }

  /** The token of a trial (1-based; default 1) of the case at a declaration index. */
  token(index: number, trial = 1): string {
    const kept = this.#kept;
    const known = this.#known;
    if (kept === null || known === null || trial !== 1 || !(index >= 0 && index < known.length)) return caseToken(this.#key, this.#runId, index, trial);
    const at = index * TOKEN_BYTES;
    if (known[index] === 1) return kept.toString("base64url", at, at + TOKEN_BYTES);
    const bytes = caseTokenBytes(this.#key, this.#runId, index, trial);
    bytes.copy(kept, at);
    known[index] = 1;
    return bytes.toString("base64url");
  }

  /** The seal of that token. */
  seal(index: number, trial = 1): string {
    return resultSeal(this.token(index, trial));
  }
}
