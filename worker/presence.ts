import type { Broker } from "../shared/broker/setup.ts";
import { runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL, type WorkerRecord } from "../shared/wire/nats.ts";

/**
 * A worker's presence record for a run (`<run>.workers.<worker>`): written when the worker joins
 * or refuses the run, then refreshed while it serves it, so the coordinator and `status` see who
 * serves the run, with how many slots, and why a worker refused.
 */

/** How often a serving worker refreshes its presence record, in ms. */
export const PRESENCE_INTERVAL_MS = 5_000;

/** Who the worker is, for its presence records. */
export interface PresenceIdentity {
  broker: Broker;
  /** `<host>/<pid>`. */
  workerId: string;
  /** The fingerprint of the suite this worker loaded. */
  fingerprint: string;
  /** The worker's case slots. */
  slots: number;
}

/** The presence record of a worker (pure). */
export function presenceRecord(identity: Omit<PresenceIdentity, "broker">, accepted: boolean, reason: string | null, busy: number): WorkerRecord {
  const { workerId } = identity;
  const [host, pid] = [workerId.split("/")[0] ?? workerId, Number(workerId.split("/")[1] ?? process.pid)];
  return {
    v: NATS_PROTOCOL,
    workerId,
    host,
    pid: Number.isFinite(pid) ? pid : process.pid,
    fingerprint: identity.fingerprint,
    accepted,
    reason,
    slots: identity.slots,
    busy,
    seenAt: new Date().toISOString(),
  };
}

/** One worker's presence in one run. */
export class RunPresence {
  readonly #identity: PresenceIdentity;
  readonly #runId: string;
  /** In-flight cases of the run on this worker, read at each refresh. */
  readonly #busy: () => number;

  constructor(identity: PresenceIdentity, runId: string, busy: () => number = () => 0) {
    this.#identity = identity;
    this.#runId = runId;
    this.#busy = busy;
  }

  /** Says the worker serves the run. */
  async join(): Promise<void> {
    await this.#put(true, null);
  }

  /** Says the worker refuses the run, and why (the coordinator shows it, and repeats it when no worker joins). */
  async refuse(why: string): Promise<void> {
    await this.#put(false, why);
  }

  /** Refreshes the record every {@link PRESENCE_INTERVAL_MS} until the returned function is called. */
  heartbeat(): () => void {
    const timer = setInterval(() => void this.#put(true, null).catch(() => undefined), PRESENCE_INTERVAL_MS);
    return () => clearInterval(timer);
  }

  async #put(accepted: boolean, reason: string | null): Promise<void> {
    const { broker, ...identity } = this.#identity;
    const record = presenceRecord(identity, accepted, reason, this.#busy());
    await broker.kv.put(runKeys.worker(this.#runId, identity.workerId), JSON.stringify(record));
  }
}
