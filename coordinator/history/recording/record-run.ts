import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { dirname } from "node:path";
import type { Case } from "../../../shared/case/case.ts";
import type { JudgeModel } from "../../../shared/case/judge-model.ts";
import { SuiteResult } from "../../../shared/result/result.ts";
import { ErrorCode } from "../../../shared/errors.ts";
import { StoreError } from "../store/driver.ts";
import type { SuiteHooks } from "../../../shared/hooks.ts";
import { judgeModelFromEnvironment, processEnvironment, type Environment } from "../../../shared/environment.ts";
import type { SelectedCase, Selector } from "../../run/select.ts";
import { gitInfo } from "./git.ts";
import { checksFingerprint } from "./checks-fingerprint.ts";
import { RunRecorder, type RecordingOutcome } from "./recorder.ts";
import { abandonedBefore, type RunRecord, type RunRecordStatus, type RunStart } from "../store/run-record.ts";
import type { CaseRecord } from "../store/case-record.ts";
import { ResultsStore } from "../store/store.ts";

/**
 * Recording a suite run, for every way of running one (runCases, runSuiteLocal, the command
 * line, the distributed coordinator): open the store, record the start, wrap `onCaseEnd` so each
 * result is queued as it finishes, and record the end. Everything here runs on the coordinator's
 * side; worker threads and worker processes never see the database.
 */

/** The `db` option: a store URL (`sqlite:PATH`, `postgres://...`), or a store the caller opened and closes. */
export type DbOption = string | ResultsStore;

/** What a run is, for its record. */
export interface RunDescription {
  suiteName: string;
  suitePath: string | null;
  fingerprint: string | null;
  /** Every case of the suite (for the selection record) and the selected ones. */
  selected: readonly SelectedCase[];
  selector: Selector;
  /** How it runs (mode, concurrency, ...): never a credential. */
  config: Record<string, unknown>;
  judgeModel: JudgeModel | null;
  /** The default per-case timeout, seconds. */
  timeoutSeconds: number;
  /** The run in Exulu's terms: its name, description, evaluation functions, scoring method, pass threshold. Default none. */
  definition?: RunDefinition;
  /** The recorded run this one regrades (`evalfleet regrade`). Default none. */
  regradedFrom?: string | null;
}

/** A run's own fields in Exulu's terms (`eval_runs`), as the run was asked for. */
export interface RunDefinition {
  runName?: string | null;
  description?: string | null;
  evalFunctions?: readonly string[] | null;
  scoringMethod?: string | null;
  /** The fraction (0-1) of cases that must pass. */
  passThreshold?: number | null;
}

/**
 * The agent or team every selected case uses, when they all use one (Exulu's `eval_runs.agent_id`);
 * both null when the cases use several, or mix agents and teams.
 */
export function runComponent(selected: readonly SelectedCase[]): { agentId: string | null; teamId: string | null } {
  const first = selected[0]?.case;
  if (!first) return { agentId: null, teamId: null };
  const kind = first.team ? "team" : "agent";
  const id = first.componentId;
  for (const { case: c } of selected) if ((c.team ? "team" : "agent") !== kind || c.componentId !== id) return { agentId: null, teamId: null };
  return kind === "team" ? { agentId: null, teamId: id } : { agentId: id, teamId: null };
}

/** Options of {@link Recording.start}. */
export interface RecordingOptions {
  db: DbOption;
  /** Bound on connecting, each write and the final flush, in seconds (the caller's config compiled it: `--db-timeout`, `dbTimeout`). */
  timeoutSeconds: number;
  onWarning: (message: string) => void;
  /** Reopen a run already recorded (a resumed distributed run). */
  resume?: boolean;
  /** Where `git` is asked for the commit and branch. Default: the suite's folder, else the working directory. */
  cwd?: string;
  /** The environment (CI variables for git, the judge model settings). Default: this process's. */
  env?: Environment;
  /** Also read the baseline of `--fail-on-regression` (before the run's start is recorded). */
  withBaseline?: boolean;
  /** `--baseline`: the baseline's run id (or a prefix of it); default: the last run of the suite on the branch. */
  baselineRunId?: string | null;
  /** The confidence of the intervals in the case rows (`--confidence`). Default: the statistics' (0.95). */
  confidence?: number;
}

/** A run to compare with, and its cases. */
export interface Baseline {
  run: RunRecord;
  cases: CaseRecord[];
  /** Finished runs of the suite on the baseline's branch before it (newest first, at most POOLED_HISTORY_RUNS), with their cases. */
  history: Array<{ run: RunRecord; cases: CaseRecord[] }>;
}

/** An open recording of one run. */
export class Recording {
  readonly store: ResultsStore;
  readonly recorder: RunRecorder;
  readonly run: RunStart;
  /** With `withBaseline`: the last finished run of the suite on the branch, or null. */
  readonly baseline: Baseline | null;
  /** The fingerprint of the checks of the selected case at an index, as recorded with its result; null for another index. */
  readonly checksOf: (index: number) => string | null;
  readonly #ownsStore: boolean;

