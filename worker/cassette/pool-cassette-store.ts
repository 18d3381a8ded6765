import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { cassetteFileName, type Cassette } from "../../shared/cassette/cassette.ts";
import type { ThreadMessage } from "../../shared/wire/thread.ts";
import { cassetteText, ownCassette, parseCassette, type CassetteStore } from "./cassette-store.ts";

/**
 * A pool thread's side of the fleet's cassettes (`--record nats`, `--replay nats`): the bucket
 * lives on the broker, which only the worker process talks to, so the thread asks its pool
 * (`cassette-get`, `cassette-put`) and waits for the `cassette-answer` broadcast meant for it.
 * One {@link FleetCassettes} per thread; a store per suite folder.
 */

/**
 * Bound on one request to the pool, in milliseconds: a pool that never answers (a worker process
 * whose broker is gone for good) fails the case as the infrastructure's fault rather than hold it.
 */
const FLEET_CASSETTE_REQUEST_MS = 60_000;

/** The requests of one thread to its pool; see the module comment. */
export class FleetCassettes {
  readonly #post: (message: ThreadMessage) => void;
  readonly #threadId: number;
  readonly #waiting = new Map<number, (answer: { text: string | null; error: string | null }) => void>();
  readonly #stores = new Map<string, CassetteStore>();
  #next = 0;

  constructor(post: (message: ThreadMessage) => void, threadId: number) {
    this.#post = post;
    this.#threadId = threadId;
  }

  /** The store of a suite's folder in the bucket. */
  store(folder: string): CassetteStore {
    let store = this.#stores.get(folder);
    if (!store) this.#stores.set(folder, (store = new PoolCassetteStore(this, folder)));
    return store;
  }

  /** Sends `message` (with this thread's id and a fresh request id) and resolves with the pool's answer. */
  request(name: string, text: string | null, signal?: AbortSignal): Promise<string | null> {
    const requestId = this.#next++;
    return new Promise((resolve, reject) => {
      const settle = (answer: { text: string | null; error: string | null }): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#waiting.delete(requestId);
        if (answer.error !== null) reject(new EvalfleetError(ErrorCode.CassetteStore, answer.error, { path: name }));
        else resolve(answer.text);
      };
      const onAbort = (): void => {
        this.#waiting.delete(requestId);
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => settle({ text: null, error: `the worker process did not answer for the cassette ${name} within ${FLEET_CASSETTE_REQUEST_MS / 1000} s` }), FLEET_CASSETTE_REQUEST_MS);
      timer.unref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(requestId, settle);
      if (text === null) this.#post({ kind: "cassette-get", taskId: -1, threadId: this.#threadId, requestId, name });
      else this.#post({ kind: "cassette-put", taskId: -1, threadId: this.#threadId, requestId, name, text });
    });
  }

  /** The pool's answer to one of this thread's requests (answers for other threads are not ours). */
  answer(threadId: number, requestId: number, text: string | null, error: string | null): void {
    if (threadId === this.#threadId) this.#waiting.get(requestId)?.({ text, error });
  }
}

/** The cassettes of one suite's folder in the fleet's bucket, through the pool. */
class PoolCassetteStore implements CassetteStore {
  readonly #fleet: FleetCassettes;
  readonly #folder: string;

  constructor(fleet: FleetCassettes, folder: string) {
    this.#fleet = fleet;
    this.#folder = folder;
  }

  #name(caseName: string, trial: number): string {
    return `${this.#folder}/${cassetteFileName(caseName, trial)}`;
  }

  async load(caseName: string, trial: number, signal?: AbortSignal): Promise<Cassette | null> {
    const name = this.#name(caseName, trial);
    const text = await this.#fleet.request(name, null, signal);
    if (text === null) return null;
    const where = `nats:${name}`;
    return ownCassette(parseCassette(text, where), caseName, trial, where);
  }

  async save(cassette: Cassette, signal?: AbortSignal): Promise<void> {
    await this.#fleet.request(this.#name(cassette.case, cassette.trial), cassetteText(cassette), signal);
  }
}
