import { createHash } from "node:crypto";
import { currentCaseScope } from "../runtime/case-scope.ts";
import type { CachedAnswer, ResponseCache } from "./response-store.ts";

/**
 * The response cache of the built-in model clients (the OpenAI-compatible judge and agent, through
 * `ChatCompletionsClient`): off unless a run turns it on (`--cache`). A request's key is a hash of
 * the endpoint, the model, the whole request body (messages, tools, parameters) and the repeat index
 * of the case run (so `--repeat` stays honest: each repeat has its own answers); never the API key.
 * Only successful answers are stored. Where the answers live is the store's business: a folder
 * (file-cache.ts) or, shared across the fleet, the broker, reached through the worker process
 * (shared-cache.ts). One cache per process or thread, set by whoever runs the cases.
 */

// The cache's contract lives in a module of its own, which a case's scope can name without this one.
export type { CachedAnswer, ResponseCache, ResponseStore } from "./response-store.ts";

let active: ResponseCache | null = null;

/** Turns the cache on (a store and a TTL) or off (null) for the model calls this thread makes from now on. */
export function setResponseCache(cache: ResponseCache | null): void {
  active = cache;
}

/** The cache in use, or null. */
export function responseCache(): ResponseCache | null {
  return active;
}

/** The key of a request: SHA-256 (hex) of the endpoint, model, body and repeat index. The body holds no credential. */
export function responseKey(parts: { endpoint: string; model: string; body: unknown; repeat: number }): string {
  return createHash("sha256").update(JSON.stringify([parts.endpoint, parts.model, parts.body, parts.repeat])).digest("hex");
}

/**
 * `call()`'s answer through the cache: a stored, unexpired answer when there is one (a hit: no
 * model call), else `call()`, whose answer is stored once it succeeded (a miss). Without a cache,
 * `call()` as is. Each hit and miss is counted on the running case (its result's `modelCache`).
 * `onHit` turns a cached answer into what the caller returns (a completion's usage zeroed: a hit
 * costs nothing against token counts, limits and budgets).
 */
export async function cachedCall<T>(request: { endpoint: string; model: string; body: unknown }, call: () => Promise<T>, options: { onHit?: (value: T) => T } = {}): Promise<T> {
  const scope = currentCaseScope();
  const cache = scope?.cache ?? active;
  if (!cache) return call();
  const key = responseKey({ ...request, repeat: scope?.repeat ?? 1 });
  const stored = (await cache.store.get(key).catch(() => null)) as CachedAnswer | null;
  if (stored && stored.v === 1 && typeof stored.storedAt === "number" && Date.now() - stored.storedAt <= cache.ttlSeconds * 1000 && stored.value !== undefined) {
    if (scope) scope.modelCache.hits++;
    // A cached answer spent nothing: the caller may say so (its token usage zeroed).
    return options.onHit ? options.onHit(stored.value as T) : (stored.value as T);
  }
  const value = await call();
  if (scope) scope.modelCache.misses++;
  // Stored only once it succeeded; a failed write costs a later miss, nothing else.
  await cache.store.put(key, { v: 1, storedAt: Date.now(), value } satisfies CachedAnswer).catch(() => undefined);
  return value;
}

/**
 * True when the running case's model calls go through a cache, or its cassette records or replays
 * them (`--record`, `--replay`): then the same request must be written the same way to hit.
 */
export function responseCacheActive(): boolean {
  const scope = currentCaseScope();
  return Boolean(scope?.cache ?? active) || Boolean(scope?.cassette);
}
