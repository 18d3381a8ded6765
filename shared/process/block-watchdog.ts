// runs in: both
import { closeSync } from "node:fs";
import { Worker } from "node:worker_threads";

/**
 * Ends a process whose main thread is blocked by synchronous code. Signals never reach worker
 * threads and a blocked main thread runs no handler (SIGTERM and Ctrl-C wait forever), so a small
 * watcher thread watches a heartbeat of the main thread; once the main thread has stopped beating
 * for {@link BLOCKED_MS} past an armed deadline, the watcher writes why (`fs.writeSync` to stderr)
 * and ends the process with the deadline's exit code. It interrupts the blocked main thread
 * through the inspector (`Runtime.evaluate` runs between two JavaScript instructions), so the
 * process's `exit` listeners still run (the sweep of child processes); where the inspector is
 * missing or the main thread is blocked in native code, it kills the process (SIGKILL) after
 * {@link FORCE_AFTER_MS}. Used by inline runs (`--threads 0`) and suite loading (`--load-timeout`).
 */

/** How often the main thread beats, in ms. */
export const BEAT_MS = 100;
/** How long the main thread must have gone without a beat to count as blocked, in ms. */
export const BLOCKED_MS = 1_000;
/** How long the watcher waits for the interrupted main thread to exit before it kills the process, in ms. */
export const FORCE_AFTER_MS = 3_000;

const EXIT_HOOK = Symbol.for("evalfleet.blockWatchdog.exit");

/**
 * The watcher, as plain JavaScript evaluated in its own thread (no TypeScript loader needed):
 * it keeps the armed deadlines it is told of and checks them against the heartbeat.
 */
const WATCHER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const beat = new Float64Array(workerData.heartbeat);
const armed = new Map();
let ending = false;
parentPort.on("message", (m) => {
  if (m.kind === "arm") armed.set(m.id, m);
  else armed.delete(m.id);
});
setInterval(() => {
  if (ending || armed.size === 0) return;
  const now = Date.now();
  const silent = now - beat[0];
  if (silent < workerData.blockedMs) return;
  let due = null;
  for (const a of armed.values()) if (now >= a.at && silent >= (a.silentMs || 0) && (due === null || a.at < due.at)) due = a;
  if (due === null) return;
  ending = true;
  const blocked = (silent / 1000).toFixed(1);
  try { fs.writeSync(2, due.message.replace("{blocked}", blocked) + "\\n"); } catch {}
  let session = null;
  try {
    const inspector = require("node:inspector");
    session = new inspector.Session();
    session.connectToMainThread();
    session.post("Runtime.evaluate", { expression: "globalThis[Symbol.for('evalfleet.blockWatchdog.exit')](" + Number(due.exitCode) + ", " + Boolean(due.processExitCode) + ")" }, () => {});
  } catch {}
  // The main thread may be blocked in native code, where no interrupt lands: then no exit listener runs.
  setTimeout(() => process.kill(process.pid, "SIGKILL"), session ? workerData.forceAfterMs : 0);
}, ${BEAT_MS});
`;

/** A deadline armed on the watchdog. */
interface Armed {
  kind: "arm";
  id: number;
  /** Epoch ms past which a blocked main thread ends the process. */
  at: number;
  /** The line written to stderr; `{blocked}` becomes the seconds the main thread has been silent. */
  message: string;
  exitCode: number;
  /** Exit with the process's own `process.exitCode` when it has one (a run that reported), else `exitCode`. */
  processExitCode?: boolean;
  /** How long the main thread must have been silent, in ms, when longer than {@link BLOCKED_MS}. */
  silentMs?: number;
}

/** The process's one block watchdog, started on first use. */
export class BlockWatchdog {
  static #instance: BlockWatchdog | undefined;
  readonly #worker: Worker;
  readonly #beat: Float64Array;
  readonly #timer: NodeJS.Timeout;
  #nextId = 0;

  private constructor() {
    const heartbeat = new SharedArrayBuffer(8);
    this.#beat = new Float64Array(heartbeat);
    this.#beat[0] = Date.now();
    this.#timer = setInterval(() => (this.#beat[0] = Date.now()), BEAT_MS);
    this.#timer.unref();
    // The exit the watcher triggers, run on this (main) thread. Closing stderr first keeps Node's
    // "Waiting for the debugger to disconnect..." (the watcher's session is still open) off it.
    (globalThis as Record<symbol, unknown>)[EXIT_HOOK] = (code: number, processExitCode: boolean) => {
      try {
        closeSync(2);
      } catch {
        // already closed
      }
      process.exit(processExitCode && typeof process.exitCode === "number" ? process.exitCode : code);
    };
    this.#worker = new Worker(WATCHER_SOURCE, {
      eval: true,
      // A preload of this process (tsx, a tracer) is not the watcher's business.
      execArgv: [],
      workerData: { heartbeat, blockedMs: BLOCKED_MS, forceAfterMs: FORCE_AFTER_MS },
    });
    this.#worker.unref();
    // The watcher never throws on purpose; if it dies, the process only loses this safety net.
    this.#worker.on("error", () => undefined);
  }

  /** The process's watchdog (its watcher thread starts on the first call). */
  static get(): BlockWatchdog {
    return (BlockWatchdog.#instance ??= new BlockWatchdog());
  }

  /**
   * Arms a deadline: if the main thread is blocked at epoch ms `at` (and has been for
   * {@link BLOCKED_MS}), `message` is written to stderr and the process exits with `exitCode`.
   * Returns the id to {@link disarm} it with.
   */
  arm(at: number, message: string, exitCode: number): number {
    return this.#post({ at, message, exitCode });
  }

  #post(deadline: Omit<Armed, "kind" | "id">): number {
    const id = this.#nextId++;
    const armed: Armed = { kind: "arm", id, ...deadline };
    this.#worker.postMessage(armed);
    return id;
  }

  /**
   * Arms a deadline that outlives the run: code a case left running (an agent abandoned at its
   * timeout or at a cancel, still awaiting) may start blocking the main thread after the run has
   * ended, even after its report was written, where nothing else could end the process. If the main
   * thread is blocked past `at` for `silentMs`, `message` is written and the process exits with the
   * exit code the command set (`process.exitCode`), or `fallbackCode` when it set none yet.
   */
  armAfterRun(at: number, message: string, fallbackCode: number, silentMs: number): number {
    return this.#post({ at, message, exitCode: fallbackCode, processExitCode: true, silentMs });
  }

  /** The deadline no longer applies. */
  disarm(id: number): void {
    this.#worker.postMessage({ kind: "disarm", id });
  }
}
