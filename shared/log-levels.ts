// runs in: both
/**
 * The structured log levels, as a vocabulary (the choices of `--log-level` and of
 * `EVALFLEET_LOG_LEVEL`). Which level a run or a service logs at by default is a setting, in
 * shared/defaults.ts.
 */

/** The structured log levels, most severe first (`--log-level`). */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];
