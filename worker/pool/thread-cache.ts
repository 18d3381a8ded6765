import type { ThreadCache, ThreadMessage } from "../../shared/wire/thread.ts";
import { FileResponseStore } from "../models/file-cache.ts";
import type { ResponseCache, ResponseStore } from "../models/response-cache.ts";

/**
 * A pool thread's side of the response cache: a case's `cache` setting (shared/wire/thread.ts) as
 * a {@link ResponseCache}. A folder is read and written from the thread itself; the fleet's shared
 * cache lives on the broker, which only the worker process talks to, so the thread asks its pool
 * (`cache-get`, answered by a `cache-value` broadcast) and hands it answers to keep (`cache-put`).
 */

/**
 * Bound on one shared-cache lookup, in milliseconds: past it, the call is a miss (a slow broker
 * must not hold a case up longer than asking the model would).
 */
const SHARED_CACHE_LOOKUP_MS = 5000;

/** Asks the pool for shared-cache answers; see the module comment. */
export class PoolResponseStore implements ResponseStore {
  readonly #post: (message: ThreadMessage) => void;
  readonly #threadId: number;
  readonly #waiting = new Map<number, (value: unknown) => void>();
  #next = 0;

  constructor(post: (message: ThreadMessage) => void, threadId: number) {
    this.#post = post;
    this.#threadId = threadId;
  }

  get(key: string): Promise<unknown> {
    const requestId = this.#next++;
    return new Promise((resolve) => {
      // An answer that does not come in time is a miss: the model is asked instead.
      const timer = setTimeout(() => settle(null), SHARED_CACHE_LOOKUP_MS);
      timer.unref();
      const settle = (value: unknown): void => {
        clearTimeout(timer);
        this.#waiting.delete(requestId);
        resolve(value);
      };
      this.#waiting.set(requestId, settle);
      this.#post({ kind: "cache-get", taskId: -1, threadId: this.#threadId, requestId, key });
    });
  }

  async put(key: string, value: unknown): Promise<void> {
    this.#post({ kind: "cache-put", taskId: -1, key, value });
  }

  /** The pool's answer to one of this thread's lookups (answers for other threads are not ours). */
  answer(threadId: number, requestId: number, value: unknown): void {
    if (threadId === this.#threadId) this.#waiting.get(requestId)?.(value);
  }
}

/** The response caches of one thread: one store per folder, one shared store. */
export class ThreadCaches {
  readonly #folders = new Map<string, FileResponseStore>();
  readonly shared: PoolResponseStore;

  constructor(post: (message: ThreadMessage) => void, threadId: number) {
    this.shared = new PoolResponseStore(post, threadId);
  }

  /** The cache a case's setting names, or null without one. */
  cacheFor(spec: ThreadCache | undefined): ResponseCache | null {
    if (!spec) return null;
    if (spec.kind === "shared") return { store: this.shared, ttlSeconds: spec.ttlSeconds };
    let store = this.#folders.get(spec.dir);
    if (!store) this.#folders.set(spec.dir, (store = new FileResponseStore(spec.dir)));
    return { store, ttlSeconds: spec.ttlSeconds };
  }
}
