import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { startGateSubject } from "../../shared/broker/subjects.ts";
import type { Logger } from "../../shared/logger.ts";
import { tryParseJson } from "../../shared/wire/nats.ts";
import { StartRequestSchema, type StartReply } from "../../shared/wire/start-gate.ts";

/**
 * The coordinator's side of the start gate (shared/wire/start-gate.ts): answers a worker asking
 * whether a case may start, from `stopReason` at the moment the question arrives. Answered at once,
 * in the order NATS delivers: a result counted before the question was asked is in the answer.
 */
export class StartGateServer {
  readonly #nc: NatsConnection;
  readonly #runId: string;
  readonly #stopReason: () => string | null;
  readonly #log: Logger;
  #sub: Subscription | undefined;
  #refused = 0;
  #warned = false;

  /**
   * @param stopReason why nothing may start any more (`budget exhausted`, a cancel's reason), or
   *   null while cases may start.
   */
  constructor(nc: NatsConnection, runId: string, stopReason: () => string | null, log: Logger) {
    this.#nc = nc;
    this.#runId = runId;
    this.#stopReason = stopReason;
    this.#log = log;
  }

  /** Serves the run's start gate until {@link close}. */
  start(): this {
    this.#sub = this.#nc.subscribe(startGateSubject(this.#runId), { callback: (err, msg) => (err ? undefined : this.#onAsk(msg)) });
    return this;
  }

  /** How many starts were refused. */
  get refused(): number {
    return this.#refused;
  }

  close(): void {
    this.#sub?.unsubscribe();
  }

  #onAsk(msg: Msg): void {
    // The answer needs nothing from the question, so a question this coordinator cannot read (a
    // worker of another version) is answered all the same: refusing it would skip every case of
    // that worker's, granting it would spend past the budget.
    const parsed = StartRequestSchema.safeParse(tryParseJson(msg.string()));
    if (!parsed.success && !this.#warned) {
      this.#warned = true;
      this.#log.warn({ why: parsed.error.issues[0]?.message ?? "invalid" }, "a worker asked whether a case may start in a form this coordinator does not know; answering it anyway");
    }
    const why = this.#stopReason();
    if (why === null) {
      this.#reply(msg, { ok: true });
      return;
    }
    this.#refused++;
    this.#log.debug({ case: parsed.data?.index, worker: parsed.data?.workerId, why }, "a case may not start");
    this.#reply(msg, { ok: false, reason: why });
  }

  #reply(msg: Msg, reply: StartReply): void {
    try {
      msg.respond(JSON.stringify(reply));
    } catch (err) {
      this.#log.debug({ err: String(err) }, "could not answer a start request");
    }
  }
}
