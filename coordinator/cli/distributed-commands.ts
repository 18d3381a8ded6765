import { Option, type Command } from "commander";
import type { NatsFlags } from "../../shared/broker/nats-settings.ts";
import { addCancelReasonFlag, addCacheFlags, addCassetteFlags, addIterateFlags, addScheduleFlags, addLoadTimeoutFlag, addCoordinatorFlags, addNatsFlags, addProviderFlags, addRunDefinitionFlags, addRunPolicyFlags, addSelectionAndReportFlags, addStoreFlags } from "./flags.ts";
import type { CoordinatorFlags } from "./flag-types.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet coordinator run|resume|cancel|status`: their arguments and flags. What they do loads
 * only when one of them runs: coordinator/cli/coordinator-run.ts (run, resume) and
 * coordinator/cli/run-admin.ts (cancel, status), so `--help` does not load the NATS client.
 */

/** Registers the `coordinator` command and its subcommands on the program. */
export function addDistributedCommands(program: Command, ctx: CommandContext): void {
  const coordinator = program.command("coordinator").description("Run a suite across worker machines on NATS JetStream, and manage runs");

  const run = coordinator
    .command("run")
    .description("Publish the selected cases of a suite and collect one ordered report")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(run);
  addRunPolicyFlags(run);
  addRunDefinitionFlags(run);
  addCoordinatorFlags(run);
  addStoreFlags(run);
  addIterateFlags(run);
  addScheduleFlags(run, { slots: true });
  addCacheFlags(run);
  addCassetteFlags(run, { fleet: true });
  addLoadTimeoutFlag(run);
  run.option("--run-id <id>", "run id (default $EVALFLEET_RUN_ID, else <$EVALFLEET_RUN_PREFIX>-<trailing number of $EVALFLEET_JOB_NAME>, else a new unique id; printed first)");
  run.option("--resume-existing", "when the run id already exists, resume that run instead of failing (a replaced Kubernetes Job pod; default $EVALFLEET_RESUME_EXISTING)");
  run.addOption(
    new Option("--on-sigterm <action>", "SIGTERM cancels the run, or leaves it for a replacement to resume (exit 143)").choices(["cancel", "leave"]).env("EVALFLEET_ON_SIGTERM").default("cancel"),
  );
  addProviderFlags(run);
  run.action(async (suite: string | undefined, flags: CoordinatorFlags) => {
    const { coordinatorRun } = await import("./coordinator-run.ts");
    ctx.setCode(await coordinatorRun(suite, flags, ctx.io));
  });

  const resume = coordinator
    .command("resume")
    .description("Take over a run whose coordinator died: rebuild it from NATS and finish it (nothing with a result runs again)")
    .argument("<run-id>", "the run to resume")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE, else the path the run's manifest records (relative to the folder the run was started in), which must still hold the run's suite");
  // The same flags as `coordinator run` (scripts pass the run's arguments again); the selection,
  // timeout and attempts of a resumed run are its manifest's.
  addSelectionAndReportFlags(resume, { list: false });
  // A resumed run keeps its repeat count (its manifest's); its threshold may be overridden.
  addRunPolicyFlags(resume, { repeat: false });
  // Its evaluation functions and scoring method are its manifest's; its record's name may be given again.
  addRunDefinitionFlags(resume, { scoring: false });
  addStoreFlags(resume);
  addCoordinatorFlags(resume);
  addLoadTimeoutFlag(resume);
  addProviderFlags(resume, { retries: false });
  resume.action(async (runId: string, suite: string | undefined, flags: CoordinatorFlags) => {
    const { coordinatorResume } = await import("./coordinator-run.ts");
    ctx.setCode(await coordinatorResume(runId, suite, flags, ctx.io));
  });

  const cancel = coordinator.command("cancel").description("Cancel a run from any machine").argument("<run-id>", "the run to cancel");
  addNatsFlags(cancel);
  addCancelReasonFlag(cancel);
  cancel.action(async (runId: string, flags: NatsFlags & { reason: string }) => {
    const { cancelRun } = await import("./run-admin.ts");
    ctx.setCode(await cancelRun(runId, flags, ctx.io));
  });

  const status = coordinator.command("status").description("Progress of a run, from any machine").argument("<run-id>", "the run");
  addNatsFlags(status);
  status.option("--json", "print the status as JSON");
  status.action(async (runId: string, flags: NatsFlags & { json?: boolean }) => {
    const { showRunProgress } = await import("./run-admin.ts");
    ctx.setCode(await showRunProgress(runId, flags, ctx.io));
  });
}
