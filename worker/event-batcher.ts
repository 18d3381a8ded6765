import { NATS_PROTOCOL, MAX_EVENTS_PER_BATCH, type BatchedEvent } from "../shared/wire/nats.ts";

/**
 * A worker's live events of one turn of its event loop, sent as one message (shared/wire/nats.ts
 * `EventBatchSchema`) instead of one message each: the coordinator handled a message per case
 * start, and the NATS client's work per message was most of what an event cost it. The batch goes
 * out on the same turn as it would have one by one (the publisher's next tick), so the
 * coordinator's progress line and `onCaseStart` hook are as live as before. Each event is
 * JSON-encoded once: the batch is its envelope around the encoded events.
 */

/**
 * Characters of encoded events per batch, at most (a single larger event goes alone): at most 3
 * bytes each in UTF-8, so a batch stays under a server's 1 MiB default max_payload.
 */
export const EVENT_BATCH_MAX_CHARS = 256 * 1024;

/** Options of {@link EventBatcher}. */
export interface EventBatcherOptions {
  runId: string;
  workerId: string;
  /** Resolves on the turn the batch is sent (the publisher's next tick, shared with result publishes). */
  tick: () => Promise<void>;
  /** Sends one encoded batch; a failure is the caller's to ignore (events are disposable). */
  send: (body: string) => void;
}

/** Collects a worker's events within one tick and sends them as batches. */
export class EventBatcher {
  readonly #o: EventBatcherOptions;
  /** `{"v":..,"runId":..,"workerId":..,"events":[`, encoded once per run. */
  readonly #head: string;
  #parts: string[] = [];
  #chars = 0;
  #scheduled = false;

  constructor(options: EventBatcherOptions) {
    this.#o = options;
    this.#head = `{"v":${NATS_PROTOCOL},"runId":${JSON.stringify(options.runId)},"workerId":${JSON.stringify(options.workerId)},"events":[`;
  }

  /** Events waiting for the next tick. */
  get pending(): number {
    return this.#parts.length;
  }

  /** Adds an event (already redacted) to the batch of this tick. */
  add(event: BatchedEvent): void {
    const part = JSON.stringify(event);
    // A full batch goes now rather than growing past the bounds; the rest waits for the tick.
    if (this.#parts.length >= MAX_EVENTS_PER_BATCH || (this.#parts.length > 0 && this.#chars + part.length > EVENT_BATCH_MAX_CHARS)) this.flush();
    this.#parts.push(part);
    this.#chars += part.length + 1;
    if (this.#scheduled) return;
    this.#scheduled = true;
    void this.#o.tick().then(() => {
      this.#scheduled = false;
      this.flush();
    });
  }

  /** Sends what is waiting, if anything. */
  flush(): void {
    if (this.#parts.length === 0) return;
    const body = `${this.#head}${this.#parts.join(",")}]}`;
    this.#parts = [];
    this.#chars = 0;
    this.#o.send(body);
  }
}
