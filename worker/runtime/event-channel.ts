/**
 * Turns events pushed from callbacks (a tool reporting progress, an SDK's onStepFinish) into
 * events yielded by an async generator, while the work that pushes them is still running.
 */
export class EventChannel<T> {
  readonly #items: T[] = [];
  #waiter: (() => void) | undefined;

  /** Queues an event for the generator currently running {@link until}. */
  push(item: T): void {
    this.#items.push(item);
    this.#notify();
  }

  /**
   * Yields every pushed event until `work` settles (and those pushed before it settled), then
   * returns its value or throws its error.
   */
  async *until<R>(work: Promise<R>): AsyncGenerator<T, R> {
    let state: { done: false } | { done: true; ok: true; value: R } | { done: true; ok: false; error: unknown } = { done: false };
    work.then(
      (value) => {
        state = { done: true, ok: true, value };
        this.#notify();
      },
      (error: unknown) => {
        state = { done: true, ok: false, error };
        this.#notify();
      },
    );
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift()!;
      if (state.done) break;
      // Nothing can push between the checks above and this assignment: both are synchronous.
      await new Promise<void>((resolve) => (this.#waiter = resolve));
    }
    const final = state as { done: true; ok: true; value: R } | { done: true; ok: false; error: unknown };
    if (!final.ok) throw final.error;
    return final.value;
  }

  #notify(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }
}
