import type { Writable } from "node:stream";

/**
 * Where a command writes and how it is driven. Tests pass their own streams and signal; the
 * binary uses the process's.
 */

/** Where the CLI writes and how it is driven (tests pass their own streams and signal). */
export interface CliIO {
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Default `process.stderr`. */
  stderr?: Writable;
  /** Cancels the run as a first Ctrl-C would. */
  signal?: AbortSignal;
  /** Install SIGINT/SIGTERM handlers for the run. Default true. */
  handleSignals?: boolean;
}

/** {@link CliIO} with its defaults filled in. */
export type ResolvedIO = Required<Pick<CliIO, "stdout" | "stderr" | "handleSignals">> & Pick<CliIO, "signal">;

/** Fills in the defaults of {@link CliIO}: the process's streams, signal handlers on. */
export function resolveIO(io: CliIO): ResolvedIO {
  return { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, handleSignals: io.handleSignals ?? true, signal: io.signal };
}

/** What every command's registration gets: the streams, and where its action puts the exit code. */
export interface CommandContext {
  io: ResolvedIO;
  setCode: (code: number) => void;
}
