/**
 * How a distributed run's coordinator says it is alive: it rewrites the run's state record every
 * {@link COORDINATOR_HEARTBEAT_SECONDS} (run-state-writer.ts), and `coordinator status` calls it lost
 * after {@link COORDINATOR_LOST_SECONDS} without one (status.ts). Protocol timings, not settings:
 * a status reader must judge a coordinator by the pace it really writes at.
 */

/** Seconds between two writes of a run's state record by its coordinator (its heartbeat). */
export const COORDINATOR_HEARTBEAT_SECONDS = 5;
/**
 * Seconds without a heartbeat after which `coordinator status` says the run's coordinator is
 * lost: four heartbeats missed, more than a busy coordinator or a short broker hiccup explains.
 */
export const COORDINATOR_LOST_SECONDS = 20;
