import type { Broker } from "../../shared/broker/setup.ts";
import { COORDINATOR_HEARTBEAT_SECONDS } from "./coordinator-heartbeat.ts";
import { errorMessage } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { isFinishedPhase, type RunRecordPhase } from "../../shared/wire/nats.ts";
import { putRunState } from "./run-records.ts";

/**
 * The coordinator's writes of `<run>.state`: each change of phase, and the same phase again every
 * {@link COORDINATOR_HEARTBEAT_SECONDS} while the run is followed, so that `coordinator status`
 * can tell a coordinator that died (its heartbeat stops) from one that waits. Writes go out one
 * after the other, so a heartbeat never overwrites a later phase.
 */
export class RunStateWriter {
  readonly #broker: Broker;
  readonly #runId: string;
  readonly #published: number;
  readonly #log: Logger;
  #phase: RunRecordPhase | null = null;
  #chain: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  readonly #eta: (() => number) | null;

  /** `eta`: the seconds the run is expected to go on (from history), written with every state; null: none written. */
  constructor(broker: Broker, runId: string, published: number, log: Logger, eta: (() => number) | null = null) {
    this.#broker = broker;
    this.#eta = eta;
    this.#runId = runId;
    this.#published = published;
    this.#log = log;
  }

  /** Writes `phase` once the writes before it are done; rejects when this write fails. */
  put(phase: RunRecordPhase): Promise<void> {
    this.#phase = phase;
    const write = this.#chain.then(() => putRunState(this.#broker, this.#runId, phase, this.#published, this.#eta && !isFinishedPhase(phase) ? this.#eta() : null));
    this.#chain = write.catch(() => undefined);
    return write;
  }

  /** Starts the heartbeat (idempotent): the current phase is written again every {@link COORDINATOR_HEARTBEAT_SECONDS}. */
  startHeartbeat(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      const phase = this.#phase;
      if (phase === null || isFinishedPhase(phase)) return;
      // A missed heartbeat is only a late one: the broker may be away for a moment.
      this.put(phase).catch((err) => this.#log.debug({ err: errorMessage(err) }, "could not write the run's heartbeat"));
    }, COORDINATOR_HEARTBEAT_SECONDS * 1000);
    this.#timer.unref?.();
  }

  /** Stops the heartbeat (before the run's last phase is written, and at teardown). */
  stopHeartbeat(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
