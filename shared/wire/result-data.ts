// runs in: both
import * as z from "zod";
import type { RunOutput } from "../case/agent.ts";
import { ErrorKindSchema } from "../result/error-kind.ts";
import { TranscriptSchema } from "./transcript.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The data of one case result: the one place its shape is written. Every other result type is
 * built from these schemas: the `CaseResult` class takes its fields from {@link CaseResultData}
 * (shared/result/result.ts), the thread and NATS messages carry {@link CaseResultDataSchema}
 * (thread.ts, nats.ts), and the results store's records pick from the same types
 * (coordinator/history/store/case-record.ts). Types come from `z.infer`; receivers validate before
 * they trust. The JSON report is a projection of this data, not a copy (shared/result/result-json.ts).
 */

/** A scorer's verdict (shared/case/score.ts: a `Scorer` returns it, `Score` validates it). */
export const ScoreDataSchema = lazySchema(() => z.object({
  /** In [0, 1] inclusive. */
  value: z.number().min(0).max(1),
  passed: z.boolean(),
  reason: z.string().nullable().optional(),
  /** Free-form, kept on the CaseResult but not in the JSON report. */
  detail: z.record(z.string(), z.unknown()).nullable().optional(),
}));
/** A scorer's verdict. Built through `Score`, which validates `value`. */
export type ScoreData = z.infer<typeof ScoreDataSchema>;

/**
 * One tool execution of a graded run, numbered as the reliability check saw it: `step` counts from
 * 1 over the run's own executions (its `tools`), then each member's (`memberResponses`, depth
 * first), the order a stored transcript keeps them in.
 */
export const TrajectoryStepSchema = lazySchema(() => z.object({
  step: z.number().int().positive(),
  /** The tool's name (`""` when the execution named none). */
  tool: z.string(),
  /** The `agentId` of the team member whose output holds the call; `null` for the run's own calls. */
  member: z.string().nullable(),
  /** `ok` (ran cleanly), `error` (`toolCallError` set) or `paused` (waiting for a human). */
  outcome: z.enum(["ok", "error", "paused"]),
  /** `matched` (it met an expectation), `failed` (a failure of the check points at it) or `other`. */
  verdict: z.enum(["matched", "failed", "other"]),
  /** The index in `expectedToolCalls` of the expectation it met, or null. */
  expectation: z.number().int().nonnegative().nullable(),
}));
/** One numbered tool execution and its verdict. */
export type TrajectoryStep = z.infer<typeof TrajectoryStepSchema>;

/** What a failure of the reliability check is about. */
export const TRAJECTORY_FAILURE_KINDS = ["missing", "mismatch", "times", "order", "exact", "unexpected", "forbidden", "max_tool_calls", "tool_error"] as const;

/** One failure of the reliability check: its kind, the expectation and the step it concerns, and its one-line message. */
export const TrajectoryFailureSchema = lazySchema(() => z.object({
  kind: z.enum(TRAJECTORY_FAILURE_KINDS),
  /** The index of the entry it is about: in `expectedToolCalls`, or in `forbiddenToolCalls` for `forbidden`; null for the others. */
  expectation: z.number().int().nonnegative().nullable(),
  /** The step it points at (the closest call, the unexpected or forbidden one, ...), or null (a call never made). */
  step: z.number().int().positive().nullable(),
  /** `expected get_weather(city="London"), got get_weather(city="Paris") at step 2`. */
  message: z.string(),
}));
/** One failure of the reliability check. */
export type TrajectoryFailure = z.infer<typeof TrajectoryFailureSchema>;

