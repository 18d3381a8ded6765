import { createHook } from "node:async_hooks";
import { currentCaseScope, onCaseScopeEntry } from "../runtime/case-scope.ts";

/**
 * A thread's beacon: a SharedArrayBuffer the thread writes and its pool reads, even while the
 * thread is blocked or after it died. It holds the thread's heartbeat (a timer writes the time
 * every {@link BEAT_MS}; a thread blocked by synchronous code stops beating) and the task whose
 * code the thread entered last (an async hook writes it as each callback starts, from the case
 * scope the callback carries). So when a thread has to be terminated, or dies of an unhandled
 * rejection, the pool blames the case whose code was running, not a thread-mate that waited.
 */

/** How often a thread beats, in ms. */
export const BEAT_MS = 100;

/** Byte size of a beacon: a Float64 heartbeat (epoch ms), then an Int32 task id (-1: none). */
const BEACON_BYTES = 16;

/** What a beacon says. */
export interface BeaconReading {
  /** When the thread last beat, epoch ms. */
  lastBeat: number;
  /** The task whose code the thread entered last, or null. */
  current: number | null;
}

/** Reads a beacon (main side). */
export function readBeacon(beacon: SharedArrayBuffer): BeaconReading {
  const current = Atomics.load(new Int32Array(beacon, 8, 1), 0);
  return { lastBeat: new Float64Array(beacon, 0, 1)[0]!, current: current < 0 ? null : current };
}

/**
 * Starts this thread's beacon (thread side, once) and returns it for the pool. An unhandled
 * rejection is reported in the context of the promise that rejected, so the beacon names the case
 * it came from before the rejection ends the thread, as it would without the listener.
 */
export function startBeacon(): SharedArrayBuffer {
  const beacon = new SharedArrayBuffer(BEACON_BYTES);
  const beat = new Float64Array(beacon, 0, 1);
  const current = new Int32Array(beacon, 8, 1);
  beat[0] = Date.now();
  current[0] = -1;
  setInterval(() => (beat[0] = Date.now()), BEAT_MS).unref();
  const mark = (taskId: number | undefined): void => void Atomics.store(current, 0, taskId ?? -1);
  createHook({ before: () => mark(currentCaseScope()?.taskId) }).enable();
  onCaseScopeEntry((scope) => mark(scope.taskId));
  process.on("unhandledRejection", (reason) => {
    mark(currentCaseScope()?.taskId);
    // Alone, this listener must not change what Node does: the rejection still ends the thread.
    // A listener of the suite's own means the suite handles rejections: then it decides.
    if (process.listenerCount("unhandledRejection") === 1) throw reason;
  });
  return beacon;
}
