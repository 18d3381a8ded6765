import pLimit from "p-limit";
import type { Agent, CaseInput, RunMetrics } from "../../shared/case/agent.ts";
import type { JudgeMode } from "../../shared/case/case.ts";
import { JUDGE_PASS_THRESHOLD, type JudgeModel, type JudgeUsage } from "../../shared/case/judge-model.ts";
import { ConfigError, ErrorCode, describeError } from "../../shared/errors.ts";
import { createLogger, silentLogger, type Logger } from "../../shared/logger.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { judgeCallTimeoutSeconds } from "./criteria-grader-config.ts";
import { buildJudgeRequest, inputAsText, runJudge } from "../runtime/checks/judge.ts";
import { contentAsString } from "../runtime/evidence.ts";
import type { PostHookRun } from "../adapters/post-hooks.ts";
import { agentAsJudgeModel } from "./agent-judge.ts";
import { defaultJudgeModel } from "./default-judge.ts";

/**
 * The grading core of AgentAsJudgeEval (coordinator/judge/agent-as-judge.ts, the public class):
 * grades input/output pairs against criteria with an LLM judge, a few at a time, and totals the
 * judge's token usage. The prompt, the untrusted-output fence and the answer validation are the
 * judge check's (worker/runtime/checks/judge.ts), so a standalone evaluation and a suite case
 * grade alike. It knows nothing of the results store, the console or files: the public class
 * records, prints and saves around it.
 */

/** One graded input/output pair. */
export interface AgentAsJudgeEvaluation {
  input: string;
  output: string;
  criteria: string;
  /** 1-10 in numeric mode, `null` in binary mode. */
  score: number | null;
  reason: string;
  /** Numeric mode: `score >= threshold`. */
  passed: boolean;
}

/** An evaluation that produced no verdict (the judge call failed or its answer was unusable). */
export interface AgentAsJudgeFailure {
  input: string;
  output: string;
  /** Why, in one line. */
  reason: string;
}

/** What grading one pair gives: a verdict, or why there is none. */
export type GradeOutcome = { evaluation: AgentAsJudgeEvaluation } | { failure: AgentAsJudgeFailure };

/** The options of AgentAsJudgeEval that grading reads (see `AgentAsJudgeEvalOptions` for the rest). */
export interface CriteriaGraderOptions {
  /** What the judge grades against. Default `""`. */
  criteria?: string;
  /** `"binary"` (default, pass/fail) or `"numeric"` (a 1-10 score that passes at `>= threshold`). */
  scoringStrategy?: JudgeMode | "binary" | "numeric";
  /** 1-10, read in numeric mode. Default 7. */
  threshold?: number;
  /** Called with each failed evaluation (awaited when it returns a promise); its errors are logged, never thrown. */
  onFail?: ((evaluation: AgentAsJudgeEvaluation) => unknown) | null;
  /** Appended to the judge's instructions: a text, or a list of bullet items. */
  additionalGuidelines?: string | readonly string[] | null;
  /** The evaluation's name (logs, `{name}` in `filePathToSaveResults`). */
  name?: string | null;
  /** The judge model. Default: the OpenAI-compatible judge from the environment (`EVALFLEET_JUDGE_MODEL`, `OPENAI_*`). */
  model?: JudgeModel | null;
  /** A custom judge: a judge model, or any evalfleet agent (asked with the evaluator prompt and the answer's schema). Wins over `model`. */
  evaluatorAgent?: JudgeModel | Agent | null;
  /** Bound on each judge call, in seconds. Default 120 (criteria-grader-config.ts). */
  timeoutSeconds?: number;
  /** Evaluations of a batch in flight at once; results keep the batch order. Default 1. */
  concurrency?: number;
  /** Where failed evaluations and callback errors are logged (warn). Default: silent. */
  logger?: Logger | null;
  /**
   * Logs each judge call at debug level: the request (criteria, mode, the input and output
   * graded), the judge's raw answer, the verdict or why there is none, the time taken. To
   * `logger` (at debug, whatever its level), else to standard error. Default false.
   */
  debugMode?: boolean;
}


/** A pair to grade, as `run()` receives it. */
export interface GradePair {
  input: CaseInput;
  output: unknown;
}

/** The outcome of grading a batch. */
export interface GradedBatch {
  /** One per pair, in batch order. */
  outcomes: GradeOutcome[];
  results: AgentAsJudgeEvaluation[];
  failures: AgentAsJudgeFailure[];
  /** The judge's token usage over the batch. */
  usage: Required<JudgeUsage>;
}

/** Grades pairs against criteria; see the module comment. */
export class CriteriaGrader {
  readonly criteria: string;
  readonly scoringStrategy: JudgeMode;
  readonly threshold: number;
  readonly name: string | null;
  readonly additionalGuidelines: string | readonly string[] | null;
  /** Seconds. */
  readonly timeoutSeconds: number;
  readonly #o: CriteriaGraderOptions;
  readonly #logger: Logger;
  /** The debug log (`debugMode`), or null. */
  readonly #debug: Logger | null;

