import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import type { CaseInput, RunMetrics } from "../../shared/case/agent.ts";
import type { JudgeMode } from "../../shared/case/case.ts";
import { ConfigError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { pyRepr, round3 } from "../../shared/py-format.ts";
import { CriteriaGrader, pairOfHookRun, pairsToGrade, type CriteriaGraderOptions } from "../../worker/models/criteria-grader.ts";
import type { PostHook, PostHookRun } from "../../worker/adapters/post-hooks.ts";
import { safeText } from "../../shared/text.ts";
import { JudgeStore } from "../history/recording/judge-recording.ts";
import type { DbOption } from "../history/recording/record-run.ts";
import { ResultsStore } from "../history/store/store.ts";
import { AgentAsJudgeResult } from "./agent-as-judge-result.ts";

export { AgentAsJudgeResult } from "./agent-as-judge-result.ts";
export type { AgentAsJudgeEvaluation, AgentAsJudgeFailure } from "../../worker/models/criteria-grader.ts";

/**
 * AgentAsJudgeEval, standalone (seed 003): grade recorded input/output pairs against criteria
 * with an LLM judge, or attach it to an agent as a post-hook (`withPostHooks`) to grade live
 * runs. This public class composes three parts, so that imports point one way: the grading
 * (worker/models/criteria-grader.ts: the judge check's prompt, fence and answer validation, so
 * a standalone evaluation and a suite case grade alike), the recording of each run in the
 * results store (coordinator/history/recording/judge-recording.ts), and the result with its
 * printing (agent-as-judge-result.ts); it adds saving to a file.
 *
 * Differences from Agno: `run()` is asynchronous (Agno's `arun`); `db` is evalfleet's results
 * store (a URL or a `ResultsStore`, see history/recording/judge-recording.ts), not an Agno database object;
 * `telemetry` is accepted and ignored (evalfleet sends none); `runInBackground` works wherever the
 * hooked agent runs, not only under AgentOS.
 */

/** Options of {@link AgentAsJudgeEval}, Agno's parameters in camelCase plus evalfleet's own (the grading ones: {@link CriteriaGraderOptions}). */
export interface AgentAsJudgeEvalOptions extends CriteriaGraderOptions {
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
  readonly #grader: CriteriaGrader;
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
    // The grading options first (criteria ... concurrency), then the ones of this class.
    this.#grader = new CriteriaGrader(options, who);
    for (const flag of ["printSummary", "printResults", "telemetry", "runInBackground"] as const) {
      if (options[flag] !== undefined && typeof options[flag] !== "boolean") bad(flag, "must be a boolean", options[flag]);
    }
    if (options.filePathToSaveResults !== undefined && options.filePathToSaveResults !== null && (typeof options.filePathToSaveResults !== "string" || !options.filePathToSaveResults)) {
      bad("filePathToSaveResults", "must be a non-empty string", options.filePathToSaveResults);
    }
    if (options.output !== undefined && options.output !== null && typeof (options.output as Writable).write !== "function") bad("output", "must be a writable stream", options.output);

    this.criteria = this.#grader.criteria;
    this.scoringStrategy = this.#grader.scoringStrategy;
    this.threshold = this.#grader.threshold;
    this.name = this.#grader.name;
    this.additionalGuidelines = this.#grader.additionalGuidelines;
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
    return this.#run(args, null);
  }

  /** A run, recorded with the hooked agent's or team's id when it comes from a post-hook. */
  async #run(args: AgentAsJudgeRunArgs, hooked: { agentId: string | null; teamId: string | null } | null): Promise<AgentAsJudgeResult> {
    const pairs = pairsToGrade("AgentAsJudgeEval.run", args);
    const judge = this.#grader.judgeModel();
    // Before any judge call: a store that cannot be opened stops the run here, nothing half-recorded.
    await this.#store?.open();
    const startedAt = new Date().toISOString();
    const t0 = performance.now();
    const runId = randomUUID();
    const graded = await this.#grader.grade(judge, pairs, { signal: args.signal, runMetrics: args.runMetrics });
    const result = new AgentAsJudgeResult(runId, graded.results, graded.failures, graded.usage);
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
        timeoutSeconds: this.#grader.timeoutSeconds,
        startedAt,
        durationSeconds: round3((performance.now() - t0) / 1000),
        outcomes: graded.outcomes,
        summary: { ...summary, failures: graded.failures.length },
        // Agno's post_check: the run is logged with the agent or team id attached.
        agentId: hooked?.agentId ?? null,
        teamId: hooked?.teamId ?? null,
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
    const result = await this.#run({ ...pairOfHookRun(run), signal: run.signal, runMetrics: null }, { agentId: run.agentId ?? null, teamId: run.teamId ?? null });
    this.hookResults.push(result);
    return result;
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
