import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import { processEnvironment } from "../../shared/environment.ts";
import { loadSuiteWithin } from "../../shared/suite/bounded-load.ts";
import { judgeWithModel } from "../../worker/models/default-judge.ts";
import { RegradeSource } from "../history/regrade-source.ts";
import { ResultsStore } from "../history/store/store.ts";
import { runConfigFrom } from "./config.ts";
import { executeRun } from "./execute-run.ts";
import type { RunFlags } from "./flag-types.ts";
import type { ResolvedIO } from "./io.ts";
import { inlineRunner, poolRunner } from "./local-runners.ts";

/**
 * `evalfleet regrade RUN_ID [SUITE]`: the checks of the suite file (read from disk now, so edited
 * checks apply) run against the stored outputs of a recorded run; no agent runs, no setup or
 * teardown. The suite file is SUITE, else the path recorded with the run. The regrade is recorded
 * as a new run linked to its source (`regraded_from`), and reported, exited and recorded as `run`
 * does; it runs on the pool of worker threads (`--threads 0`: in this thread).
 */

/** Regrades a recorded run; returns the exit code. */
export async function regradeRun(runId: string, suiteArgument: string | undefined, flags: RunFlags, io: ResolvedIO): Promise<number> {
  const env = processEnvironment();
  const db = flags.db?.trim() || null;
  if (!db) throw new EvalfleetError(ErrorCode.Usage, "regrade reads a recorded run: pass --db URL or set EVALFLEET_DB", { field: "db" });
  const judgeModel = flags.judgeModel?.trim() || null;
  if (judgeModel && !env.OPENAI_API_KEY?.trim()) {
    throw new EvalfleetError(ErrorCode.Usage, `--judge-model ${judgeModel} needs the OpenAI-compatible judge: set OPENAI_API_KEY (and OPENAI_BASE_URL for another server)`, { field: "judgeModel" });
  }
  const store = await ResultsStore.open(db, { timeoutSeconds: flags.dbTimeout, suitePath: suiteArgument ?? null });
  try {
    const run = await store.findRun(runId);
    if (run.kind !== "suite") throw new EvalfleetError(ErrorCode.Usage, `run ${run.id} is an AgentAsJudgeEval run, not a suite run: it has no case outputs to regrade`, { runId: run.id });
    const suiteFile = suiteArgument ?? run.suitePath;
    if (!suiteFile) throw new EvalfleetError(ErrorCode.Usage, `run ${run.id} recorded no suite file: pass it, evalfleet regrade ${run.id} SUITE`, { runId: run.id });
    if (!suiteArgument && !existsSync(resolve(suiteFile))) {
      throw new EvalfleetError(ErrorCode.SuiteNotFound, `run ${run.id} was a run of ${suiteFile}, which is not there any more: pass the suite, evalfleet regrade ${run.id} SUITE`, { runId: run.id, path: suiteFile });
    }
    const config = runConfigFrom({ command: "regrade", suiteArgument: suiteFile, flags, env, regradeRunId: run.id });
    const suite = await loadSuiteWithin(config.suiteFile!, config.loadTimeoutSeconds);
    const source = new RegradeSource(store, run);
    const regrade = { replayOf: (s: Parameters<RegradeSource["replayOf"]>[0]) => source.replayOf(s), judgeModel: judgeModel ? judgeWithModel(judgeModel, env) : null };
    const runner = config.mode === "threads" ? poolRunner(suite, config, regrade) : inlineRunner(suite, config, regrade);
    return await executeRun(suite, config, io, runner, { regrade: source });
  } finally {
    await store.close();
  }
}
