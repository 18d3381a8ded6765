import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import pLimit from "p-limit";
import type { Agent, CaseInput, RunMetrics } from "../shared/agent.ts";
import type { JudgeMode } from "../shared/case.ts";
import type { JudgeModel, JudgeUsage } from "../shared/judge-model.ts";
import { ConfigError, ErrorCode, describeError, errorMessage } from "../shared/errors.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { pyRepr, round3 } from "../shared/py-format.ts";
import { buildJudgeRequest, inputAsText, runJudge } from "../worker/checks/judge.ts";
import { contentAsString } from "../worker/evidence.ts";
import { agentAsJudgeModel } from "../worker/models/agent-judge.ts";
import { defaultJudgeModel } from "../worker/models/default-judge.ts";
import type { PostHook, PostHookRun } from "../worker/adapters/post-hooks.ts";
import { safeText } from "./report/console.ts";
import { JudgeStore } from "./store/judge-recording.ts";
import type { DbOption } from "./store/record-run.ts";
import { ResultsStore } from "./store/store.ts";
import { tableClass } from "./report/lazy-deps.ts";

/**
 * AgentAsJudgeEval, standalone (seed 003): grade recorded input/output pairs against criteria
 * with an LLM judge, or attach it to an agent as a post-hook (`withPostHooks`) to grade live
 * runs. The prompt, the untrusted-output fence and the answer validation are the judge check's
 * (worker/checks/judge.ts), so a standalone evaluation and a suite case grade alike.
 *
 * Differences from Agno: `run()` is asynchronous (Agno's `arun`); `db` is evalfleet's results
 * store (a URL or a `ResultsStore`, see store/judge-recording.ts), not an Agno database object;
 * `telemetry` is accepted and ignored (evalfleet sends none); `runInBackground` works wherever the
 * hooked agent runs, not only under AgentOS.
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

/** Options of {@link AgentAsJudgeEval}, Agno's parameters in camelCase plus evalfleet's own. */
export interface AgentAsJudgeEvalOptions {
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
  /** Print the summary table after each run. Default false. */
  printSummary?: boolean;
  /** Print each evaluation after each run. Default false. */
  printResults?: boolean;
  /** Write each run's result here as JSON (indent 4); `{name}` and `{run_id}` are replaced. Parent folders are created. */
  filePathToSaveResults?: string | null;
  /** Accepted for compatibility; evalfleet sends no telemetry whatever its value. */
  telemetry?: boolean;
  /** As a post-hook: grade in the background without holding the agent's run. Default false. */
  runInBackground?: boolean;
  /** Where printing goes. Default `process.stdout`. */
  output?: Writable | null;
  /** Bound on each judge call, in seconds. Default 120. */
  timeoutSeconds?: number;
  /** Evaluations of a batch in flight at once; results keep the batch order. Default 1. */
  concurrency?: number;
  /** Where failed evaluations and callback errors are logged (warn). Default: silent. */
  logger?: Logger | null;
  /**
   * Record each run in a results store: a URL (`sqlite:PATH`, `postgres://...`), opened on the
   * first run before any judge call, or a `ResultsStore` you opened. A failed or slow write is a
   * warning (the logger's, else one line on stderr), never a failed evaluation. Default: none.
   */
  db?: DbOption | null;
  /** Bound on connecting to the store and on recording a run, in seconds. Default 10. */
  dbTimeout?: number;
}

/** Arguments of {@link AgentAsJudgeEval.run}: one pair, or a batch. */
export interface AgentAsJudgeRunArgs {
  input?: CaseInput | null;
  output?: unknown;
  cases?: ReadonlyArray<{ input: CaseInput; output: unknown }> | null;
  /** Print the summary for this run (as well as when the constructor asked). */
  printSummary?: boolean;
  printResults?: boolean;
  /** Adds the judge's token usage to this object (a parent run's metrics). */
  runMetrics?: RunMetrics | null;
  /** Cancels the run. */
  signal?: AbortSignal | null;
}

const OPTION_KEYS = new Set([
  "criteria",
  "scoringStrategy",
  "threshold",
  "onFail",
  "additionalGuidelines",
  "name",
  "model",
  "evaluatorAgent",
  "printSummary",
  "printResults",
  "filePathToSaveResults",
  "telemetry",
  "runInBackground",
  "output",
  "timeoutSeconds",
  "concurrency",
  "logger",
  "db",
  "dbTimeout",
  "showSpinner",
  "debugMode",
]);