/** The run's tool calls as the reliability check graded them, step by step (a viewer marks the failed steps). */
export const TrajectorySchema = lazySchema(() => z.object({
  /** The order mode the expected calls were compared in. */
  order: z.enum(["any", "in_order", "exact"]),
  steps: z.array(TrajectoryStepSchema),
  /** Every failure, in the order the reason lists them; empty when the check passed. */
  failures: z.array(TrajectoryFailureSchema),
  /**
   * Set when the lists were cut to cross to another process (shared/wire/fit-result.ts): how many
   * steps and failures there were; the lists keep the first ones. Absent or null when whole.
   */
  cut: z.object({ steps: z.number().int().nonnegative(), failures: z.number().int().nonnegative() }).nullish(),
}));
/** The run's tool calls, step by step, with the check's failures. */
export type TrajectoryData = z.infer<typeof TrajectorySchema>;

/** The reliability check's details. */
export const ReliabilityDetailsSchema = lazySchema(() => z.object({
  passed: z.boolean(),
  passedToolCalls: z.array(z.string()),
  failedToolCalls: z.array(z.string()),
  additionalToolCalls: z.array(z.string()),
  missingToolCalls: z.array(z.string()),
  /**
   * Why it passed or failed, one line (`expected get_weather(city="London"), got
   * get_weather(city="Paris") at step 2`). Optional: results from an older evalfleet still parse.
   */
  reason: z.string().nullish(),
  /** The graded calls step by step and the failures (the JSON report's `trajectory`). Optional, as `reason`. */
  trajectory: TrajectorySchema.nullish(),
}));
/** Reliability details kept on the result (the JSON report carries `reason` and `trajectory` of them, not the lists). */
export type ReliabilityDetails = z.infer<typeof ReliabilityDetailsSchema>;

/** The verdict of one data-driven check. */
export const ExpectationVerdictSchema = lazySchema(() => z.object({
  passed: z.boolean(),
  /** Why it passed or failed, one line (`missing member tool calls: multiply (members ran: add)`). */
  reason: z.string(),
}));
/** The verdict of one data-driven check (`expected_output`, `expected_agent_tools`, `expected_knowledge_sources`). */
export type ExpectationVerdict = z.infer<typeof ExpectationVerdictSchema>;

/** The verdict of one named evaluation function (Exulu's `eval_functions`, a suite's `evalFunctions`). */
export const EvalFunctionVerdictSchema = lazySchema(() => ExpectationVerdictSchema.extend({
  /** The function's name, as the suite registers it. */
  name: z.string(),
  /** The scorer's value, in [0, 1]. */
  value: z.number().min(0).max(1),
}));
/** The verdict of one named evaluation function. */
export type EvalFunctionVerdict = z.infer<typeof EvalFunctionVerdictSchema>;

/** The data-driven checks a case ran. */
export const ExpectationsSchema = lazySchema(() => z.object({
  /** `method` is the scoring method used (`exact`, `contains`, `regex`, `json`, `numeric`, `judge`). */
  expectedOutput: ExpectationVerdictSchema.extend({ method: z.string() }).optional(),
  expectedAgentTools: ExpectationVerdictSchema.optional(),
  expectedKnowledgeSources: ExpectationVerdictSchema.optional(),
  /** The named evaluation functions that gave a verdict, in the order they ran (the case's, then the run's). */
  evalFunctions: z.array(EvalFunctionVerdictSchema).readonly().optional(),
}));
/** The data-driven checks a case ran; a check that is off is absent. */
export type ExpectationsData = z.infer<typeof ExpectationsSchema>;

/** Tokens and cost of one side of a case (its judge's calls). */
export const ModelUsageSchema = lazySchema(() => z.object({
  inputTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
  totalTokens: z.number().nullable(),
  /** US dollars; null when unknown (a model missing from the price table). */
  costUsd: z.number().nullable(),
  /** The model that used them, when known (what the price table is looked up by). */
  model: z.string().nullish(),
}));
/** Tokens and cost of one side of a case. */
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

/**
 * Tokens and cost of one case: the agent run's (the top-level fields, shared/case/usage.ts reads them
 * from the agent's metrics) and its judge calls' (`judge`: the criteria judge and the
 * expected-output judge). Costs are filled in from the price table (shared/providers/prices.ts) where the
 * results are collected.
 */
