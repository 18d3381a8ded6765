import { CommanderError, type Command } from "commander";
import { ExitCode } from "../run/exit-code.ts";
import type { ResolvedIO } from "./io.ts";

/**
 * Runs a commander program to an exit code: help and version are 0, a usage error commander found
 * is 2, and an error thrown by a command is one line on stderr (`error: ...`, never a stack trace)
 * with the exit code of its kind.
 */

/** Parses `argv`, runs the command and returns its exit code (`code()` once the action has set it). */
export async function parseAndRun(program: Command, argv: readonly string[], io: ResolvedIO, code: () => number): Promise<number> {
  const configure = (cmd: Command): void => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s), outputError: (s, write) => write(s) });
    cmd.commands.forEach(configure);
  };
  configure(program);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code();
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === "commander.helpDisplayed" || err.code === "commander.help" || err.code === "commander.version" ? ExitCode.Ok : ExitCode.Usage;
    }
    // The error module (and zod with it) and the redactor load only on this path: `--help` does not need them.
    const errors = await import("../../shared/errors.ts");
    const { safeText } = await import("../../shared/text.ts");
    io.stderr.write(`error: ${safeText(errors.errorMessage(err))}\n`);
    return exitCodeOfError(err, errors);
  }
}

/** Exit code of an error that stopped a command before it produced a report. */
function exitCodeOfError(err: unknown, { EvalfleetError, ErrorCode }: typeof import("../../shared/errors.ts")): number {
  if (!(err instanceof EvalfleetError)) return ExitCode.Failed;
  switch (err.code) {
    case ErrorCode.Usage:
    case ErrorCode.RunNotFound:
    case ErrorCode.RunExists:
    case ErrorCode.SuiteMismatch:
    case ErrorCode.SuiteInvalid:
    case ErrorCode.SuiteLoadFailed:
    case ErrorCode.SuiteNotFound:
    case ErrorCode.StoreUrlInvalid:
    case ErrorCode.StoreUnavailable:
    case ErrorCode.StoreSchema:
    case ErrorCode.DatasetInvalid:
      return ExitCode.Usage;
    case ErrorCode.BrokerUnreachable:
    case ErrorCode.BrokerConfig:
      return ExitCode.Incomplete;
    default:
      return ExitCode.Failed;
  }
}
