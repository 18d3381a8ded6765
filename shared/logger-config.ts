// runs in: both
import { DEFAULT_RUN_LOG_LEVEL } from "./defaults.ts";

/**
 * The config module of `createLogger` (shared/logger.ts, public): the level of a logger whose
 * caller names none is the run's default level (`--log-level`, `warn`), read from
 * shared/defaults.ts here so the logger itself applies no default of its own. evalfleet's own
 * loggers are always given their process's compiled level.
 */

/** The level a logger is created at: the caller's, else `warn`. */
export function loggerLevel<L extends string>(level: L | undefined): L | typeof DEFAULT_RUN_LOG_LEVEL {
  return level ?? DEFAULT_RUN_LOG_LEVEL;
}