export const CaseUsageSchema = lazySchema(() => ModelUsageSchema.extend({
  /** The judge calls of the case, when any judge ran. Optional: results from an older evalfleet still parse. */
  judge: ModelUsageSchema.nullish(),
}));
/** Tokens and cost of one case's agent run, as the agent reported it; a field the agent did not report is `null`. */
export type CaseUsage = z.infer<typeof CaseUsageSchema>;

/**
 * How long each phase of a case took, in seconds (rounded to milliseconds): `setup` (its hook),
 * `run` (the agent or team, until its final output), `checks` (judge, reliability, scorer,
 * expectations), `teardown` (its hook). A phase that did not run is 0.
 */
export const PhaseSecondsSchema = lazySchema(() => z.object({
  setup: z.number().nonnegative(),
  run: z.number().nonnegative(),
  checks: z.number().nonnegative(),
  teardown: z.number().nonnegative(),
}));
/** Seconds per phase of one case (the JSON report's `phase_seconds`). */
export type PhaseSeconds = z.infer<typeof PhaseSecondsSchema>;

/**
 * What one run of a case observed and decided: the fields a case result and each of its repeats
 * both have.
 */
const RunFieldsSchema = lazySchema(() => z.object({
  sessionId: z.string(),
  /** Seconds, rounded to milliseconds; covers setup, the run, checks and teardown. */
  durationSeconds: z.number(),
  judgePassed: z.boolean().nullable(),
  judgeReason: z.string().nullable(),
  /** 1-10 in numeric mode, `null` in binary mode. */
  judgeScore: z.number().nullable(),
  reliabilityPassed: z.boolean().nullable(),
  output: z.string().nullable(),
  toolsCalled: z.array(z.string()).readonly(),
  timedOut: z.boolean(),
  skipped: z.boolean(),
  /** Every error of the run joined with `"; "`, each under its prefix (`agent:`, `judge:`, ...). */
  error: z.string().nullable(),
  /**
   * The cause of the errors recorded while it ran (shared/result/error-kind.ts: the winner of
   * `infra` < `check` < `agent`); `null` without errors. The JSON report's `error_kind` is
   * computed from it (`classifyCase`). Optional: results from an older evalfleet still parse.
   */
  errorKind: ErrorKindSchema.nullish(),
  /** How many times the case was started (more than 1 after a thread crash or redelivery). */
  attempts: z.number().int().nonnegative(),
  /** Which worker ran it: `local`, `thread-<id>`, or a worker process id in distributed mode. */
  worker: z.string().nullable(),
}));

/** One run of a repeated case; its score leaves out the scorer's `detail`. */
export const RepeatResultSchema = lazySchema(() => z.object({
  /** 1-based. */
  repeat: z.number().int().positive(),
  passed: z.boolean(),
  ...RunFieldsSchema.shape,
  score: ScoreDataSchema.omit({ detail: true }).nullable(),
  expectations: ExpectationsSchema.nullable(),
  /** The reliability check's reason for this run, when it ran. Optional: results from an older evalfleet still parse. */
  reliabilityReason: z.string().nullish(),
}));
/** One run of a repeated case (`--repeat N`): its own session, evidence and verdicts. */
export type RepeatResultData = z.infer<typeof RepeatResultSchema>;

/**
 * Plain-data form of a case result. `tags` and `toolsCalled` are read-only lists (a parsed
 * message freezes them); `response` is the raw final output, taken as it comes (a thread or a
 * worker reduces it to plain data first, worker/pool/result-wire.ts). `passed` is not data: the
 * class computes it (shared/result/result.ts).
 */
