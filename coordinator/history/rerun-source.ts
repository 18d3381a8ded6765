import { dirname } from "node:path";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import { processEnvironment, type Environment } from "../../shared/environment.ts";
import { rerunTargets, type RerunKind, type RerunTarget } from "../run/rerun.ts";
import { gitInfo } from "./recording/git.ts";
import type { RunRecord } from "./store/run-record.ts";
import { ResultsStore } from "./store/store.ts";

/**
 * Where a re-run's cases come from: the recorded run it names (`--rerun-failed RUN_ID`, ...) or,
 * for `--last-failed`, the newest finished run of the suite on this git branch (outside git, or
 * on a detached HEAD, the newest of the suite). The selection itself is pure
 * (coordinator/run/rerun.ts).
 */

/** What a run command asks for. */
export interface RerunRequest {
  kind: RerunKind | "last-failed";
  /** The run id (or a prefix only it has); null for `last-failed`. */
  runId: string | null;
}

/** The recorded run a re-run reads, and the cases it takes from it. */
export interface RerunSource {
  run: RunRecord;
  kind: RerunKind;
  targets: RerunTarget[];
}

/** Options of {@link readRerunSource}. */
export interface RerunSourceOptions {
  /** The store URL (`--db`). */
  db: string | ResultsStore;
  /** Seconds (`--db-timeout`). */
  timeoutSeconds: number;
  suite: { name: string; path: string | null };
  env?: Environment;
}

/** Reads the run and its cases. Throws RUN_NOT_FOUND (exit 2) when there is no such run. */
export async function readRerunSource(request: RerunRequest, options: RerunSourceOptions): Promise<RerunSource> {
  const owned = typeof options.db === "string";
  const store = typeof options.db === "string" ? await ResultsStore.open(options.db, { timeoutSeconds: options.timeoutSeconds, suitePath: options.suite.path }) : options.db;
  try {
    let run: RunRecord;
    if (request.kind === "last-failed") {
      const git = await gitInfo(options.suite.path ? dirname(options.suite.path) : process.cwd(), options.env ?? processEnvironment());
      const found = await store.latestRun({ suiteName: options.suite.name, kind: "suite", finishedOnly: true, ...(git.branch ? { branch: git.branch } : {}) });
      if (!found) {
        throw new EvalfleetError(ErrorCode.RunNotFound, `--last-failed: no finished run of suite '${options.suite.name}'${git.branch ? ` on branch ${git.branch}` : ""} in ${store.display}`, { suite: options.suite.name });
      }
      run = found;
    } else {
      run = await store.findRun(request.runId!);
    }
    if (run.kind !== "suite") throw new EvalfleetError(ErrorCode.Usage, `run ${run.id} is an AgentAsJudgeEval run, not a suite run: it has no cases to run again`, { runId: run.id });
    const kind: RerunKind = request.kind === "last-failed" ? "failed" : request.kind;
    const records = await store.caseRecords(run.id);
    const selection = Array.isArray(run.selection.cases) ? run.selection.cases.filter((n): n is string => typeof n === "string") : null;
    return { run, kind, targets: rerunTargets(kind, records, selection) };
  } finally {
    if (owned) await store.close();
  }
}
