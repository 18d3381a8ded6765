/**
 * How a recorded run says it is alive: the recording process writes a heartbeat every
 * {@link STORE_HEARTBEAT_SECONDS} (recording/recorder.ts), and a run left `running` without one for
 * {@link RUN_ABANDONED_SECONDS} is closed as `abandoned` (run-record.ts). Timings of the store's
 * records, not settings: every reader must judge a run by the pace writers really keep.
 */

/** Seconds between two heartbeats of a recorded run (the recording process says it is alive). */
export const STORE_HEARTBEAT_SECONDS = 30;
/**
 * Seconds without a heartbeat after which a run left `running` in the results store is closed as
 * `abandoned` (by the next recorded run's start, or a history command): twenty heartbeats missed,
 * so a database that is slow for a while never closes a live run.
 */
export const RUN_ABANDONED_SECONDS = 600;
