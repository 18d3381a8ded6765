import { RUN_ABANDONED_SECONDS } from "./run-heartbeat.ts";

/**
 * A run as the results store keeps it: what is known when it starts ({@link RunStart}), what is
 * written when it ends ({@link RunEnd}), and the whole record read back ({@link RunRecord}).
 * Types only, and when a run left without a heartbeat counts as abandoned. Pure; no I/O.
 */

/**
 * How a run ended; `running` until it does. A run whose process died stays `running` until it is
 * closed as `abandoned`: automatically once its heartbeat is older than RUN_ABANDONED_SECONDS
 * (run-heartbeat.ts), or by `evalfleet runs close`.
 */
export type RunRecordStatus = "running" | "passed" | "failed" | "cancelled" | "incomplete" | "abandoned";

/**
 * The moment before which a run left `running` with no heartbeat since is abandoned:
 * {@link RUN_ABANDONED_SECONDS} before `now` (ISO 8601).
 */
export function abandonedBefore(now: number = Date.now()): string {
  return new Date(now - RUN_ABANDONED_SECONDS * 1000).toISOString();
}

/** What a run is: a suite run, or a standalone AgentAsJudgeEval run. */
export type RunKind = "suite" | "agent_as_judge";

/** The part of a run record known when it starts. */
export interface RunStart {
  id: string;
  kind: RunKind;
  /** The suite's name (for AgentAsJudgeEval: its `name`, or `agent_as_judge`). */
  suiteName: string;
  suiteFingerprint: string | null;
  suitePath: string | null;
  /** What was asked for: `{ name, tag, cases }` (cases: the selected names, declaration order). */
  selection: Record<string, unknown>;
  /** How it ran: mode, concurrency, threads, ... (never a credential). */
  config: Record<string, unknown>;
  /** The suite-wide judge model's id (or the default judge's model), when there is one. */
  judgeModel: string | null;
  /** The default per-case timeout in seconds. */
  timeoutSeconds: number | null;
  /** ISO 8601 UTC. */
  startedAt: string;
  gitCommit: string | null;
  gitBranch: string | null;
  /** `<hostname>/<pid>` of the process that recorded the run. */
  host: string | null;
  /** The run's name (`--run-name`; Exulu's `eval_runs.name`). Default none. */
  runName?: string | null;
  /** Free text about the run (`--description`). Default none. */
  description?: string | null;
  /**
   * The agent every case of the run uses, when they all use one (an AgentAsJudgeEval post-hook:
   * the hooked agent). `teamId` likewise for a team. Default none.
   */
  agentId?: string | null;
  teamId?: string | null;
  /** The evaluation functions applied to every case (`--eval-function`). Default none. */
  evalFunctions?: readonly string[] | null;
  /** The scoring method that overrides the cases' own (`--scoring-method`). Default none. */
  scoringMethod?: string | null;
  /** The run's pass threshold (0-1, the fraction of cases that must pass). Default none. */
  passThreshold?: number | null;
  /** The run this one re-graded (`evalfleet regrade`), or none. */
  regradedFrom?: string | null;
}

/** The part of a run record written when it ends. */
export interface RunEnd {
  finishedAt: string;
  status: RunRecordStatus;
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  /** Seconds. */
  durationSeconds: number;
  /** The JSON report's `summary` object, verbatim (null for AgentAsJudgeEval runs). */
  summary: Record<string, unknown> | null;
  /** When the run started, when the end knows it better than the start did (a resumed run: its first coordinator's start). */
  startedAt?: string | null;
}

/** A run as read back (the optional fields of {@link RunStart} are read back as `null` when unset). */
export interface RunRecord extends RunStart {
  finishedAt: string | null;
  status: RunRecordStatus;
  total: number | null;
  passed: number | null;
  failed: number | null;
  skipped: number | null;
  durationSeconds: number | null;
  summary: Record<string, unknown> | null;
  /** The last heartbeat of the process recording the run (ISO 8601), or null (a run recorded before schema 3). */
  heartbeatAt?: string | null;
}
