import type { CaseResult } from "../../shared/result/result.ts";
import type { RunOutput } from "../../shared/case/agent.ts";
import type { ThreadCache, ThreadCassette } from "../../shared/wire/thread.ts";
import type { ScoringMethod } from "../../shared/datasets/scoring-methods.ts";

/**
 * What the pool is asked to run: one case by index and name, with what the pool needs to build
 * its result on this side when the thread cannot (a crash, a terminated thread).
 */

/** One case to run on the pool. */
export interface PoolCaseRequest {
  index: number;
  name: string;
  /** Seconds, already resolved (flag, suite, 120). */
  defaultTimeout: number;
  /** Seconds, the setup and teardown bounds of cases that set none, already resolved (the run's compiled `setupTimeoutSeconds` / `teardownTimeoutSeconds`, or the manifest's). */
  hookDefaults: { setup: number; teardown: number };
  /** The case's own setup and teardown bounds resolved against `hookDefaults`, in seconds (for the message of a terminated case). Default `hookDefaults`. */
  hookTimeouts?: { setup: number; teardown: number };
  /** The case's own timeout resolved against the default, in seconds (for the message of a terminated case). */
  timeoutSeconds: number;
  /** Whether the case has a teardown (to say it did not run when its thread is terminated). */
  hasTeardown: boolean;
  /** Identity of the case for results built on this side (a crash before the thread answered). */
  shell: () => CaseResult;
  /** Cancels the case: the thread aborts it and runs its teardown; past the grace, the thread is terminated. */
  signal: AbortSignal;
  /** Largest output kept on the result, in bytes (the run's compiled `maxOutputBytes`). */
  maxOutputBytes: number;
  /** Streamed events, forwarded from the thread (only when given). */
  onEvent?: (event: Record<string, unknown>) => void;
  /** Evaluation functions of the suite that grade the case after its own (the run's `--eval-function`). Default none. */
  runEvalFunctions?: readonly string[] | null;
  /** A scoring method replacing the case's expected-output method (the run's `--scoring-method`). Default: the case's. */
  scoringMethod?: ScoringMethod | null;
  /** The W3C traceparent the case's span goes under, when tracing is on. Default none. */
  traceparent?: string | null;
  /** How the case's span names its worker and attempt (a distributed worker: its id, and the deliveries before this one). Default: the thread's label and the pool's attempt. */
  traceAs?: { worker: string; priorAttempts: number } | null;
  /** Keep the case's transcript within this many bytes (a recorded run). Default 0: none. */
  maxTranscriptBytes?: number;
  /** A regrade: grade this stored output instead of running the agent (plain data). Default: the agent runs. */
  replay?: RunOutput | null;
  /** A regrade's `--judge-model` (the default judge with this model, for cases naming no judge). Default: the suite's judge. */
  judgeModel?: string | null;
  /** Which run of a repeated case this is (1-based; part of a cached answer's key). Default 1. */
  repeat?: number;
  /** The response cache of the case's model calls (`--cache`). Default none. */
  cache?: ThreadCache | null;
  /** Record or replay the case's cassette (`--record`, `--replay`). Default: neither. */
  cassette?: ThreadCassette | null;
  /** Told each phase the thread starts with its deadline (epoch ms; null for none): a distributed worker's lease follows it. */
  onPhase?: (phase: "setup" | "run" | "teardown", deadline: number | null) => void;
}
