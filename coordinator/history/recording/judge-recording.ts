import { hostname } from "node:os";
import { errorMessage } from "../../../shared/errors.ts";
import { withTimeout } from "../store/driver.ts";
import { gitInfo } from "./git.ts";
import { processEnvironment } from "../../../shared/environment.ts";
import { redactJson } from "../../../shared/redaction/secrets.ts";
import type { DbOption } from "./record-run.ts";
import type { RunEnd, RunStart } from "../store/run-record.ts";
import type { JudgeEvaluationRecord } from "../store/case-record.ts";
import type { GradeOutcome } from "../../../worker/models/criteria-grader.ts";
import { ResultsStore } from "../store/store.ts";
import { storeTimeoutSeconds } from "../store/store-config.ts";
import { parseStoreUrl, type StoreTarget } from "../store/url.ts";

/**
 * The `db` of a standalone AgentAsJudgeEval (Agno's spec N2 and N4): each `run()` is recorded
 * as one eval run of kind `agent_as_judge` with its evaluations, in order. The store is opened on
 * the first run, before any judge call (a store that cannot be opened throws then); a write that
 * fails or hangs is a warning, bounded by the store timeout, and never fails the evaluation.
 */

/** What a recorded judge run holds. */
export interface JudgeRunRecordInput {
  runId: string;
  name: string | null;
  criteria: string;
  scoringStrategy: string;
  threshold: number;
  additionalGuidelines: string | readonly string[] | null;
  judgeModel: string | null;
  /** Seconds, the bound on each judge call. */
  timeoutSeconds: number;
  startedAt: string;
  /** Seconds. */
  durationSeconds: number;
  /** One per evaluation, in batch order: a verdict, or why there is none (the grader's outcomes). */
  outcomes: readonly GradeOutcome[];
  /** The result's aggregate (`AgentAsJudgeResult.toJSON()` less `results`). */
  summary: Record<string, unknown>;
  /** As a post-hook: the hooked agent's id, or the team's. Default none. */
  agentId?: string | null;
  teamId?: string | null;
}

/** The store of one AgentAsJudgeEval. */
export class JudgeStore {
  readonly #db: ResultsStore | StoreTarget;
  readonly #timeoutSeconds: number;
  readonly #onWarning: (message: string) => void;
  #store: Promise<ResultsStore> | null = null;
  #owned = false;

  /** Parses a URL now, so a bad one is refused when the evaluation is built (STORE_URL_INVALID). */
  constructor(db: DbOption, options: { timeoutSeconds?: number; onWarning: (message: string) => void }) {
    this.#db = typeof db === "string" ? parseStoreUrl(db) : db;
    this.#timeoutSeconds = storeTimeoutSeconds(options.timeoutSeconds);
    this.#onWarning = options.onWarning;
  }

  /** Opens the store once (connects, migrates); throws the store's typed error when it cannot. */
  async open(): Promise<ResultsStore> {
    if (this.#db instanceof ResultsStore) return this.#db;
    if (!this.#store) {
      this.#owned = true;
      this.#store = ResultsStore.open(this.#db, { timeoutSeconds: this.#timeoutSeconds, onBackgroundError: this.#onWarning });
      // A failed open is not cached: the next run tries again.
      this.#store.catch(() => (this.#store = null));
    }
    return this.#store;
  }

  /** Records one run. Never throws; a failure or a write slower than the timeout is a warning. */
  async record(input: JudgeRunRecordInput): Promise<boolean> {
    try {
      const store = await this.open();
      const git = await gitInfo(process.cwd(), processEnvironment());
      const evaluations: JudgeEvaluationRecord[] = input.outcomes.map((o, position) => {
        if ("failure" in o) {
          const f = o.failure;
          return { position, input: f.input, output: f.output, criteria: input.criteria, score: null, reason: null, passed: null, failure: f.reason };
        }
        const e = o.evaluation;
        return { position, input: e.input, output: e.output, criteria: e.criteria, score: e.score, reason: e.reason, passed: e.passed, failure: null };
      });
      const passed = evaluations.filter((e) => e.passed === true).length;
      const noVerdict = evaluations.filter((e) => e.failure !== null).length;
      const run: RunStart = {
        id: input.runId,
        kind: "agent_as_judge",
        suiteName: input.name ?? "agent_as_judge",
        suiteFingerprint: null,
        suitePath: null,
        selection: { cases: evaluations.length },
        // Agno's eval_input: the threshold only in numeric mode.
        config: {
          criteria: input.criteria,
          scoring_strategy: input.scoringStrategy,
          threshold: input.scoringStrategy === "numeric" ? input.threshold : null,
          additional_guidelines: input.additionalGuidelines,
        },
        judgeModel: input.judgeModel,
        timeoutSeconds: input.timeoutSeconds,
        startedAt: input.startedAt,
        gitCommit: git.commit,
        gitBranch: git.branch,
        host: `${hostname()}/${process.pid}`,
        agentId: input.agentId ?? null,
        teamId: input.teamId ?? null,
      };
      const end: RunEnd = {
        finishedAt: new Date().toISOString(),
        status: evaluations.length > 0 && passed === evaluations.length ? "passed" : "failed",
        total: evaluations.length,
        passed,
        failed: evaluations.length - passed,
        skipped: noVerdict,
        durationSeconds: input.durationSeconds,
        summary: input.summary,
      };
      // Inputs, outputs, reasons and criteria are model- and user-derived: no secret is written.
      await withTimeout(
        store.recordJudgeRun(redactJson(run), redactJson(end), redactJson(evaluations)),
        this.#timeoutSeconds * 1000,
        () => new Error(`no answer within ${this.#timeoutSeconds}s; the run may not be recorded`),
      );
      return true;
    } catch (err) {
      this.#onWarning(`could not record AgentAsJudgeEval run ${input.runId}: ${(errorMessage(err).split("\n")[0] ?? "").trim()}`);
      return false;
    }
  }

  /** Closes a store this evaluation opened from a URL (one passed in stays open). */
  async close(): Promise<void> {
    if (!this.#owned || !this.#store) return;
    const pending = this.#store;
    this.#store = null;
    await pending.then((s) => s.close()).catch(() => undefined);
  }
}
