import type { Command } from "commander";
import type { NatsFlags } from "../../shared/broker/nats-settings.ts";
import { addLoadTimeoutFlag, addHttpFlags, addNatsFlags, addServiceLogLevelFlag } from "./flags.ts";
import type { HttpFlags } from "./flag-types.ts";
import type { CommandContext, ResolvedIO } from "./io.ts";

/**
 * `evalfleet queue-metrics`: the queue depth of a suite's runs for autoscalers (KEDA metrics-api,
 * Prometheus). The service (coordinator/distributed/queue-metrics.ts) loads when the command runs.
 */

/** The flags of `queue-metrics`. */
/** The flags of `queue-metrics`; commander fills in the defaults of `--log-level` and `--load-timeout` (flags.ts). */
type QueueMetricsFlags = NatsFlags & HttpFlags & { logLevel: string; loadTimeout: number };

/** Registers `queue-metrics` on the program. */
export function addQueueMetricsCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command("queue-metrics")
    .description("Serve how many cases of this suite's runs are queued and in flight, for autoscalers: /queue (JSON), /metrics (Prometheus)")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addNatsFlags(cmd);
  addServiceLogLevelFlag(cmd);
  addLoadTimeoutFlag(cmd);
  addHttpFlags(cmd, "serve /queue, /metrics, /healthz and /readyz on this port", true);
  cmd.action(async (suite: string | undefined, flags: QueueMetricsFlags) => ctx.setCode(await serveQueueMetrics(suite, flags, ctx.io)));
}

/** Serves the queue metrics until SIGINT/SIGTERM; returns the exit code. */
async function serveQueueMetrics(suiteArgument: string | undefined, flags: QueueMetricsFlags, io: ResolvedIO): Promise<number> {
  const [{ EvalfleetError, ErrorCode }, { natsSettingsFrom }, { processEnvironment, suiteFileFrom }, { createLogger }, { loadSuiteWithin }, { QueueMetricsService }, { stopOnSignals }, { ExitCode }] = await Promise.all([
    import("../../shared/errors.ts"),
    import("../../shared/broker/nats-settings.ts"),
    import("../../shared/environment.ts"),
    import("../../shared/logger.ts"),
    import("../../shared/suite/bounded-load.ts"),
    import("../distributed/queue-metrics.ts"),
    import("./signals.ts"),
    import("../run/exit-code.ts"),
  ]);
  const env = processEnvironment();
  const suite = await loadSuiteWithin(suiteFileFrom(suiteArgument, env), flags.loadTimeout);
  if (flags.httpPort === undefined) throw new EvalfleetError(ErrorCode.Usage, "queue-metrics needs --http-port (or EVALFLEET_HTTP_PORT)", { field: "httpPort" });
  const logger = createLogger({ level: flags.logLevel, name: "evalfleet.queue-metrics" });
  const service = new QueueMetricsService({ suite, nats: natsSettingsFrom(flags, env), http: { port: flags.httpPort, host: flags.httpHost }, logger });
  const stopSignals = io.handleSignals ? stopOnSignals(() => service.stop()) : () => undefined;
  try {
    await service.run();
    return ExitCode.Ok;
  } finally {
    stopSignals();
  }
}