  private constructor(store: ResultsStore, recorder: RunRecorder, run: RunStart, baseline: Baseline | null, ownsStore: boolean, checksOf: (index: number) => string | null) {
    this.store = store;
    this.recorder = recorder;
    this.run = run;
    this.baseline = baseline;
    this.#ownsStore = ownsStore;
    this.checksOf = checksOf;
  }

  /**
   * Opens the store (when given a URL) and records the run's start. Any failure is thrown, typed
   * (STORE_URL_INVALID, STORE_UNAVAILABLE, STORE_SCHEMA, RUN_EXISTS), before a case has run;
   * a store opened here is closed again.
   */
  static async start(runId: string, description: RunDescription, options: RecordingOptions): Promise<Recording> {
    const { timeoutSeconds } = options;
    const owns = typeof options.db === "string";
    const store =
      typeof options.db === "string"
        ? await ResultsStore.open(options.db, { timeoutSeconds, suitePath: description.suitePath, onBackgroundError: options.onWarning })
        : options.db;
    try {
      const env = options.env ?? processEnvironment();
      const git = await gitInfo(options.cwd ?? (description.suitePath ? dirname(description.suitePath) : process.cwd()), env);
      const run: RunStart = {
        id: runId,
        kind: "suite",
        suiteName: description.suiteName,
        suiteFingerprint: description.fingerprint,
        suitePath: description.suitePath,
        selection: {
          name: listOrNull(description.selector.name),
          tag: listOrNull(description.selector.tag),
          set: listOrNull(description.selector.set),
          cases: description.selected.map((s) => s.case.name),
        },
        config: description.config,
        judgeModel: judgeModelName(description.judgeModel, env),
        timeoutSeconds: description.timeoutSeconds,
        startedAt: new Date().toISOString(),
        gitCommit: git.commit,
        gitBranch: git.branch,
        host: `${hostname()}/${process.pid}`,
        ...runComponent(description.selected),
        runName: description.definition?.runName ?? null,
        description: description.definition?.description ?? null,
        evalFunctions: description.definition?.evalFunctions?.length ? [...description.definition.evalFunctions] : null,
        scoringMethod: description.definition?.scoringMethod ?? null,
        passThreshold: description.definition?.passThreshold ?? null,
        regradedFrom: description.regradedFrom ?? null,
      };
      // Runs whose process died are closed before this one is recorded (best effort: a read-only
      // user of the store may not, and must not be stopped by it).
      await store.closeAbandonedRuns(abandonedBefore()).catch(() => undefined);
      const baseline = options.withBaseline ? await findBaseline(store, run, options.baselineRunId ?? null) : null;
      // Each result is recorded with the fingerprint of the checks that graded it (a regrade's: its new checks).
      const checks = new Map(description.selected.map((s) => [s.index, checksFingerprint(s.case, run.judgeModel)]));
      const checksOf = (i: number): string | null => checks.get(i) ?? null;
      // Its input too, as text for search: read from the case when its row is written (a dataset case keeps only its place in the file).
      const byIndex = new Map(description.selected.map((s) => [s.index, s.case]));
      const inputOf = (i: number) => byIndex.get(i)?.input ?? null;
      const recorder = await RunRecorder.begin(store, run, { onWarning: options.onWarning, flushTimeoutSeconds: timeoutSeconds, resume: options.resume, checksOf, inputOf, ...(options.confidence === undefined ? {} : { confidence: options.confidence }) });
      return new Recording(store, recorder, run, baseline, owns, checksOf);
    } catch (err) {
      if (owns) await store.close();
      throw err;
    }
  }

  /** `hooks` with `onCaseEnd` also queuing each result (after the caller's hook, which sees it first). */
  wrap<H extends SuiteHooks>(hooks: H): H {
    const user = hooks.onCaseEnd;
    const recorder = this.recorder;
    return {
      ...hooks,
      onCaseEnd: (c: Case, result: Parameters<NonNullable<SuiteHooks["onCaseEnd"]>>[1]) => {
        try {
          return user ? user(c, result) : undefined;
        } finally {
          recorder.record(result);
        }
      },
    };
  }