export const CaseResultDataSchema = lazySchema(() => z.object({
  name: z.string(),
  tags: z.array(z.string()).readonly(),
  agentId: z.string().nullable(),
  teamId: z.string().nullable(),
  ...RunFieldsSchema.shape,
  /** The raw final output (left out of the JSON report). */
  response: z.custom<RunOutput>().nullable(),
  score: ScoreDataSchema.nullable(),
  /** Position of the case in its suite (declaration order). */
  index: z.number().int().nonnegative(),
  reliability: ReliabilityDetailsSchema.nullable(),
  /**
   * Verdicts of the data-driven checks; `null` when the case has none (or they did not run).
   * Optional, so results from an evalfleet without data-driven checks still parse.
   */
  expectations: ExpectationsSchema.nullish(),
  /** With `--repeat N` (N > 1): every run of the case, in order; `null` otherwise. */
  repeats: z.array(RepeatResultSchema).readonly().nullish(),
  /**
   * Tokens and cost of the agent run, when the agent reports `metrics` (recorded by the results
   * store, not in the JSON report; the raw response stays on the worker). Optional, as `expectations`.
   */
  usage: CaseUsageSchema.nullish(),
  /**
   * The status of the agent's final output (`completed`, `cancelled`, `paused`, ...), `null` when
   * there was none. The raw response stays on the worker, so this is how the coordinator learns that
   * a run ended `cancelled` and stops the suite (spec M1). Optional, as `expectations`.
   */
  runStatus: z.string().nullish(),
  /** The case's `id` (a dataset row's, an Exulu test case id), recorded by the results store. Optional, as `expectations`. */
  caseId: z.string().nullish(),
  /**
   * The case's `metadata` (a row's, with Exulu's `createdAt`/`updatedAt`/`RBAC` under `exulu`), recorded by
   * the results store, not in the JSON report and never graded. Set once the case's row is read. Optional.
   */
  metadata: z.record(z.string(), z.unknown()).nullish(),
  /**
   * Seconds per phase, so blame can be checked and a report can draw a timeline (JSON
   * `phase_seconds`). Optional, as `expectations`: results from an older evalfleet still parse.
   */
  phaseSeconds: PhaseSecondsSchema.nullish(),
  /**
   * The case's full run output, bounded (shared/wire/transcript.ts): captured where the agent ran
   * only when the run is recorded (`--db`), stored by the results store, never in the JSON report.
   * The coordinator drops it once it is queued for the store. Optional, as `expectations`.
   */
  transcript: TranscriptSchema.nullish(),
  /**
   * How the response cache (`--cache`) answered the case's model calls: `hits` without a call,
   * `misses` with one (then stored). Null when the cache was off or no call went through it. Optional.
   */
  modelCache: z.object({ hits: z.number().int().nonnegative(), misses: z.number().int().nonnegative() }).nullish(),
  /**
   * The pass rule of a repeated case (0-1): it passes when at least this fraction of its trials
   * pass (`Case({ passRate })`, else `--case-pass-rate`, else the suite's `casePassRate`, else 1).
   * Set where results are collected; null or absent: 1, every trial (and a result of an older evalfleet).
   */
  casePassRate: z.number().min(0).max(1).nullish(),
  /**
   * Adaptive repeats (`--repeat MIN..MAX`): whether the case's stopping interval cleared its pass
   * rule (`decided`), and why it stopped (shared/trials/adaptive-repeats.ts). Null or absent:
   * not an adaptive run.
   */
  adaptive: z.object({ decided: z.boolean(), stop: z.enum(["cleared", "settled", "max", "stopped"]) }).nullish(),
}));
/** The fields of a `CaseResult`, as plain data (what crosses thread and process boundaries). */
export type CaseResultData = z.infer<typeof CaseResultDataSchema>;

/** The part of a result a thread streams while the case runs (small: no raw response). */
export const CaseCommitSchema = lazySchema(() => CaseResultDataSchema.pick({
  output: true,
  toolsCalled: true,
  error: true,
  errorKind: true,
  judgePassed: true,
  judgeReason: true,
  judgeScore: true,
  reliabilityPassed: true,
  score: true,
}));
export type CaseCommit = z.infer<typeof CaseCommitSchema>;
