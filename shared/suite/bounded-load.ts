// runs in: main
import { BlockWatchdog } from "../process/block-watchdog.ts";
import { ErrorCode, SuiteLoadError } from "../errors.ts";
import { loadSuite, type LoadedSuite } from "./suite.ts";
import { setSuiteBeingLoaded } from "./loading-suite.ts";
import { useSuiteRedactShapes } from "../redaction/secrets.ts";

/**
 * Loading a suite file within a bound (`--load-timeout`), for every command that loads one. A
 * top-level `await` that never settles is ended by a timer (which also keeps the event loop alive,
 * so Node does not quit with its undocumented exit code 13); an import that blocks the main thread
 * synchronously is ended by the block watchdog (block-watchdog.ts). Either way: exit 2 with one
 * line naming the file.
 */

/** The exit code of a suite that did not load in time (a usage error: the suite file is at fault). */
const LOAD_TIMEOUT_EXIT_CODE = 2;


/**
 * Loads `file` ({@link loadSuite}) within `timeoutSeconds` (the command's compiled `--load-timeout`); throws a {@link SuiteLoadError} past it.
 * The process then redacts the credential shapes the suite says (`redactShapes`): a command loads one suite.
 */
export async function loadSuiteWithin(file: string, timeoutSeconds: number): Promise<LoadedSuite> {
  const ms = Math.min(timeoutSeconds * 1000, 2_147_483_647);
  const why = `did not finish loading within ${timeoutSeconds}s (--load-timeout)`;
  const guard = BlockWatchdog.get().arm(Date.now() + ms, `error: ${file}: ${why}: its top-level code is blocking the main thread (no heartbeat for {blocked}s)`, LOAD_TIMEOUT_EXIT_CODE);
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SuiteLoadError(ErrorCode.SuiteLoadFailed, file, [`${why}: a top-level await that never settles?`])), ms);
  });
  setSuiteBeingLoaded(file);
  try {
    const suite = await Promise.race([loadSuite(file), overran]);
    useSuiteRedactShapes(suite.redactShapes);
    return suite;
  } finally {
    setSuiteBeingLoaded(null);
    clearTimeout(timer);
    BlockWatchdog.get().disarm(guard);
  }
}
