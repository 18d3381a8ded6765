import type { Piscina } from "piscina";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import { THREAD_PROTOCOL, ThreadBatchReplySchema, type ThreadBatch, type ThreadCase, type ThreadReply } from "../../shared/wire/thread.ts";
import { watchLostReplies } from "./watchdog.ts";

/**
 * Batching cases into piscina tasks. The cases the pool is asked for in one turn of the event loop
 * travel together (piscina's dispatch costs about 60 µs per task, against a few µs per case inside
 * a batch), spread over the threads. Each case's reply comes back on its own, as soon as the case
 * ends, and settles that case only.
 */

/**
 * Most cases in one piscina task (a batch), in cases. A batch shares a thread, so it is also the
 * most cases one flush puts on a single thread; a flush of more is spread over the threads first.
 */
export const MAX_CASES_PER_THREAD_TASK = 64;

/** What every batch of a pool says besides its cases. */
export type BatchSettings = Omit<ThreadBatch, "protocol" | "cases">;

/** A promise with its settle functions. */
interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Sends cases to the threads in batches and routes each reply to the case that waits for it. */
export class CaseBatcher {
  readonly #piscina: Piscina;
  readonly #settings: BatchSettings;
  readonly #threads: number;
  /** Cases asked for in this turn of the event loop, sent as batches once it ends. */
  #queued: Array<{ task: ThreadCase; reply: Deferred<ThreadReply> }> = [];
  /** Cases sent to a thread whose reply has not come yet, by task id. */
  readonly #awaitingReply = new Map<number, Deferred<ThreadReply>>();

  constructor(piscina: Piscina, settings: BatchSettings, threads: number) {
    this.#piscina = piscina;
    this.#settings = settings;
    this.#threads = threads;
  }

  /** Queues a case for the next batch; resolves to its reply, rejects when its thread dies. */
  send(task: ThreadCase): Promise<ThreadReply> {
    const reply = deferred<ThreadReply>();
    if (this.#queued.length === 0) setImmediate(() => this.#flush());
    this.#queued.push({ task, reply });
    return reply.promise;
  }

  /** A case's reply arrived (on the thread's parentPort): it settles that case. */
  onReply(taskId: number, reply: ThreadReply): void {
    const waiting = this.#awaitingReply.get(taskId);
    this.#awaitingReply.delete(taskId);
    waiting?.resolve(reply);
  }

  /** Sends the queued cases, spread over the threads, at most {@link MAX_CASES_PER_THREAD_TASK} per piscina task. */
  #flush(): void {
    const queued = this.#queued;
    this.#queued = [];
    const size = Math.min(MAX_CASES_PER_THREAD_TASK, Math.ceil(queued.length / Math.min(this.#threads, queued.length)));
    for (let i = 0; i < queued.length; i += size) this.#runBatch(queued.slice(i, i + size));
  }

  #runBatch(items: Array<{ task: ThreadCase; reply: Deferred<ThreadReply> }>): void {
    for (const { task, reply } of items) this.#awaitingReply.set(task.taskId, reply);
    const batch: ThreadBatch = { protocol: THREAD_PROTOCOL, ...this.#settings, cases: items.map((x) => x.task) };
    // Only the ids are kept past this point: a reply already received must not be held by the
    // batch (its end often comes before the last replies, and may wait for them a while).
    const ids = items.map((x) => x.task.taskId);
    this.#piscina.run({ batch }).then(
      (raw: unknown) => {
        const done = ThreadBatchReplySchema.safeParse(raw);
        if (!done.success) {
          const error = { code: ErrorCode.WireInvalid, name: "EvalfleetError", message: `malformed reply from thread: ${done.error.issues[0]?.message}`, retryable: false };
          this.#settleWaiting(ids, (w) => w.resolve({ kind: "error", error }));
        } else if (done.data.kind === "error") {
          const error = done.data.error;
          this.#settleWaiting(ids, (w) => w.resolve({ kind: "error", error }));
        } else {
          const missing = ids.filter((id) => this.#awaitingReply.has(id));
          watchLostReplies(missing, (lost, why) => this.#settleWaiting(lost, (w) => w.reject(new EvalfleetError(ErrorCode.ThreadCrashed, why))));
        }
      },
      (err: unknown) => this.#settleWaiting(ids, (w) => w.reject(err)),
    );
  }

  /** Settles every case of `taskIds` still waiting for its reply. */
  #settleWaiting(taskIds: readonly number[], settle: (reply: Deferred<ThreadReply>) => void): void {
    for (const id of taskIds) {
      const waiting = this.#awaitingReply.get(id);
      if (!waiting) continue;
      this.#awaitingReply.delete(id);
      settle(waiting);
    }
  }
}
