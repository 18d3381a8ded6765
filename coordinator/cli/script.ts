import type { Case } from "../../shared/case.ts";
import { captureDuringLoad } from "../../shared/suite.ts";
import type { CliOptions } from "./script-command.ts";

/**
 * `cli(cases)` for Agno-style suite scripts. Its own small module because every worker thread
 * imports the suite file, and with it `cli`: the command line itself (commander, the NATS client,
 * the results store, the reports) loads only when the script really runs, which cut each thread's
 * start-up by about a third.
 */

/**
 * Runs `cases` as a command line from inside a suite file and returns the exit code:
 * `process.exitCode = await cli(CASES)`. When evalfleet itself loads the file (a worker thread,
 * or `evalfleet run file.ts`), it only registers the cases and returns 0 without running anything.
 */
export async function cli(cases: readonly Case[], options: CliOptions = {}): Promise<number> {
  if (captureDuringLoad(cases, options)) return 0;
  const { runScript } = await import("./script-command.ts");
  return runScript(cases, options);
}
