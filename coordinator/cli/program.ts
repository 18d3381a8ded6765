import { Command } from "commander";
import { evalfleetVersion } from "../../shared/runtime/package-files.ts";
import { ExitCode } from "../run/exit-code.ts";
import { addCacheCommand } from "./cache-command.ts";
import { addDistributedCommands } from "./distributed-commands.ts";
import { addHistoryCommands } from "./history-commands.ts";
import { resolveIO, type CliIO, type CommandContext } from "./io.ts";
import { parseAndRun } from "./parse-and-run.ts";
import { addQueueMetricsCommand } from "./queue-metrics-command.ts";
import { addRunCommands } from "./run-command.ts";
import { addServeCommands } from "./serve-commands.ts";
import { addWorkerCommand } from "./worker-command.ts";

export type { CliIO } from "./io.ts";

/**
 * The `evalfleet` command line: the root program and its commands. Each command's flags are
 * registered here (so `--help` can list them); what a command does is loaded only when it runs, so
 * `evalfleet --help` loads neither the NATS client, the results store, the thread pool nor the
 * reports. Presentation lives in cli/ and report/; the runner core prints nothing.
 *
 * Where each command lives: run-command.ts (run, list), distributed-commands.ts (coordinator
 * run|resume|cancel|status), worker-command.ts (worker), history-commands.ts (runs, show, compare,
 * flaky, report), serve-commands.ts (serve, token), queue-metrics-command.ts (queue-metrics); script-command.ts is `cli(cases)`.
 */

/** The `evalfleet` binary. Returns the exit code. */
export async function main(argv: readonly string[], io: CliIO = {}): Promise<number> {
  let code: number = ExitCode.Usage;
  const ctx: CommandContext = { io: resolveIO(io), setCode: (c) => (code = c) };
  const program = new Command("evalfleet")
    .description("Run eval suites for LLM agents: locally on worker threads, or across machines on NATS JetStream.")
    .version(evalfleetVersion(), "--version", "Print the version")
    .helpOption("-h, --help", "Show this help")
    .showHelpAfterError(false)
    .showSuggestionAfterError(false);
  addRunCommands(program, ctx);
  addDistributedCommands(program, ctx);
  addWorkerCommand(program, ctx);
  addHistoryCommands(program, ctx);
  addQueueMetricsCommand(program, ctx);
  addCacheCommand(program, ctx);
  addServeCommands(program, ctx);
  return parseAndRun(program, argv, ctx.io, () => code);
}
