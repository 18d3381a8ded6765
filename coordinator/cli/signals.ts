/**
 * What SIGINT and SIGTERM do to the coordinator's commands: a run cancels gracefully on the first
 * signal and exits at once on the second; `coordinator run --on-sigterm leave` leaves its run for a
 * replacement; the standing `queue-metrics` service stops. (The worker process has its own, in
 * worker/main.ts.) Each installer returns a function that removes its listeners.
 */

/** Exit code of a coordinator that left its run on SIGTERM (128 + 15, as a shell reports it). */
export const LEFT_ON_SIGTERM_EXIT_CODE = 143;

/** Exit code of a run stopped by a second Ctrl-C (128 + 2, as a shell reports it). */
export const SECOND_SIGNAL_EXIT_CODE = 130;

/** What the run's signal handling needs of the progress display. */
export interface SignalReporter {
  note(line: string): void;
  stop(): void;
}

/** First SIGINT/SIGTERM: cancel gracefully (teardowns run, reports are written). Second: exit at once (130). */
export function installSignalHandlers(controller: AbortController, reporter: SignalReporter): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      reporter.stop();
      process.exit(SECOND_SIGNAL_EXIT_CODE);
    }
    reporter.note(`${signal}: cancelling: in-flight cases are aborted and torn down, unrun cases are skipped (press Ctrl-C again to exit now)`);
    controller.abort(new DOMException(`received ${signal}`, "AbortError"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

/**
 * `--on-sigterm leave`: on SIGTERM the coordinator exits at once with
 * {@link LEFT_ON_SIGTERM_EXIT_CODE} and leaves the run as it is on NATS (no cancel, no report), so
 * a replacement started with `--resume-existing` finishes it; workers keep working meanwhile.
 * For a coordinator in a Kubernetes Job, whose pod may be evicted. The listener goes first, ahead
 * of the run's own SIGTERM handling (cancel).
 */
export function leaveRunOnSigterm(say: (line: string) => void, runId: () => string | null): () => void {
  const onSigterm = (): void => {
    const id = runId();
    say(`SIGTERM: leaving ${id ? `run ${id}` : "the run"} as it is for a replacement coordinator to resume (--on-sigterm leave)`);
    process.exit(LEFT_ON_SIGTERM_EXIT_CODE);
  };
  process.prependListener("SIGTERM", onSigterm);
  return () => process.off("SIGTERM", onSigterm);
}

/** SIGINT and SIGTERM call `stop` (a standing service shuts down cleanly). */
export function stopOnSignals(stop: () => void): () => void {
  const onSignal = (): void => stop();
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return () => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
}
