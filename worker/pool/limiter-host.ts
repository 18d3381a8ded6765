import { BroadcastChannel } from "node:worker_threads";
import { errorMessage } from "../../shared/errors.ts";
import type { LimitFeedback, LimitPermit, ProviderLimiter } from "../../shared/providers/limiter.ts";
import { ThreadLimitRequestSchema, type ThreadLimitGrant } from "../../shared/wire/limits.ts";

/** Told of each permit the threads got and gave back (the worker's metrics per provider key). */
export interface LimiterHostEvents {
  onGrant?: (key: string) => void;
  onRelease?: (key: string, feedback: LimitFeedback) => void;
}

/**
 * The main thread's side of the limiter: serves every worker thread of the pool from one limiter
 * (the process's `LocalLimiter`, or in distributed mode the fleet's, through the coordinator).
 * Threads ask on the pool's limiter BroadcastChannel (thread-limiter.ts); each grant goes back on
 * it, addressed to the thread. A thread that dies gives back every permit it held.
 */
export class LimiterHost {
  readonly #channel: BroadcastChannel;
  readonly #limiter: () => ProviderLimiter;
  /** Requests waiting for their grant, by thread and request id. */
  readonly #waiting = new Map<string, AbortController>();
  /** Permits held, by thread and request id. */
  readonly #held = new Map<string, LimitPermit>();

  readonly #events: LimiterHostEvents;

  /** `limiter` is read at each request: a distributed worker swaps it per run. */
  constructor(channelName: string, limiter: () => ProviderLimiter, events: LimiterHostEvents = {}) {
    this.#limiter = limiter;
    this.#events = events;
    this.#channel = new BroadcastChannel(channelName);
    this.#channel.unref();
    this.#channel.onmessage = (message: unknown) => this.#onMessage((message as { data?: unknown })?.data);
  }

  /** Permits held by threads now. */
  get held(): number {
    return this.#held.size;
  }

  /** A thread died: its waiting requests are dropped and its permits released (no answer: status null). */
  threadGone(threadId: number): void {
    const prefix = `${threadId}:`;
    for (const [id, controller] of this.#waiting) if (id.startsWith(prefix)) (this.#waiting.delete(id), controller.abort());
    for (const [id, permit] of this.#held) if (id.startsWith(prefix)) (this.#held.delete(id), permit.release({ status: null }));
  }

  close(): void {
    for (const controller of this.#waiting.values()) controller.abort();
    this.#waiting.clear();
    for (const permit of this.#held.values()) permit.release({});
    this.#held.clear();
    this.#channel.close();
  }

  #onMessage(raw: unknown): void {
    const parsed = ThreadLimitRequestSchema.safeParse(raw);
    if (!parsed.success) return;
    const m = parsed.data;
    if (m.kind === "observe") {
      this.#limiter().observe?.(m.key, m.feedback);
      return;
    }
    const id = `${m.threadId}:${m.reqId}`;
    if (m.kind === "cancel") {
      this.#waiting.get(id)?.abort();
      this.#waiting.delete(id);
      return;
    }
    if (m.kind === "release") {
      const permit = this.#held.get(id);
      this.#held.delete(id);
      if (permit) {
        permit.release(m.feedback);
        this.#events.onRelease?.(permit.key, m.feedback);
      }
      return;
    }
    const controller = new AbortController();
    this.#waiting.set(id, controller);
    this.#limiter()
      .acquire(m.key, { tokens: m.tokens, signal: controller.signal })
      .then(
        (permit) => {
          this.#waiting.delete(id);
          this.#held.set(id, permit);
          this.#events.onGrant?.(m.key);
          this.#grant({ kind: "grant", threadId: m.threadId, reqId: m.reqId });
        },
        (err: unknown) => {
          const cancelled = controller.signal.aborted;
          this.#waiting.delete(id);
          if (!cancelled) this.#grant({ kind: "grant", threadId: m.threadId, reqId: m.reqId, error: errorMessage(err) });
        },
      );
  }

  #grant(message: ThreadLimitGrant): void {
    this.#channel.postMessage(message);
  }
}