/** The aggregate of one {@link AgentAsJudgeEval.run}. */
export class AgentAsJudgeResult {
  readonly runId: string;
  readonly results: readonly AgentAsJudgeEvaluation[];
  /** Mean score; `null` in binary mode or with no results. */
  readonly avgScore: number | null;
  readonly minScore: number | null;
  readonly maxScore: number | null;
  /** Sample standard deviation; 0 for one score; `null` in binary mode or with no results. */
  readonly stdDevScore: number | null;
  /** Percentage of results that passed, 0-100 (0 with no results). */
  readonly passRate: number;
  /** Evaluations without a verdict (evalfleet's addition: Agno only logs them). */
  readonly failures: readonly AgentAsJudgeFailure[];
  /** The judge's token usage over the run. */
  readonly usage: Readonly<Required<JudgeUsage>>;

  constructor(runId: string, results: readonly AgentAsJudgeEvaluation[], failures: readonly AgentAsJudgeFailure[] = [], usage: Required<JudgeUsage> = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }) {
    this.runId = runId;
    this.results = Object.freeze([...results]);
    this.failures = Object.freeze([...failures]);
    this.usage = Object.freeze({ ...usage });
    this.passRate = results.length > 0 ? (results.filter((r) => r.passed).length / results.length) * 100 : 0;
    const scores = results.map((r) => r.score).filter((s): s is number => s !== null);
    if (scores.length > 0) {
      const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
      this.avgScore = mean;
      this.minScore = Math.min(...scores);
      this.maxScore = Math.max(...scores);
      this.stdDevScore = scores.length > 1 ? Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / (scores.length - 1)) : 0;
    } else {
      this.avgScore = this.minScore = this.maxScore = this.stdDevScore = null;
    }
  }

  /** Agno's `asdict` form, snake_case keys (what `filePathToSaveResults` writes). */
  toJSON(): Record<string, unknown> {
    return {
      run_id: this.runId,
      results: this.results.map((r) => ({ input: r.input, output: r.output, criteria: r.criteria, score: r.score, reason: r.reason, passed: r.passed })),
      avg_score: this.avgScore,
      min_score: this.minScore,
      max_score: this.maxScore,
      std_dev_score: this.stdDevScore,
      pass_rate: this.passRate,
    };
  }

  /** Prints the summary table (evaluations, pass rate, score statistics in numeric mode). */
  printSummary(out: Writable = process.stdout): void {
    const Table = tableClass();
    const table = new Table({ style: { head: [], border: [] }, colWidths: [26, 22] });
    const n = this.results.length;
    table.push(["Number of Evaluations", String(n)], ["Pass Rate", `${this.passRate.toFixed(1)}%`]);
    if (this.avgScore !== null) {
      if (n === 1) table.push(["Score", `${this.avgScore.toFixed(2)}/10`]);
      else {
        table.push(["Average Score", `${this.avgScore.toFixed(2)}/10`], ["Min Score", `${this.minScore!.toFixed(2)}/10`], ["Max Score", `${this.maxScore!.toFixed(2)}/10`]);
        if (this.stdDevScore) table.push(["Std Deviation", this.stdDevScore.toFixed(2)]);
      }
    }
    if (this.failures.length > 0) table.push(["No Verdict", String(this.failures.length)]);
    out.write(`Agent As Judge Evaluation Summary\n${table.toString()}\n`);
  }

  /** Prints one table per evaluation (input and output cut at 200 characters). */
  printResults(out: Writable = process.stdout): void {
    const cut = (s: string): string => safeText(s.length > 200 ? `${s.slice(0, 200)}...` : s);
    const Table = tableClass();
    for (const r of this.results) {
      const table = new Table({ style: { head: [], border: [] }, colWidths: [10, 70], wordWrap: true });
      table.push(["Input", cut(r.input)], ["Output", cut(r.output)]);
      if (r.score !== null) table.push(["Score", `${r.score}/10`]);
      table.push(["Status", r.passed ? "PASSED" : "FAILED"], ["Reason", safeText(r.reason)]);
      out.write(`Agent As Judge Evaluation\n${table.toString()}\n`);
    }
  }
}

/** Grades outputs against criteria with an LLM judge; see the module comment. */
export class AgentAsJudgeEval implements PostHook {
  readonly criteria: string;
  readonly scoringStrategy: JudgeMode;
  readonly threshold: number;
  readonly name: string | null;
  readonly additionalGuidelines: string | readonly string[] | null;
  readonly runInBackground: boolean;
  /** The result of every run made as a post-hook, in completion order. */
  readonly hookResults: AgentAsJudgeResult[] = [];
  readonly #o: AgentAsJudgeEvalOptions;
  readonly #logger: Logger;
  readonly #store: JudgeStore | null;