  /** Records the end (bounded; never throws) and closes a store opened here. */
  async finish(suite: SuiteResult, options: { incomplete?: boolean } = {}): Promise<RecordingOutcome> {
    try {
      return await this.recorder.finish(suite, runStatus(suite, options.incomplete ?? false));
    } finally {
      if (this.#ownsStore) await this.store.close();
    }
  }
}

/**
 * The baseline of `--fail-on-regression`, with its cases and the runs before it: the run
 * `baselineRunId` names (`--baseline`; a usage error, exit 2, when there is none or it is of
 * another suite), else the last finished run of the same suite on the same branch (both without
 * a branch counts), else null.
 */
export async function findBaseline(store: ResultsStore, run: RunStart, baselineRunId: string | null = null): Promise<Baseline | null> {
  let previous: RunRecord | undefined;
  if (baselineRunId !== null) {
    try {
      previous = await store.findRun(baselineRunId);
    } catch (err) {
      if (err instanceof StoreError && err.code === ErrorCode.RunNotFound) throw new StoreError(ErrorCode.Usage, `--baseline '${baselineRunId}': ${err.message}`, { field: "baseline", value: baselineRunId });
      throw err;
    }
    if (previous.kind !== "suite" || previous.suiteName !== run.suiteName) {
      const what = previous.kind === "suite" ? `a run of suite '${previous.suiteName}'` : "a standalone AgentAsJudgeEval run";
      throw new StoreError(ErrorCode.Usage, `--baseline '${baselineRunId}': run ${previous.id} is ${what}, not of suite '${run.suiteName}'`, { field: "baseline", value: baselineRunId });
    }
  } else {
    const runs = await store.listRuns({ suiteName: run.suiteName, branch: run.gitBranch, kind: "suite", finishedOnly: true, startedBefore: run.startedAt, limit: 5 });
    previous = runs.find((r) => r.id !== run.id);
  }
  if (!previous) return null;
  return { run: previous, cases: await store.caseRecords(previous.id), history: await historyBefore(store, previous, [run.id]) };
}

/**
 * The runs of history the per-case tests of `compare` and `--fail-on-regression` pool with the
 * baseline's trials, at most: part of the gate's method, not a setting (no flag changes it; it is
 * the window `flaky --last` looks at by default too).
 */
const POOLED_HISTORY_RUNS = 20;

/**
 * The finished runs of `run`'s suite on its branch that started before it, newest first, at most
 * {@link POOLED_HISTORY_RUNS}, with their cases (leaving out the runs `exclude` names): the history the
 * per-case tests of `compare` and `--fail-on-regression` pool with the baseline's trials.
 */
export async function historyBefore(store: ResultsStore, run: RunRecord, exclude: readonly string[] = []): Promise<Array<{ run: RunRecord; cases: CaseRecord[] }>> {
  const before = (await store.listRuns({ suiteName: run.suiteName, branch: run.gitBranch, kind: "suite", finishedOnly: true, startedBefore: run.startedAt, limit: POOLED_HISTORY_RUNS + 1 + exclude.length }))
    .filter((r) => r.id !== run.id && !exclude.includes(r.id))
    .slice(0, POOLED_HISTORY_RUNS);
  const records = await store.caseRecordsOf(before.map((r) => r.id));
  return before.map((r) => ({ run: r, cases: records.get(r.id) ?? [] }));
}

/** How a run ended, as recorded. Pure. */
export function runStatus(suite: SuiteResult, incomplete: boolean): RunRecordStatus {
  if (suite.cancelled) return "cancelled";
  if (incomplete) return "incomplete";
  // With a pass threshold, the run passes when the threshold is met (its exit code is 0).
  if (suite.thresholdMet !== null) return suite.thresholdMet ? "passed" : "failed";
  return suite.status === "PASS" ? "passed" : "failed";
}

/** The judge model a run uses when a case names none: the suite's, else the default judge's model when configured. */
export function judgeModelName(model: JudgeModel | null, env: Environment): string | null {
  if (model) return model.id ?? model.constructor?.name ?? "custom";
  return env.OPENAI_API_KEY?.trim() ? judgeModelFromEnvironment(env) : null;
}

/** Options of {@link runRecorded}. */
export interface RunRecordedOptions {
  db: DbOption;
  runId?: string | null;
  /** Bound on the store, in seconds (coordinator/library-config.ts compiled the library's `dbTimeout`). */
  timeoutSeconds: number;
  onWarning: (message: string) => void;
}

/**
 * Runs `run` recorded in `db` (the library's `db` option): the run id is fixed first, hooks are
 * wrapped, the end is recorded. A store that cannot be opened throws before any case runs.
 */
export async function runRecorded(
  description: RunDescription,
  hooks: SuiteHooks,
  options: RunRecordedOptions,
  run: (hooks: SuiteHooks, runId: string) => Promise<SuiteResult>,
): Promise<SuiteResult> {
  const runId = options.runId || randomUUID();
  const recording = await Recording.start(runId, description, { db: options.db, timeoutSeconds: options.timeoutSeconds, onWarning: options.onWarning });
  let suite: SuiteResult | undefined;
  try {
    suite = await run(recording.wrap(hooks), runId);
    return suite;
  } finally {
    if (suite) await recording.finish(suite);
    else {
      // The run itself threw (a bug, or bad options): the record says it did not finish.
      await recording.finish(new SuiteResult([], { runId }), { incomplete: true });
    }
  }
}

function listOrNull(value: string | readonly string[] | null | undefined): string[] | null {
  if (value === null || value === undefined) return null;
  return typeof value === "string" ? [value] : value.length > 0 ? [...value] : null;
}
