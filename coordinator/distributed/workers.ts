import type { Broker } from "../../shared/broker/setup.ts";
import { runKeys } from "../../shared/broker/subjects.ts";
import { NATS_PROTOCOL, PresenceEnvelopeSchema, WorkerRecordSchema, tryParseJson } from "../../shared/wire/nats.ts";
import { versionMismatch } from "../../shared/wire/protocol.ts";

/**
 * The workers of a distributed run as the coordinator sees them: their presence records (joined
 * with so many slots, or refused the run and why), and the reason given when none is compatible.
 */

/** What a {@link WorkerRoster} tells the run about. */
export interface RosterListener {
  /** One line for the console: a worker joined, a worker refused the run. */
  onNote?: (line: string) => void;
  /** The workers that joined changed. */
  onJoined: () => void;
}

/** The workers that joined the run or refused it. */
export class WorkerRoster {
  readonly #listener: RosterListener;
  /** Workers whose presence says they serve the run. */
  readonly #seen = new Set<string>();
  /** Why each refusing worker refused, by worker id. */
  readonly #refusals = new Map<string, string>();
  /** Whether any worker serves the run: its presence, or an event of one of its cases. */
  #joined = false;

  constructor(listener: RosterListener) {
    this.#listener = listener;
  }

  /** True once a worker joined (its presence record, or an event from it). */
  get joined(): boolean {
    return this.#joined;
  }

  /** How many workers said they serve the run. */
  get size(): number {
    return this.#seen.size;
  }

  /** Whether a worker's presence record says it serves the run. */
  has(workerId: string): boolean {
    return this.#seen.has(workerId);
  }

  /**
   * Whether a worker is present in the run: known from the watch, else looked up in the bucket
   * (a result can arrive before the watch delivers its worker's record, and a resumed run replays
   * results before it watches).
   */
  present(broker: Broker, runId: string, workerId: string): boolean | Promise<boolean> {
    if (this.#seen.has(workerId)) return true;
    return broker.kv.get(runKeys.worker(runId, workerId)).then((e) => {
      if (e && e.operation === "PUT") this.onPresence(e.string());
      return this.#seen.has(workerId);
    });
  }

  /** A worker is evidently serving the run (an event of one of its cases arrived). */
  markActive(): void {
    this.#joined = true;
  }

  /** Watches the run's presence records until `stop()` is called. */
  async watch(broker: Broker, runId: string): Promise<{ stop(): void }> {
    const watch = await broker.kv.watch({ key: runKeys.workers(runId) });
    void (async () => {
      for await (const e of watch) {
        if (e.operation === "PUT") this.onPresence(e.string());
      }
    })().catch(() => undefined);
    return watch;
  }

  /**
   * Why the run gives up waiting for workers: none compatible joined within `waitSeconds`, and
   * what the refusing ones said (another suite, another protocol version).
   */
  noCompatibleWorker(waitSeconds: number, fingerprint: string): string {
    const refused = [...this.#refusals.entries()].map(([id, why]) => `${id}: ${why}`);
    return `no compatible worker joined within ${waitSeconds}s (suite fingerprint ${fingerprint.slice(0, 12)})${refused.length ? `; refused by ${refused.join("; ")}` : ""}`;
  }

  /** A presence record as written to the bucket: a worker joined, or refused the run (of whatever protocol version). */
  onPresence(text: string): void {
    const raw = tryParseJson(text);
    const w = WorkerRecordSchema.safeParse(raw);
    if (!w.success) {
      this.#onOtherVersion(raw);
      return;
    }
    if (w.data.accepted) {
      if (!this.#joined || !this.#seen.has(w.data.workerId)) this.#listener.onNote?.(`worker ${w.data.workerId} joined (${w.data.slots} slots)`);
      this.#seen.add(w.data.workerId);
      this.#joined = true;
      this.#listener.onJoined();
    } else if (!this.#refusals.has(w.data.workerId)) {
      this.#refusals.set(w.data.workerId, w.data.reason ?? "refused");
      this.#listener.onNote?.(`worker ${w.data.workerId} refused the run: ${w.data.reason ?? "no reason given"}`);
    }
  }

  /**
   * A presence record of another protocol version: its worker cannot serve this run. It says so
   * itself (a refusal naming both versions); one that does not is refused here in the same words.
   */
  #onOtherVersion(raw: unknown): void {
    const envelope = PresenceEnvelopeSchema.safeParse(raw);
    if (!envelope.success || this.#refusals.has(envelope.data.workerId)) return;
    const mismatch = versionMismatch(raw, { ours: NATS_PROTOCOL, what: `worker ${envelope.data.workerId}`, who: "coordinator" });
    if (mismatch === null) return;
    const why = (!envelope.data.accepted && envelope.data.reason) || mismatch;
    this.#refusals.set(envelope.data.workerId, why);
    this.#listener.onNote?.(`worker ${envelope.data.workerId} refused the run: ${why}`);
  }
}
