import type { Case } from "../../shared/case/case.ts";
import { captureDuringLoad, loadingSuite } from "../../shared/suite/load-capture.ts";
import { firstUnknownKey, optionKeys, unknownOption, unknownOptionMessage } from "../../shared/option-keys.ts";
import type { CliOptions } from "./script-command.ts";

/**
 * `cli(cases)` for Agno-style suite scripts. Its own small module because every worker thread
 * imports the suite file, and with it `cli`: the command line itself (commander, the NATS client,
 * the results store, the reports) loads only when the script really runs, which cut each thread's
 * start-up by about a third.
 */

/** The known keys of {@link cli}'s options. */
export const CLI_OPTION_KEYS: ReadonlySet<string> = optionKeys<CliOptions>({
  stdout: true, stderr: true, signal: true, handleSignals: true, argv: true, defaultTimeout: true, judgeModel: true, mcpClients: true,
  db: true, evalSets: true, passThreshold: true, evalFunctions: true, redactShapes: true, casePassRate: true,
});

/**
 * Runs `cases` as a command line from inside a suite file and returns the exit code:
 * `process.exitCode = await cli(CASES)`. When evalfleet itself loads the file (a worker thread,
 * or `evalfleet run file.ts`), it only registers the cases and returns 0 without running anything.
 * An unknown option fails the load then (a ConfigError naming the nearest known option); run as a
 * script, it is a usage error: one line on stderr, exit code 2.
 */
export async function cli(cases: readonly Case[], options: CliOptions = {}): Promise<number> {
  const unknown = options !== null && typeof options === "object" ? firstUnknownKey(options, CLI_OPTION_KEYS) : null;
  if (unknown !== null && loadingSuite()) throw unknownOption("cli()", unknown, CLI_OPTION_KEYS);
  if (captureDuringLoad(cases, options)) return 0;
  const { runScript } = await import("./script-command.ts");
  return runScript(cases, options, unknown === null ? null : { field: unknown, message: unknownOptionMessage("cli()", unknown, CLI_OPTION_KEYS) });
}