  /** Validates the grading options; a bad one throws a `ConfigError` naming it, prefixed with `who`. */
  constructor(options: CriteriaGraderOptions, who = "AgentAsJudgeEval") {
    const bad = (field: string, rule: string, value: unknown): never => {
      throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} ${rule}, got ${pyRepr(value)}`, { field });
    };
    const criteria = options.criteria ?? "";
    if (typeof criteria !== "string") bad("criteria", "must be a string", criteria);
    const strategy = options.scoringStrategy ?? "binary";
    if (strategy !== "binary" && strategy !== "numeric") bad("scoringStrategy", 'must be "binary" or "numeric"', strategy);
    const threshold = options.threshold ?? JUDGE_PASS_THRESHOLD;
    if (typeof threshold !== "number" || !Number.isFinite(threshold)) bad("threshold", "must be a number from 1 to 10", threshold);
    // Agno's rule, and its message: only numeric mode reads the threshold.
    if (strategy === "numeric" && !(threshold >= 1 && threshold <= 10)) {
      throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: threshold must be between 1 and 10, got ${threshold}`, { field: "threshold" });
    }
    const g = options.additionalGuidelines ?? null;
    if (g !== null && typeof g !== "string" && !(Array.isArray(g) && g.every((x) => typeof x === "string"))) bad("additionalGuidelines", "must be a string or a list of strings", g);
    if (options.onFail !== undefined && options.onFail !== null && typeof options.onFail !== "function") bad("onFail", "must be a function", options.onFail);
    if (options.name !== undefined && options.name !== null && typeof options.name !== "string") bad("name", "must be a string", options.name);
    if (options.model !== undefined && options.model !== null && typeof (options.model as JudgeModel).judge !== "function") bad("model", "must be a judge model (an object with judge())", options.model);
    const ev = options.evaluatorAgent;
    if (ev !== undefined && ev !== null && typeof (ev as JudgeModel).judge !== "function" && typeof (ev as Agent).run !== "function") {
      bad("evaluatorAgent", "must be a judge model (judge()) or an agent (run())", ev);
    }
    if (options.timeoutSeconds !== undefined && !(typeof options.timeoutSeconds === "number" && options.timeoutSeconds > 0)) bad("timeoutSeconds", "must be a number of seconds > 0", options.timeoutSeconds);
    if (options.concurrency !== undefined && !(Number.isInteger(options.concurrency) && options.concurrency >= 1)) bad("concurrency", "must be a whole number >= 1", options.concurrency);
    if (options.debugMode !== undefined && typeof options.debugMode !== "boolean") bad("debugMode", "must be a boolean", options.debugMode);

    this.criteria = criteria;
    this.scoringStrategy = strategy;
    this.threshold = threshold;
    this.name = options.name ?? null;
    this.additionalGuidelines = g;
    this.timeoutSeconds = judgeCallTimeoutSeconds(options.timeoutSeconds);
    this.#o = options;
    this.#logger = options.logger ?? silentLogger();
    // Debug mode: the given logger lowered to debug for this evaluation only, else one on standard error.
    this.#debug = options.debugMode
      ? options.logger
        ? options.logger.child({ eval: this.name }, { level: "debug" })
        : createLogger({ level: "debug", name: "evalfleet.agent-as-judge" }).child({ eval: this.name })
      : null;
  }

  /** The judge: `evaluatorAgent`, else `model`, else the default judge; throws `CONFIG_MISSING` when there is none. */
  judgeModel(): JudgeModel {
    const ev = this.#o.evaluatorAgent;
    if (ev) return typeof (ev as JudgeModel).judge === "function" ? (ev as JudgeModel) : agentAsJudgeModel(ev as Agent);
    const model = this.#o.model ?? defaultJudgeModel();
    if (!model) {
      throw new ConfigError(ErrorCode.ConfigMissing, "AgentAsJudgeEval: no judge model configured: set OPENAI_API_KEY or pass model", { field: "model" });
    }
    return model;
  }

  /**
   * Grades `pairs` with `judge`, `concurrency` at a time, in batch order. An evaluation without a
   * verdict is logged and listed in `failures`; the batch throws only when `signal` fires. The
   * judge's usage is totalled, and added to `runMetrics` too when given (a parent run's metrics).
   */
  async grade(judge: JudgeModel, pairs: readonly GradePair[], options: { signal?: AbortSignal | null; runMetrics?: RunMetrics | null } = {}): Promise<GradedBatch> {
    const usage: Required<JudgeUsage> = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const onUsage = (u: JudgeUsage): void => {
      usage.inputTokens += u.inputTokens ?? 0;
      usage.outputTokens += u.outputTokens ?? 0;
      usage.totalTokens += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
      const m = options.runMetrics;
      if (m) {
        m.inputTokens = (m.inputTokens ?? 0) + (u.inputTokens ?? 0);
        m.outputTokens = (m.outputTokens ?? 0) + (u.outputTokens ?? 0);
        m.totalTokens = (m.totalTokens ?? 0) + (u.totalTokens ?? 0);
      }
    };
    const limit = pLimit(this.#o.concurrency ?? 1);
    const signal = options.signal ?? undefined;
    const outcomes = await Promise.all(pairs.map((p) => limit(() => this.#evaluate(judge, p.input, contentAsString(p.output), onUsage, signal))));
    const results = outcomes.filter((o): o is { evaluation: AgentAsJudgeEvaluation } => "evaluation" in o).map((o) => o.evaluation);
    const failures = outcomes.filter((o): o is { failure: AgentAsJudgeFailure } => "failure" in o).map((o) => o.failure);
    return { outcomes, results, failures, usage };
  }

  async #evaluate(judge: JudgeModel, input: CaseInput, output: string, onUsage: (u: JudgeUsage) => void, signal: AbortSignal | undefined): Promise<GradeOutcome> {
    const inputText = inputAsText(input);
    const timeoutMs = this.timeoutSeconds * 1000;
    const bound = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const request = buildJudgeRequest({
      criteria: this.criteria,
      mode: this.scoringStrategy,
      input,
      output,
      ...(this.additionalGuidelines ? { additionalGuidelines: this.additionalGuidelines } : {}),
    });
    const debug = this.#debug;
    const started = performance.now();
    debug?.debug({ criteria: this.criteria, mode: this.scoringStrategy, threshold: this.threshold, model: judge.id ?? null, input: inputText, output }, "judge request");
    const traced: JudgeModel = debug
      ? {
          id: judge.id,
          judge: async (req, opts) => {
            const answer = await judge.judge(req, opts);
            debug.debug({ answer }, "judge answer");
            return answer;
          },
        }
      : judge;
    const outcome = await runJudge(traced, request, this.scoringStrategy, this.threshold, bound, { deadline: Date.now() + timeoutMs, onUsage });
    debug?.debug({ ...outcome, ms: Math.round(performance.now() - started) }, "problem" in outcome ? "judge gave no verdict" : "judge verdict");
    if (signal?.aborted) throw signal.reason;
    if ("problem" in outcome) {
      this.#logger.warn({ eval: this.name, problem: outcome.problem }, "evaluation failed: no verdict");
      return { failure: { input: inputText, output, reason: outcome.problem } };
    }
    const v = outcome.verdict;
    const evaluation: AgentAsJudgeEvaluation = { input: inputText, output, criteria: this.criteria, score: v.score, reason: v.reason ?? "", passed: v.passed };
    if (!evaluation.passed && this.#o.onFail) {
      try {
        await this.#o.onFail(evaluation);
      } catch (err) {
        this.#logger.warn({ eval: this.name, error: describeError(err) }, "onFail callback error");
      }
    }
    return { evaluation };
  }
}

/**
 * The pairs of one `run()`: one pair (`input` and `output`) or a batch (`cases`), checked; a bad
 * argument throws a `ConfigError` naming it, prefixed with `who`.
 */
export function pairsToGrade(
  who: string,
  args: { input?: CaseInput | null; output?: unknown; cases?: ReadonlyArray<{ input: CaseInput; output: unknown }> | null },
): GradePair[] {
  if (args === null || typeof args !== "object") throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: arguments must be an object, got ${pyRepr(args)}`, { field: "args" });
  const single = (args.input !== undefined && args.input !== null) || (args.output !== undefined && args.output !== null);
  const batch = args.cases !== undefined && args.cases !== null;
  if (single && batch) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: provide either (input, output) OR cases, not both`, { field: "cases" });
  if (!single && !batch) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: must provide either (input, output) OR cases`, { field: "input" });
  if (batch) {
    if (!Array.isArray(args.cases)) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: cases must be a list of {input, output}, got ${pyRepr(args.cases)}`, { field: "cases" });
    return args.cases.map((c, i) => {
      if (!c || typeof c !== "object" || c.input === undefined || c.input === null || c.output === undefined || c.output === null) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: cases[${i}] needs both input and output, got ${pyRepr(c)}`, { field: `cases[${i}]` });
      }
      return checkInput(who, `cases[${i}].input`, c);
    });
  }
  if (args.input === undefined || args.input === null || args.output === undefined || args.output === null) {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: both input and output are required for a single evaluation`, { field: args.input == null ? "input" : "output" });
  }
  return [checkInput(who, "input", { input: args.input, output: args.output })];
}

/** A live run's input and output as the pair a post-hook grades (the input as text, the output's content as a string). */
export function pairOfHookRun(run: PostHookRun): { input: string; output: string } {
  return { input: inputAsText(run.input), output: contentAsString(run.output.content) };
}

function checkInput(who: string, field: string, pair: GradePair): GradePair {
  const ok = typeof pair.input === "string" || (Array.isArray(pair.input) && pair.input.every((m) => m && typeof m.role === "string" && typeof m.content === "string"));
  if (!ok) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} must be a string or a list of {role, content} messages, got ${pyRepr(pair.input)}`, { field });
  return pair;
}
