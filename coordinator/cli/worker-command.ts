import type { Command } from "commander";
import type { WorkerFlags } from "../../worker/main.ts";
import { addLoadTimeoutFlag, addHttpFlags, addNatsFlags, addWorkerFlags } from "./flags.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet worker`: its arguments and flags. The worker process itself is worker/main.ts, loaded
 * when the command runs; a worker loads nothing else of the coordinator.
 */

/** Registers `worker` on the program. */
export function addWorkerCommand(program: Command, ctx: CommandContext): void {
  const worker = program
    .command("worker")
    .description("Serve cases from NATS JetStream on a pool of worker threads")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addNatsFlags(worker);
  addWorkerFlags(worker);
  addLoadTimeoutFlag(worker);
  addHttpFlags(worker, "serve /healthz, /readyz and /metrics on this port");
  worker.action(async (suite: string | undefined, flags: WorkerFlags) => {
    const { workerMain } = await import("../../worker/main.ts");
    ctx.setCode(await workerMain(suite, flags, { stderr: ctx.io.stderr, handleSignals: ctx.io.handleSignals }));
  });
}
