import * as z from "zod";
import { natsSettingsFrom, type NatsFlags, type NatsSettings } from "../shared/broker/nats-settings.ts";
import { assertRunId } from "../shared/broker/subjects.ts";
import { parseConfig, positiveSeconds, seconds, text, whole } from "../shared/config.ts";
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_DRAIN_SECONDS,
  DEFAULT_GRACE_SECONDS,
  DEFAULT_HTTP_HOST,
  DEFAULT_LOAD_TIMEOUT_SECONDS,
  DEFAULT_SERVICE_LOG_LEVEL,
  defaultThreads,
} from "../shared/defaults.ts";
import { LOG_LEVELS } from "../shared/log-levels.ts";
import { runIdFromEnvironment, suiteFileFrom, type Environment } from "../shared/environment.ts";
import { lazySchema } from "../shared/runtime/lazy-schema.ts";

/**
 * The worker process's options pipeline: its flags (as `evalfleet worker` parses them) and the
 * environment go in once, are validated by one zod schema and come out as one frozen
 * {@link WorkerConfig}, handed down to worker/main.ts and the WorkerService. Defaults come from
 * shared/defaults.ts.
 */

/** The flags of `evalfleet worker`, as commander parses them. Durations in seconds, memory in MB. */
export interface WorkerFlags extends NatsFlags {
  threads?: number;
  concurrency?: number;
  /** `--run`: serve only this run. */
  run?: string;
  exitWhenIdle?: number;
  grace?: number;
  drain?: number;
  threadMemory?: number;
  /** `--load-timeout`, seconds. */
  loadTimeout?: number;
  logLevel?: string;
  /** `--http-port` (else `$EVALFLEET_HTTP_PORT`, which commander reads). */
  httpPort?: number;
  httpHost?: string;
}

/** The worker's config, validated. Durations in seconds, memory in MB. */
export const WorkerConfigSchema = lazySchema(() => z.object({
  /** The suite file (`[suite]`, else `$EVALFLEET_SUITE`). */
  suiteFile: text(),
  nats: z.custom<NatsSettings>((v) => v !== null && typeof v === "object"),
  /** Serve only this run and stop when it is over (`--run`, else `$EVALFLEET_RUN_ID` or the Job's); null: every run of the suite. */
  runId: text().nullable(),
  /** Serve `/healthz`, `/readyz` and `/metrics` here; null: no HTTP endpoint. */
  http: z.object({ port: whole(0), host: text() }).nullable(),
  threads: whole(1),
  concurrency: whole(1),
  graceSeconds: seconds(),
  drainSeconds: seconds(),
  threadMemoryMb: whole(16).nullable(),
  exitWhenIdleSeconds: seconds().nullable(),
  /** The bound on loading the suite file (`--load-timeout`). The run's own bounds (setup, teardown, output) come with its manifest. */
  loadTimeoutSeconds: positiveSeconds(),
  logLevel: z.enum(LOG_LEVELS),
}));

/** The worker's config: validated once, frozen, handed down as one object. */
export type WorkerConfig = Readonly<z.infer<typeof WorkerConfigSchema>>;

/** The flag a config field came from, for error messages. */
const FLAG_OF: Readonly<Record<string, string>> = {
  threads: "--threads",
  concurrency: "--concurrency",
  graceSeconds: "--grace",
  drainSeconds: "--drain",
  threadMemoryMb: "--thread-memory",
  exitWhenIdleSeconds: "--exit-when-idle",
  loadTimeoutSeconds: "--load-timeout",
  logLevel: "--log-level",
  runId: "--run",
  "http.port": "--http-port",
  "http.host": "--http-host",
};

/**
 * The worker's config from its `[suite]` argument, flags and the environment: validated (a bad
 * value names its flag or variable and the value) and frozen.
 */
export function workerConfigFrom(suiteArgument: string | undefined, flags: WorkerFlags, env: Environment): WorkerConfig {
  const concurrency = flags.concurrency ?? DEFAULT_CONCURRENCY;
  return parseConfig(
    WorkerConfigSchema,
    {
      suiteFile: suiteFileFrom(suiteArgument, env),
      runId: flags.run ? assertRunId(flags.run) : runIdFromEnvironment(env),
      nats: natsSettingsFrom(flags, env),
      http: flags.httpPort === undefined ? null : { port: flags.httpPort, host: flags.httpHost ?? DEFAULT_HTTP_HOST },
      threads: flags.threads ?? defaultThreads(concurrency),
      concurrency,
      graceSeconds: flags.grace ?? DEFAULT_GRACE_SECONDS,
      drainSeconds: flags.drain ?? DEFAULT_DRAIN_SECONDS,
      threadMemoryMb: flags.threadMemory ?? null,
      exitWhenIdleSeconds: flags.exitWhenIdle ?? null,
      loadTimeoutSeconds: flags.loadTimeout ?? DEFAULT_LOAD_TIMEOUT_SECONDS,
      logLevel: flags.logLevel ?? DEFAULT_SERVICE_LOG_LEVEL,
    },
    (path) => FLAG_OF[path] ?? path,
  );
}
