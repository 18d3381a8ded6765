import type { Writable } from "node:stream";
import { processEnvironment, tracingSettingsFrom, type Environment } from "../shared/environment.ts";
import { createLogger } from "../shared/logger.ts";
import { loadSuiteWithin } from "../shared/suite/bounded-load.ts";
import { safeText } from "../shared/text.ts";
import { workerConfigFrom, type WorkerFlags } from "./config.ts";
import { WorkerService } from "./service.ts";

export type { WorkerFlags } from "./config.ts";

/**
 * The worker process: its config (worker/config.ts), the suite, the signals, the WorkerService
 * and the exit code. `evalfleet worker` parses the command line and calls {@link workerMain};
 * nothing of the coordinator (its runs, the results store, the reports) is loaded in a worker.
 */

/** Where the worker writes and how it is driven. */
export interface WorkerIO {
  /** Where a failed worker says why, in one line. */
  stderr: Writable;
  /** Install SIGTERM/SIGINT handlers (drain, then exit; a second signal while draining exits 1). Default true. */
  handleSignals?: boolean;
  /** The environment. Default: this process's. */
  env?: Environment;
}

/**
 * Runs a worker until its work is over and returns the process exit code: 0 the run is finished
 * (or an idle or standing worker was stopped cleanly), 1 work was interrupted, 2 the run was
 * refused or the configuration is bad (thrown as a usage error, which the CLI prints).
 */
export async function workerMain(suiteArgument: string | undefined, flags: WorkerFlags, io: WorkerIO): Promise<number> {
  const config = workerConfigFrom(suiteArgument, flags, io.env ?? processEnvironment());
  // Tracing's variables are checked now (a bad one: one line, exit 2); the threads start the SDK when a case carries a trace context.
  tracingSettingsFrom(io.env ?? processEnvironment());
  const suite = await loadSuiteWithin(config.suiteFile, config.loadTimeoutSeconds);
  const logger = createLogger({ level: config.logLevel, name: "evalfleet.worker" });
  const service = new WorkerService({
    suite,
    nats: config.nats,
    runId: config.runId,
    http: config.http,
    threads: config.threads,
    concurrency: config.concurrency,
    graceSeconds: config.graceSeconds,
    drainSeconds: config.drainSeconds,
    threadMemoryMb: config.threadMemoryMb,
    exitWhenIdleSeconds: config.exitWhenIdleSeconds,
    logLevel: config.logLevel,
    logger,
  });
  const onSignal = (signal: NodeJS.Signals): void => {
    // A second signal while draining: the operator does not want to wait.
    if (service.state === "draining") process.exit(1);
    service.stop(`received ${signal}`);
  };
  if (io.handleSignals ?? true) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  try {
    logger.info({ suite: suite.path, fingerprint: suite.fingerprint.slice(0, 12), run: config.runId ?? "every run of this suite" }, "worker starting");
    const exit = await service.run();
    logger.info({ code: exit.code, reason: exit.reason }, "worker stopped");
    if (exit.code !== 0) io.stderr.write(`worker: ${safeText(exit.reason)}\n`);
    return exit.code;
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}
