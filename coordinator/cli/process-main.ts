import { writeSync } from "node:fs";
import { sweepDescendants } from "../../shared/process/process-tree.ts";
import { suiteBeingLoaded } from "../../shared/suite/loading-suite.ts";
import { ExitCode } from "../run/exit-code.ts";
import { loadsSuite } from "./loads-suite.ts";

/** Node's exit code when the main module's top-level await can never settle (nothing left to run). */
const NODE_UNSETTLED_TOP_LEVEL_AWAIT = 13;

/**
 * The `evalfleet` process: runs one command line to its end and sets the exit code. Called by
 * coordinator/main.ts, from the ES modules of dist/ for the commands that load no suite, and from
 * the CLI's runtime (cli-runtime.ts) for the ones that do; each copy's exit handling names the
 * suite its own loader was loading.
 */
export async function processMain(argv: readonly string[]): Promise<number> {
  // However this process ends (a report written, a blocked run ended by its watchdog, an error), no
  // process a case started outlives it (`evalfleet run`, `evalfleet worker`, ...): what is left of
  // its descendants is ended, one by one (never the process group: it is shared with our caller).
  // And Node's own exit 13 becomes a documented code with one line saying why.
  process.on("exit", (code) => {
    if (code === NODE_UNSETTLED_TOP_LEVEL_AWAIT) {
      const file = suiteBeingLoaded();
      const why = file
        ? `error: ${file}: did not finish loading: a top-level await that can never settle (nothing is left that could settle it)`
        : "error: evalfleet stopped: it was waiting for a promise that can never settle (nothing is left that could settle it)";
      try {
        writeSync(2, `${why}\n`);
      } catch {
        // stderr is gone
      }
      process.exitCode = file ? ExitCode.Usage : ExitCode.Failed;
    }
    sweepDescendants();
  });

  // A command that loads a suite arms the block watchdog while it does, and a run starts its worker
  // threads at that moment too: started now, the watchdog's thread boots on the core this thread's
  // module loading leaves free, not on the cores the run's threads start on (on 2 cores, a run's
  // threads were ready about 15% sooner; bench/README.md).
  if (loadsSuite(argv)) (await import("../../shared/process/block-watchdog.ts")).BlockWatchdog.get();

  const { main } = await import("./program.ts");
  const code = await main(argv);
  process.exitCode = code;
  // A case that ignored its abort may still hold a timer or a socket; the run is over, so do not wait for it.
  setTimeout(() => process.exit(code), 200).unref();
  return code;
}
