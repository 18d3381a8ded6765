import type { NatsConnection } from "@nats-io/transport-node";
import { startGateSubject } from "../shared/broker/subjects.ts";
import { abortable } from "../shared/process/abortable.ts";
import { errorMessage } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
import { tryParseJson } from "../shared/wire/nats.ts";
import { START_GATE_PROTOCOL, StartReplySchema, type StartRequest } from "../shared/wire/start-gate.ts";

/** How long a worker waits for the coordinator's answer before it starts the case anyway, ms. */
export const START_GATE_TIMEOUT_MS = 10_000;

/** The gate's answer: start, or not (the run is stopping, `reason` says why). */
export type StartAnswer = { start: true } | { start: false; reason: string };

/**
 * A worker's side of the start gate (shared/wire/start-gate.ts) in a run whose manifest says
 * `startGate`: asks the coordinator before each case starts. Only a refusal keeps a case from
 * starting: a coordinator that does not answer (none listening, an older one, one too slow for
 * {@link START_GATE_TIMEOUT_MS}) or answers in a form this worker cannot read lets the case start,
 * as without a gate, and this worker says so once; the run's cancel still stops it then.
 */
export class StartGate {
  readonly #nc: NatsConnection;
  readonly #runId: string;
  readonly #workerId: string;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  #warned = false;

  /** @param timeoutMs how long to wait for an answer, ms. Default {@link START_GATE_TIMEOUT_MS}. */
  constructor(nc: NatsConnection, runId: string, workerId: string, log: Logger, timeoutMs = START_GATE_TIMEOUT_MS) {
    this.#nc = nc;
    this.#runId = runId;
    this.#workerId = workerId;
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  /** Whether the case at `index` may start. Rejects with the signal's reason when it fires first. */
  async ask(index: number, signal: AbortSignal): Promise<StartAnswer> {
    signal.throwIfAborted();
    const request: StartRequest = { v: START_GATE_PROTOCOL, workerId: this.#workerId, index };
    let text: string;
    try {
      const reply = await abortable(this.#nc.request(startGateSubject(this.#runId), JSON.stringify(request), { timeout: this.#timeoutMs }), signal);
      text = reply.string();
    } catch (err) {
      signal.throwIfAborted();
      this.#warn(`the run's coordinator did not answer whether a case may start (${errorMessage(err)}); starting cases without asking it`);
      return { start: true };
    }
    const parsed = StartReplySchema.safeParse(tryParseJson(text));
    if (!parsed.success) {
      this.#warn("the run's coordinator answered whether a case may start in a form this worker does not know; starting the case");
      return { start: true };
    }
    return parsed.data.ok ? { start: true } : { start: false, reason: parsed.data.reason };
  }

  #warn(message: string): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#log.warn({ run: this.#runId }, message);
  }
}
