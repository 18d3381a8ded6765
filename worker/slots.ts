/**
 * A counting semaphore of case slots, shared by every run a worker process serves. A run's
 * fetcher reserves as many free slots as it can use in one batch; each case gives its slot back.
 */
export class Slots {
  #free: number;
  readonly #waiters: Array<() => void> = [];

  /** `size`: cases in flight at most (the worker's --concurrency). */
  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Slots free right now. */
  get free(): number {
    return this.#free;
  }

  /** Slots in use. */
  get busy(): number {
    return this.size - this.#free;
  }

  /**
   * Waits until at least one slot is free, then takes up to `max` of them; resolves to how many
   * it took, or 0 when `signal` aborted first (or another taker got there first: call again).
   */
  async take(max: number, signal?: AbortSignal): Promise<number> {
    let waited = false;
    while (this.#free === 0) {
      waited = true;
      if (signal?.aborted) return 0;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal?.removeEventListener("abort", done);
          resolve();
        };
        this.#waiters.push(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    // Cases finish in bursts (one socket read brings many PubAcks): let the rest of this burst give
    // its slots back too, so that one pull asks for all of them instead of one pull per slot.
    if (waited) await new Promise<void>((resolve) => setImmediate(resolve));
    if (signal?.aborted || this.#free === 0) return 0;
    const n = Math.max(0, Math.min(max, this.#free));
    this.#free -= n;
    return n;
  }

  /** Gives `n` slots back and wakes the waiters. */
  give(n = 1): void {
    this.#free = Math.min(this.size, this.#free + n);
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
