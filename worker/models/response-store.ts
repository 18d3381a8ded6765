/**
 * The response cache's contract (worker/models/response-cache.ts): where answers live, how long
 * they stay good, and their stored form. Types only, importing nothing: a case's scope
 * (worker/runtime/case-scope.ts) names the cache its model calls go through, and the cache reads
 * the running case's scope, so the types both need sit here, below both.
 */

/** Where cached answers live. `get` gives null for a miss (absent or expired); both never throw. */
export interface ResponseStore {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown): Promise<void>;
}

/** A response cache: its store and how long an answer stays good. */
export interface ResponseCache {
  store: ResponseStore;
  /** Seconds an answer stays good (`--cache-ttl`). */
  ttlSeconds: number;
}

/** The stored form of an answer. */
export interface CachedAnswer {
  v: 1;
  /** Epoch milliseconds. */
  storedAt: number;
  value: unknown;
}
