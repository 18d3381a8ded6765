import type { NatsConnection } from "@nats-io/transport-node";
import type { Broker } from "../../shared/broker/setup.ts";
import { runKeys } from "../../shared/broker/subjects.ts";
import { cancelReasonOf } from "./run-records.ts";

/**
 * What stops a distributed run from outside its cases: the broker lost for too long, the run's
 * cancel key, its deadline, and the caller's signal. Each watcher returns the function that stops it.
 */

/** Stops a watcher. */
export type StopWatching = () => void;

/** What {@link watchBrokerLoss} tells the run about. */
export interface BrokerLossListener {
  onNote?: (line: string) => void;
  /** The connection has been down for longer than the bound: the run is given up. */
  onLost: (why: string) => void;
  /** The connection is back (within the bound). */
  onReconnect: () => void;
}

/** Gives the run up when the NATS connection stays down for more than `boundSeconds`. */
export function watchBrokerLoss(nc: NatsConnection, boundSeconds: number, listener: BrokerLossListener): StopWatching {
  let lostAt: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect" && lostAt === null) {
        lostAt = Date.now();
        listener.onNote?.(`lost the NATS connection; retrying for up to ${boundSeconds}s`);
        timer = setTimeout(() => listener.onLost(`lost the NATS connection for more than ${boundSeconds}s`), boundSeconds * 1000);
      } else if (s.type === "reconnect") {
        lostAt = null;
        clearTimeout(timer);
        listener.onNote?.("reconnected to NATS");
        listener.onReconnect();
      }
    }
  })().catch(() => undefined);
  return () => clearTimeout(timer);
}

/** Calls `onCancel` with the reason each time the run's cancel key is written (by `coordinator cancel`, or another coordinator). */
export async function watchCancelKey(broker: Broker, runId: string, onCancel: (reason: string) => void): Promise<StopWatching> {
  const watch = await broker.kv.watch({ key: runKeys.cancel(runId) });
  void (async () => {
    for await (const e of watch) {
      if (e.operation === "PUT") onCancel(cancelReasonOf(e.string()));
    }
  })().catch(() => undefined);
  return () => watch.stop();
}

/** Calls `onExpire` once `seconds` have passed; nothing when `seconds` is unset (0 or null). */
export function watchDeadline(seconds: number | null | undefined, onExpire: (why: string) => void): StopWatching {
  if (!seconds) return () => undefined;
  const timer = setTimeout(() => onExpire(`the run's deadline of ${seconds}s passed`), seconds * 1000);
  return () => clearTimeout(timer);
}

/** Calls `onAbort` with the signal's reason (or `cancelled`) when it fires, at once when it already has. */
export function watchSignal(signal: AbortSignal | null | undefined, onAbort: (why: string) => void): StopWatching {
  if (!signal) return () => undefined;
  const abort = (): void => onAbort(reasonText(signal.reason) ?? "cancelled");
  if (signal.aborted) {
    abort();
    return () => undefined;
  }
  signal.addEventListener("abort", abort, { once: true });
  return () => signal.removeEventListener("abort", abort);
}

function reasonText(reason: unknown): string | null {
  if (reason instanceof Error || reason instanceof DOMException) return reason.message;
  return typeof reason === "string" ? reason : null;
}
