import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { limitAcquireSubject, limitReleaseSubject } from "../shared/broker/subjects.ts";
import { abortable } from "../shared/process/abortable.ts";
import { errorMessage, ErrorCode, EvalfleetError } from "../shared/errors.ts";
import type { LimitTable } from "../shared/providers/limit-spec.ts";
import type { LimitFeedback } from "../shared/providers/limiter-core.ts";
import { permitOf, type AcquireOptions, type LimitPermit, type ProviderLimiter } from "../shared/providers/limiter.ts";
import { LocalLimiter } from "../shared/providers/local-limiter.ts";
import type { Logger } from "../shared/logger.ts";
import { redactJson } from "../shared/redaction/secrets.ts";
import { LIMITS_PROTOCOL, PermitReplySchema, type PermitRelease, type PermitRequest } from "../shared/wire/limits.ts";
import { tryParseJson } from "../shared/wire/nats.ts";

/**
 * A worker's limiter in distributed mode: every permit comes from the run's coordinator over NATS
 * request/reply (coordinator/distributed/permit-server.ts), so the limits hold across the fleet.
 * A request that times out is asked again with the same id (the coordinator answers it with the
 * same permit); a coordinator that does not answer at all (none listening: an older coordinator,
 * or one that died) makes this worker pace itself by the run's limits until it answers again.
 */

/** How long one permit request waits for its answer before it is asked again, ms. */
export const PERMIT_REQUEST_TIMEOUT_MS = 20_000;
/** After the coordinator was found not listening, how long this worker paces itself before asking it again, ms. */
export const FALLBACK_RETRY_MS = 10_000;

/** The limiter of one run on this worker. */
export class RemoteLimiter implements ProviderLimiter {
  readonly #nc: NatsConnection;
  readonly #runId: string;
  readonly #workerId: string;
  readonly #log: Logger;
  readonly #fallback: LocalLimiter;
  #fallbackUntil = 0;
  #warned = false;

  constructor(nc: NatsConnection, runId: string, workerId: string, limits: LimitTable, log: Logger) {
    this.#nc = nc;
    this.#runId = runId;
    this.#workerId = workerId;
    this.#log = log;
    this.#fallback = new LocalLimiter(limits);
  }

  async acquire(key: string, options: AcquireOptions = {}): Promise<LimitPermit> {
    const signal = options.signal;
    if (signal?.aborted) throw signal.reason;
    if (Date.now() < this.#fallbackUntil) return this.#fallback.acquire(key, options);
    const id = randomUUID();
    const request: PermitRequest = { v: LIMITS_PROTOCOL, id, workerId: this.#workerId, key, tokens: Math.max(0, options.tokens ?? 0) };
    const payload = JSON.stringify(request);
    for (;;) {
      let reply;
      try {
        reply = await abortable(this.#nc.request(limitAcquireSubject(this.#runId), payload, { timeout: PERMIT_REQUEST_TIMEOUT_MS }), signal, () => this.#cancel(id, key));
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (isNoResponders(err)) {
          // Nobody grants permits for this run: pace this process by the run's limits for a while.
          this.#fallbackUntil = Date.now() + FALLBACK_RETRY_MS;
          if (!this.#warned) {
            this.#warned = true;
            this.#log.warn({ run: this.#runId }, "the run's coordinator grants no provider permits; this worker paces itself by the run's limits (they hold per worker, not across the fleet)");
          }
          return this.#fallback.acquire(key, options);
        }
        if (isTimeout(err)) continue;
        throw new EvalfleetError(ErrorCode.ProviderLimit, `provider limiter: ${errorMessage(err)}`, { key });
      }
      const parsed = PermitReplySchema.safeParse(tryParseJson(reply.string()));
      if (!parsed.success) throw new EvalfleetError(ErrorCode.ProviderLimit, "provider limiter: malformed permit reply", { key });
      if (!parsed.data.ok) throw new EvalfleetError(ErrorCode.ProviderLimit, `provider limiter: ${parsed.data.error}`, { key });
      const permit = parsed.data.permit;
      return permitOf(key, (feedback) => this.#publish({ v: LIMITS_PROTOCOL, workerId: this.#workerId, permit, id, key, feedback }));
    }
  }

  observe(key: string, feedback: LimitFeedback): void {
    this.#fallback.observe(key, feedback);
  }

  close(): void {
    this.#fallback.close();
  }

  /** A request given up (its case ended): the coordinator drops it, or takes back its permit. */
  #cancel(id: string, key: string): void {
    this.#publish({ v: LIMITS_PROTOCOL, workerId: this.#workerId, permit: null, id, key, feedback: {} });
  }

  #publish(message: PermitRelease): void {
    try {
      this.#nc.publish(limitReleaseSubject(this.#runId), JSON.stringify(redactJson(message)));
    } catch (err) {
      this.#log.debug({ err: errorMessage(err) }, "could not give a provider permit back");
    }
  }
}

function isNoResponders(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  return e?.code === "503" || e?.name === "NoRespondersError" || /no responders/i.test(String(e?.message ?? ""));
}

function isTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown };
  return e?.code === "TIMEOUT" || e?.name === "TimeoutError" || /timeout/i.test(String(e?.message ?? ""));
}
