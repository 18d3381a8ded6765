import type { Command } from "commander";
import { addCacheFlags, addCassetteFlags, addIterateFlags, addScheduleFlags, addLoadTimeoutFlag, addEngineFlags, addProviderFlags, addRunDefinitionFlags, addRunPolicyFlags, addSelectionAndReportFlags, addStoreFlags } from "./flags.ts";
import type { RunFlags } from "./flag-types.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet run` and `evalfleet list`: their arguments and flags. What they do loads only when
 * one of them runs (coordinator/cli/local-run.ts), so `--help` loads neither the runners nor the
 * store nor the reports.
 */

/** Registers `run` and `list` on the program. */
export function addRunCommands(program: Command, ctx: CommandContext): void {
  const run = program
    .command("run")
    .description("Run a suite file on a pool of worker threads (local mode, no broker)")
    .argument("[suite]", "suite file (.ts, .mts, .js, .mjs); default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(run);
  addRunPolicyFlags(run);
  addRunDefinitionFlags(run);
  addEngineFlags(run);
  addStoreFlags(run);
  addIterateFlags(run);
  addScheduleFlags(run);
  addCacheFlags(run, { shared: false });
  addCassetteFlags(run);
  addLoadTimeoutFlag(run);
  addProviderFlags(run);
  run.action(async (suite: string | undefined, flags: RunFlags) => {
    const { runLocal } = await import("./local-run.ts");
    ctx.setCode(await runLocal("run", suite, flags, ctx.io));
  });

  const regrade = program
    .command("regrade")
    .description("Grade the stored outputs of a recorded run again with the suite's checks as they are now: no agent runs, no setup or teardown; recorded as a new run")
    .argument("<run-id>", "the recorded run (or a prefix of its id only it has)")
    .argument("[suite]", "suite file; default: the one recorded with the run");
  addSelectionAndReportFlags(regrade, { list: false });
  addRunPolicyFlags(regrade, { repeat: false });
  addRunDefinitionFlags(regrade);
  addEngineFlags(regrade);
  addStoreFlags(regrade);
  addCacheFlags(regrade, { shared: false });
  regrade.option("--judge-model <model>", "grade with the OpenAI-compatible judge of this model (OPENAI_API_KEY, OPENAI_BASE_URL) where a case names no judge of its own, instead of the suite's");
  addLoadTimeoutFlag(regrade);
  regrade.action(async (runId: string, suite: string | undefined, flags: RunFlags) => {
    const { regradeRun } = await import("./regrade.ts");
    ctx.setCode(await regradeRun(runId, suite, flags, ctx.io));
  });

  const list = program
    .command("list")
    .description("List the selected cases of a suite file without running them")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  // Only what listing uses: the selection, the timeout shown per case, the JSON case list.
  addSelectionAndReportFlags(list, { list: false, running: false });
  addLoadTimeoutFlag(list);
  list.action(async (suite: string | undefined, flags: RunFlags) => {
    const { runLocal } = await import("./local-run.ts");
    ctx.setCode(await runLocal("list", suite, flags, ctx.io));
  });
}
