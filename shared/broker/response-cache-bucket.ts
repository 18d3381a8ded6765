// runs in: main
import { Kvm, type KV } from "@nats-io/kv";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { CACHE_BUCKET, cacheBucketKey } from "./subjects.ts";

/**
 * The fleet's shared response cache (`--cache shared`) in the KV bucket {@link CACHE_BUCKET}: the
 * coordinator creates the bucket for a run that asks for it; each worker process reads and writes
 * it for its threads (worker/pool/thread-cache.ts asks the pool). Any worker credential that may
 * write the bucket can put an answer in it that another worker will serve: see docs/security.md.
 */

/** Largest answer kept in the shared cache, in bytes: a NATS KV value stays under the server's 1 MiB payload limit. */
export const MAX_SHARED_CACHE_VALUE_BYTES = 900 * 1024;

/** Creates the bucket when it is missing (a coordinator starting a `--cache shared` run); `ttlMs` is the bucket's own bound on an entry's age. */
export async function ensureResponseCacheBucket(js: JetStreamClient, jsm: JetStreamManager, ttlMs: number): Promise<void> {
  try {
    // An existing bucket is kept as it is (its age bound too: reads check each answer's age anyway).
    await jsm.streams.info(`KV_${CACHE_BUCKET}`);
  } catch {
    await new Kvm(js).create(CACHE_BUCKET, { history: 1, ttl: ttlMs });
  }
}

/** A worker's view of the bucket: `get` gives the stored answer or null; `put` stores one (too big: skipped); neither throws. */
export class BucketResponseStore {
  readonly #js: JetStreamClient;
  #kv: Promise<KV | null> | null = null;

  constructor(js: JetStreamClient) {
    this.#js = js;
  }

  #bucket(): Promise<KV | null> {
    // Binding asks nothing of the server: a bucket not created yet fails each lookup (a miss) until it is.
    return (this.#kv ??= new Kvm(this.#js).open(CACHE_BUCKET, { bindOnly: true }).catch(() => null));
  }

  async get(key: string): Promise<unknown> {
    try {
      const kv = await this.#bucket();
      const entry = kv ? await kv.get(cacheBucketKey(key)) : null;
      if (!entry || entry.operation !== "PUT" || entry.value.length === 0) return null;
      return JSON.parse(entry.string());
    } catch {
      return null;
    }
  }

  async put(key: string, value: unknown): Promise<void> {
    try {
      const body = JSON.stringify(value);
      if (Buffer.byteLength(body) > MAX_SHARED_CACHE_VALUE_BYTES) return;
      const kv = await this.#bucket();
      await kv?.put(cacheBucketKey(key), body);
    } catch {
      // A failed write costs a later miss, nothing else.
    }
  }
}
