import { BroadcastChannel, threadId } from "node:worker_threads";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import type { LimitFeedback } from "../../shared/providers/limiter-core.ts";
import { permitOf, type AcquireOptions, type LimitPermit, type ProviderLimiter } from "../../shared/providers/limiter.ts";
import { ThreadLimitGrantSchema, type ThreadLimitRequest } from "../../shared/wire/limits.ts";

/**
 * A worker thread's limiter: it keeps no state of its own (a limiter per thread would multiply the
 * rate by the thread count) and asks the process's main thread (limiter-host.ts) for every permit,
 * on the pool's limiter BroadcastChannel.
 */
export class ThreadLimiter implements ProviderLimiter {
  readonly #channel: BroadcastChannel;
  readonly #waiting = new Map<number, { resolve: () => void; reject: (err: unknown) => void }>();
  #nextReq = 1;

  constructor(channelName: string) {
    this.#channel = new BroadcastChannel(channelName);
    // The channel must not keep the thread alive on its own.
    this.#channel.unref();
    this.#channel.onmessage = (message: unknown) => {
      const parsed = ThreadLimitGrantSchema.safeParse((message as { data?: unknown })?.data);
      if (!parsed.success || parsed.data.threadId !== threadId) return;
      const w = this.#waiting.get(parsed.data.reqId);
      if (!w) return;
      this.#waiting.delete(parsed.data.reqId);
      if (parsed.data.error) w.reject(new EvalfleetError(ErrorCode.ProviderLimit, `provider limiter: ${parsed.data.error}`));
      else w.resolve();
    };
  }

  async acquire(key: string, options: AcquireOptions = {}): Promise<LimitPermit> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    const reqId = this.#nextReq++;
    const granted = new Promise<void>((resolve, reject) => this.#waiting.set(reqId, { resolve, reject }));
    this.#post({ kind: "acquire", threadId, reqId, key, tokens: Math.max(0, options.tokens ?? 0) });
    if (signal) {
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => {
          if (this.#waiting.delete(reqId)) this.#post({ kind: "cancel", threadId, reqId });
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        await Promise.race([granted, aborted]);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    } else await granted;
    return permitOf(key, (feedback) => this.#post({ kind: "release", threadId, reqId, feedback }));
  }

  observe(key: string, feedback: LimitFeedback): void {
    this.#post({ kind: "observe", threadId, key, feedback });
  }

  #post(message: ThreadLimitRequest): void {
    this.#channel.postMessage(message);
  }
}
