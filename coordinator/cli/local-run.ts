import { processEnvironment } from "../../shared/environment.ts";
import { loadSuiteWithin } from "../../shared/suite/bounded-load.ts";
import { runConfigFrom } from "./config.ts";
import { executeRun } from "./execute-run.ts";
import type { RunFlags } from "./flag-types.ts";
import type { ResolvedIO } from "./io.ts";
import { inlineRunner, poolRunner } from "./local-runners.ts";
import type { RunConfig } from "./config.ts";
import type { PrestartedThreads, SuitePreload } from "../../worker/pool/case-pool.ts";
import { isTypeScriptFile } from "../../shared/suite/typescript-loader.ts";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * `evalfleet run` and `evalfleet list`: the config from the flags and the environment, the suite
 * file, and the run pipeline with the local runner the config asks for. Loaded when one of the two
 * commands runs (coordinator/cli/run-command.ts registers them).
 */

/** Runs (or lists) a suite file locally; returns the exit code. */
export async function runLocal(command: "run" | "list", suiteArgument: string | undefined, flags: RunFlags, io: ResolvedIO): Promise<number> {
  const config = runConfigFrom({ command, suiteArgument, flags, env: processEnvironment() });
  // The threads start now and import evalfleet while this thread loads the suite; stopped unused
  // when the run ends without them (a broken suite, an empty selection).
  const prestarted = command === "run" && config.mode === "threads" ? await prestartThreads(config) : null;
  try {
    const suite = await loadSuiteWithin(config.suiteFile!, config.loadTimeoutSeconds);
    return await executeRun(suite, config, io, config.mode === "threads" ? poolRunner(suite, config, null, prestarted) : inlineRunner(suite, config));
  } finally {
    await prestarted?.discard();
  }
}

/** The run's worker threads, started with the shape its pool will have. */
async function prestartThreads(config: RunConfig): Promise<PrestartedThreads> {
  const { PrestartedThreads, threadShape } = await import("../../worker/pool/case-pool.ts");
  // `--list` and `--estimate` run no case: their threads are not worth a suite import each.
  const runsCases = !config.list && config.estimate === null;
  return PrestartedThreads.start(threadShape({ threads: config.poolThreads, concurrency: config.concurrency, threadMemoryMb: config.threadMemoryMb }), runsCases ? plainSuitePreload(config.suiteFile!) : null);
}

/**
 * A plain JavaScript suite's module is known before this thread loads it (the file itself), so
 * the threads import it at once, alongside this thread's load. A TypeScript suite is bundled by
 * that load first (shared/suite/suite-bundle.ts): its threads import it on their first batch.
 */
function plainSuitePreload(file: string): SuitePreload | null {
  if (isTypeScriptFile(file)) return null;
  const path = resolve(file);
  return { path, module: { url: pathToFileURL(path).href, loader: "node" } };
}