  constructor(options: AgentAsJudgeEvalOptions = {}) {
    const who = "AgentAsJudgeEval";
    const bad = (field: string, rule: string, value: unknown): never => {
      throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} ${rule}, got ${pyRepr(value)}`, { field });
    };
    if (options === null || typeof options !== "object") bad("options", "must be an object", options);
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.has(key)) {
        const camel = key.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
        throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: unknown option '${key}'${camel !== key && OPTION_KEYS.has(camel) ? ` (did you mean ${camel}?)` : ""}`, { field: key });
      }
    }
    const criteria = options.criteria ?? "";
    if (typeof criteria !== "string") bad("criteria", "must be a string", criteria);
    const strategy = options.scoringStrategy ?? "binary";
    if (strategy !== "binary" && strategy !== "numeric") bad("scoringStrategy", 'must be "binary" or "numeric"', strategy);
    const threshold = options.threshold ?? 7;
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
    for (const flag of ["printSummary", "printResults", "telemetry", "runInBackground"] as const) {
      if (options[flag] !== undefined && typeof options[flag] !== "boolean") bad(flag, "must be a boolean", options[flag]);
    }
    if (options.filePathToSaveResults !== undefined && options.filePathToSaveResults !== null && (typeof options.filePathToSaveResults !== "string" || !options.filePathToSaveResults)) {
      bad("filePathToSaveResults", "must be a non-empty string", options.filePathToSaveResults);
    }
    if (options.timeoutSeconds !== undefined && !(typeof options.timeoutSeconds === "number" && options.timeoutSeconds > 0)) bad("timeoutSeconds", "must be a number of seconds > 0", options.timeoutSeconds);
    if (options.concurrency !== undefined && !(Number.isInteger(options.concurrency) && options.concurrency >= 1)) bad("concurrency", "must be a whole number >= 1", options.concurrency);
    if (options.output !== undefined && options.output !== null && typeof (options.output as Writable).write !== "function") bad("output", "must be a writable stream", options.output);

    this.criteria = criteria;
    this.scoringStrategy = strategy;
    this.threshold = threshold;
    this.name = options.name ?? null;
    this.additionalGuidelines = g;
    this.runInBackground = options.runInBackground ?? false;
    this.#o = options;
    this.#logger = options.logger ?? silentLogger();
    const db = options.db ?? null;
    if (db !== null && typeof db !== "string" && !(db instanceof ResultsStore)) bad("db", "must be a store URL (sqlite:PATH, postgres://...) or a ResultsStore", db);
    if (options.dbTimeout !== undefined && !(typeof options.dbTimeout === "number" && options.dbTimeout > 0)) bad("dbTimeout", "must be a number of seconds > 0", options.dbTimeout);
    // A bad URL is refused here, before anything is graded.
    this.#store = db
      ? new JudgeStore(db, {
          timeoutSeconds: options.dbTimeout,
          onWarning: (m) => (options.logger ? options.logger.warn({ eval: this.name }, m) : void process.stderr.write(`warning: ${safeText(m)}\n`)),
        })
      : null;
  }

  /** Closes a results store this evaluation opened from a URL. */
  async close(): Promise<void> {
    await this.#store?.close();
  }

  /**
   * Grades one pair (`{ input, output }`) or a batch (`{ cases: [{ input, output }] }`).
   * Evaluations that get no verdict are logged and listed in `failures`; the run itself throws
   * only for bad arguments or when no judge model is configured.
   */
  async run(args: AgentAsJudgeRunArgs): Promise<AgentAsJudgeResult> {
    const who = "AgentAsJudgeEval.run";
    if (args === null || typeof args !== "object") throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: arguments must be an object, got ${pyRepr(args)}`, { field: "args" });
    const single = (args.input !== undefined && args.input !== null) || (args.output !== undefined && args.output !== null);
    const batch = args.cases !== undefined && args.cases !== null;
    if (single && batch) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: provide either (input, output) OR cases, not both`, { field: "cases" });
    if (!single && !batch) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: must provide either (input, output) OR cases`, { field: "input" });
    let pairs: Array<{ input: CaseInput; output: unknown }>;
    if (batch) {
      if (!Array.isArray(args.cases)) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: cases must be a list of {input, output}, got ${pyRepr(args.cases)}`, { field: "cases" });
      pairs = args.cases.map((c, i) => {
        if (!c || typeof c !== "object" || c.input === undefined || c.input === null || c.output === undefined || c.output === null) {
          throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: cases[${i}] needs both input and output, got ${pyRepr(c)}`, { field: `cases[${i}]` });
        }
        return checkInput(who, `cases[${i}].input`, c);
      });
    } else {
      if (args.input === undefined || args.input === null || args.output === undefined || args.output === null) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: both input and output are required for a single evaluation`, { field: args.input == null ? "input" : "output" });
      }
      pairs = [checkInput(who, "input", { input: args.input, output: args.output })];
    }

    const judge = this.#judgeModel();
    // Before any judge call: a store that cannot be opened stops the run here, nothing half-recorded.
    await this.#store?.open();
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    const runId = randomUUID();
    const usage: Required<JudgeUsage> = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    const onUsage = (u: JudgeUsage): void => {
      usage.inputTokens += u.inputTokens ?? 0;
      usage.outputTokens += u.outputTokens ?? 0;
      usage.totalTokens += u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0);
      if (args.runMetrics) {
        const m = args.runMetrics;
        m.inputTokens = (m.inputTokens ?? 0) + (u.inputTokens ?? 0);
        m.outputTokens = (m.outputTokens ?? 0) + (u.outputTokens ?? 0);
        m.totalTokens = (m.totalTokens ?? 0) + (u.totalTokens ?? 0);
      }
    };
    const limit = pLimit(this.#o.concurrency ?? 1);
    const outcomes = await Promise.all(pairs.map((p) => limit(() => this.#evaluate(judge, p.input, contentAsString(p.output), onUsage, args.signal ?? undefined))));
    const results = outcomes.filter((o): o is { evaluation: AgentAsJudgeEvaluation } => "evaluation" in o).map((o) => o.evaluation);
    const failures = outcomes.filter((o): o is { failure: AgentAsJudgeFailure } => "failure" in o).map((o) => o.failure);
    const result = new AgentAsJudgeResult(runId, results, failures, usage);
    if (this.#store) {
      const { results: _, ...summary } = result.toJSON();
      await this.#store.record({
        runId,
        name: this.name,
        criteria: this.criteria,
        scoringStrategy: this.scoringStrategy,
        threshold: this.threshold,
        additionalGuidelines: this.additionalGuidelines,
        judgeModel: judge.id ?? null,
        timeoutSeconds: this.#o.timeoutSeconds ?? 120,
        startedAt,
        durationSeconds: round3((performance.now() - t0) / 1000),
        outcomes: outcomes.map((o) => ("evaluation" in o ? o.evaluation : { ...o.failure, criteria: this.criteria, failure: o.failure.reason })),
        summary: { ...summary, failures: failures.length },
      });
    }

    if (this.#o.filePathToSaveResults) await this.#save(result);
    const out = this.#o.output ?? process.stdout;
    if (this.#o.printResults || args.printResults) result.printResults(out);
    if (this.#o.printSummary || args.printSummary) result.printSummary(out);
    return result;
  }

  /** The post-hook entry: grades a live run's input and output (see `withPostHooks`). */
  async postCheck(run: PostHookRun): Promise<AgentAsJudgeResult> {
    const result = await this.run({ input: inputAsText(run.input), output: contentAsString(run.output.content), signal: run.signal, runMetrics: null });
    this.hookResults.push(result);
    return result;
  }

  #judgeModel(): JudgeModel {
    const ev = this.#o.evaluatorAgent;
    if (ev) return typeof (ev as JudgeModel).judge === "function" ? (ev as JudgeModel) : agentAsJudgeModel(ev as Agent);
    const model = this.#o.model ?? defaultJudgeModel();
    if (!model) {
      throw new ConfigError(ErrorCode.ConfigMissing, "AgentAsJudgeEval: no judge model configured: set OPENAI_API_KEY or pass model", { field: "model" });
    }
    return model;
  }

  async #evaluate(
    judge: JudgeModel,
    input: CaseInput,
    output: string,
    onUsage: (u: JudgeUsage) => void,
    signal: AbortSignal | undefined,
  ): Promise<{ evaluation: AgentAsJudgeEvaluation } | { failure: AgentAsJudgeFailure }> {
    const inputText = inputAsText(input);
    const timeoutMs = (this.#o.timeoutSeconds ?? 120) * 1000;
    const bound = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const request = buildJudgeRequest({
      criteria: this.criteria,
      mode: this.scoringStrategy,
      input,
      output,
      ...(this.additionalGuidelines ? { additionalGuidelines: this.additionalGuidelines } : {}),
    });
    const outcome = await runJudge(judge, request, this.scoringStrategy, this.threshold, bound, { deadline: Date.now() + timeoutMs, onUsage });
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

  async #save(result: AgentAsJudgeResult): Promise<void> {
    const path = this.#o.filePathToSaveResults!.replaceAll("{name}", this.name ?? "eval").replaceAll("{run_id}", result.runId);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, `${JSON.stringify(result.toJSON(), null, 4)}\n`, "utf8");
    } catch (err) {
      // As Agno: a failed save is a warning, never a failed evaluation.
      this.#logger.warn({ eval: this.name, path, error: errorMessage(err) }, "failed to save result to file");
    }
  }
}

function checkInput(who: string, field: string, pair: { input: CaseInput; output: unknown }): { input: CaseInput; output: unknown } {
  const ok = typeof pair.input === "string" || (Array.isArray(pair.input) && pair.input.every((m) => m && typeof m.role === "string" && typeof m.content === "string"));
  if (!ok) throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} must be a string or a list of {role, content} messages, got ${pyRepr(pair.input)}`, { field });
  return pair;
}
