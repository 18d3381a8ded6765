import { randomUUID } from "node:crypto";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { Broker } from "../../shared/broker/setup.ts";
import { limitAcquireSubject, limitReleaseSubject, runKeys } from "../../shared/broker/subjects.ts";
import type { LimitTable } from "../../shared/providers/limit-spec.ts";
import type { KeySnapshot } from "../../shared/providers/limiter-core.ts";
import { LocalLimiter } from "../../shared/providers/local-limiter.ts";
import type { Logger } from "../../shared/logger.ts";
import { redactJson } from "../../shared/redaction/secrets.ts";
import { PermitReleaseSchema, PermitRequestSchema, type PermitReply } from "../../shared/wire/limits.ts";
import { tryParseJson } from "../../shared/wire/nats.ts";

/**
 * The fleet's provider limiter in distributed mode: the coordinator owns the one limiter of the
 * run and grants permits to every worker over NATS request/reply (`evalfleet.<run>.limits.acquire`;
 * the reply comes when the permit is granted), and takes them back with what the provider said
 * (`evalfleet.<run>.limits.release`). Why permits from the coordinator rather than token buckets in
 * the KV bucket with compare-and-set: docs/providers.md (one round trip per request and FIFO
 * fairness, against a CAS retry storm under contention; measured in bench/). A worker that asks
 * again for the same request (its request timed out) gets the same permit. Permits not given back
 * within {@link PERMIT_LEASE_MS} (a worker that died) are taken back. The pace and counts of each
 * key are written to `<run>.limits` for `coordinator status`.
 */

/** How long a granted permit may stay out before it is taken back (its worker died with it), ms. */
export const PERMIT_LEASE_MS = 10 * 60_000;
/** How often the per-key snapshot is written to the run's records, ms. */
export const LIMITS_RECORD_MS = 2000;

interface Waiting {
  pendingId: number;
  key: string;
  /** The latest request message: the grant answers it (a retried request has a new reply subject). */
  msg: Msg;
}

interface Granted {
  pendingId: number;
  key: string;
  requestKey: string;
  grantedAt: number;
}

/** The permit server of one run. */
export class PermitServer {
  readonly #nc: NatsConnection;
  readonly #broker: Broker;
  readonly #runId: string;
  readonly #log: Logger;
  readonly #limiter: LocalLimiter;
  readonly #subs: Subscription[] = [];
  /** Requests waiting, by `<worker>:<request id>`. */
  readonly #waiting = new Map<string, Waiting>();
  /** Granted permits, by permit id; and the permit of each request (a retried request gets it again). */
  readonly #granted = new Map<string, Granted>();
  readonly #permitOf = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #lastRecord = "";

  constructor(nc: NatsConnection, broker: Broker, runId: string, limits: LimitTable, log: Logger) {
    this.#nc = nc;
    this.#broker = broker;
    this.#runId = runId;
    this.#log = log;
    this.#limiter = new LocalLimiter(limits);
  }

  /** Serves the run's permit subjects until {@link close}. */
  start(): this {
    this.#subs.push(this.#nc.subscribe(limitAcquireSubject(this.#runId), { callback: (err, msg) => (err ? undefined : this.#onAcquire(msg)) }));
    this.#subs.push(this.#nc.subscribe(limitReleaseSubject(this.#runId), { callback: (err, msg) => (err ? undefined : this.#onRelease(msg)) }));
    this.#timer = setInterval(() => {
      this.#expire();
      void this.#record();
    }, LIMITS_RECORD_MS);
    this.#timer.unref();
    return this;
  }

  /** Every key's pace and counts. */
  snapshot(): KeySnapshot[] {
    return this.#limiter.snapshot();
  }

  /** Stops serving; the last snapshot is recorded. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    for (const s of this.#subs) s.unsubscribe();
    this.#limiter.close();
    await this.#record().catch(() => undefined);
  }

  #onAcquire(msg: Msg): void {
    const parsed = PermitRequestSchema.safeParse(tryParseJson(msg.string()));
    if (!parsed.success) {
      this.#reply(msg, { ok: false, error: `malformed permit request: ${parsed.error.issues[0]?.message ?? "invalid"}` });
      return;
    }
    const r = parsed.data;
    const requestKey = `${r.workerId}:${r.id}`;
    const permit = this.#permitOf.get(requestKey);
    if (permit) {
      // The worker asked again (its earlier request timed out before the grant reached it).
      this.#reply(msg, { ok: true, permit });
      return;
    }
    const waiting = this.#waiting.get(requestKey);
    if (waiting) {
      waiting.msg = msg;
      return;
    }
    const pending = this.#limiter.enqueue(r.key, r.tokens);
    this.#waiting.set(requestKey, { pendingId: pending.id, key: r.key, msg });
    void pending.granted.then(() => {
      const w = this.#waiting.get(requestKey);
      this.#waiting.delete(requestKey);
      if (!w) return;
      const id = randomUUID();
      this.#granted.set(id, { pendingId: pending.id, key: r.key, requestKey, grantedAt: Date.now() });
      this.#permitOf.set(requestKey, id);
      this.#reply(w.msg, { ok: true, permit: id });
    });
  }

  #onRelease(msg: Msg): void {
    const parsed = PermitReleaseSchema.safeParse(tryParseJson(msg.string()));
    if (!parsed.success) return;
    const r = parsed.data;
    const requestKey = `${r.workerId}:${r.id}`;
    if (r.permit === null) {
      // Given up before its grant (the case ended): drop it from the queue, or return it unused.
      const w = this.#waiting.get(requestKey);
      if (w) {
        this.#waiting.delete(requestKey);
        if (!this.#limiter.cancel(w.pendingId)) this.#limiter.release(w.pendingId, {});
      }
      const granted = this.#permitOf.get(requestKey);
      if (granted) this.#take(granted, {});
      return;
    }
    const g = this.#granted.get(r.permit);
    // Only the request it was granted to may give a permit back (its id came on that worker's own inbox).
    if (!g || g.requestKey !== requestKey) return;
    this.#take(r.permit, r.feedback);
  }

  #take(permit: string, feedback: Parameters<LocalLimiter["release"]>[1]): void {
    const g = this.#granted.get(permit);
    if (!g) return;
    this.#granted.delete(permit);
    this.#permitOf.delete(g.requestKey);
    this.#limiter.release(g.pendingId, feedback, g.key);
  }

  /** Takes back permits out longer than the lease (their worker died with them). */
  #expire(): void {
    const now = Date.now();
    for (const [permit, g] of this.#granted) {
      if (now - g.grantedAt > PERMIT_LEASE_MS) {
        this.#log.warn({ key: g.key }, "a provider permit was not given back within its lease; taking it back");
        this.#take(permit, {});
      }
    }
  }

  #reply(msg: Msg, reply: PermitReply): void {
    try {
      msg.respond(JSON.stringify(reply));
    } catch (err) {
      this.#log.debug({ err: String(err) }, "could not answer a permit request");
    }
  }

  async #record(): Promise<void> {
    const snapshot = this.snapshot();
    if (snapshot.length === 0) return;
    const text = JSON.stringify(redactJson({ updatedAt: new Date().toISOString(), keys: snapshot }));
    // Unchanged counters are not written again (the timestamp aside).
    const body = JSON.stringify(snapshot);
    if (body === this.#lastRecord) return;
    this.#lastRecord = body;
    await this.#broker.kv.put(runKeys.limits(this.#runId), text).catch((err: unknown) => this.#log.debug({ err: String(err) }, "could not record the provider limits"));
  }
}
