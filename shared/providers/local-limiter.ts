// runs in: both
import { LimiterCore, type KeySnapshot, type LimitFeedback } from "./limiter-core.ts";
import type { LimitTable } from "./limit-spec.ts";
import { permitOf, type AcquireOptions, type LimitPermit, type ProviderLimiter } from "./limiter.ts";

/**
 * The limiter that owns the state ({@link LimiterCore}) and drives it with one timer: the main
 * thread's limiter in local mode (its worker threads ask it through messages, worker/pool/), the
 * inline runner's, and the coordinator's in distributed mode (workers ask it over NATS).
 */

/** A waiting or granted request, by id (how the thread host and the permit server refer to it). */
export interface PendingGrant {
  id: number;
  /** Resolves when the request is admitted. */
  granted: Promise<void>;
}

/** Told each grant, release and 429 (metrics). */
export interface LimiterEvents {
  onGrant?: (key: string) => void;
  onRelease?: (key: string, feedback: LimitFeedback) => void;
}

/** The limiter of one process (or, on the coordinator, of a fleet). */
export class LocalLimiter implements ProviderLimiter {
  readonly #core: LimiterCore;
  readonly #now: () => number;
  readonly #resolvers = new Map<number, () => void>();
  readonly #events: LimiterEvents;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(limits: LimitTable = {}, options: { now?: () => number; events?: LimiterEvents } = {}) {
    this.#now = options.now ?? Date.now;
    this.#core = new LimiterCore(limits);
    this.#events = options.events ?? {};
  }

  /** Replaces the configured limits (keys in use keep their counters). */
  configure(limits: LimitTable): void {
    this.#core.configure(limits, this.#now());
    this.#pump();
  }

  /** Queues a request of `key`; its id is what {@link release} and {@link cancel} take. */
  enqueue(key: string, tokens = 0): PendingGrant {
    const id = this.#core.request(key, tokens, this.#now());
    const granted = new Promise<void>((resolve) => this.#resolvers.set(id, resolve));
    this.#pump();
    return { id, granted };
  }

  /** Gives up a waiting request (false when it was granted already: release it instead). */
  cancel(id: number): boolean {
    const was = this.#core.cancel(id);
    if (was) {
      this.#resolvers.delete(id);
      this.#pump();
    }
    return was;
  }

  /** Ends a granted request with what the provider said. */
  release(id: number, feedback: LimitFeedback = {}, key?: string): void {
    this.#core.release(id, feedback, this.#now());
    if (key) this.#events.onRelease?.(key, feedback);
    this.#pump();
  }

  /** What a request made without a permit said. */
  observe(key: string, feedback: LimitFeedback): void {
    this.#core.observe(key, feedback, this.#now());
    this.#events.onRelease?.(key, feedback);
    this.#pump();
  }

  /** Every key's counters and pace. */
  snapshot(): KeySnapshot[] {
    return this.#core.snapshot(this.#now());
  }

  async acquire(key: string, options: AcquireOptions = {}): Promise<LimitPermit> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    const pending = this.enqueue(key, options.tokens ?? 0);
    if (signal) {
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => {
          // Granted meanwhile: give the permit back unused.
          if (!this.cancel(pending.id)) this.release(pending.id, {});
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        await Promise.race([pending.granted, aborted]);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    } else await pending.granted;
    return permitOf(key, (feedback) => this.release(pending.id, feedback, key));
  }

  /** Stops the timer (waiting requests stay waiting). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #pump(): void {
    const now = this.#now();
    for (const g of this.#core.poll(now)) {
      const resolve = this.#resolvers.get(g.id);
      this.#resolvers.delete(g.id);
      this.#events.onGrant?.(g.key);
      resolve?.();
    }
    const next = this.#core.nextPollAt(now);
    if (next === null) {
      // Nothing waits any more (granted or given up): no timer keeps the process alive.
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
      return;
    }
    if (this.#timer && next >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = next;
    // Armed only while a request waits for its turn: that wait keeps the process alive, as pending I/O does.
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#pump();
    }, Math.max(0, next - this.#now()));
  }
}
