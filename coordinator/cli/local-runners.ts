import type { LoadedSuite } from "../../shared/suite/suite.ts";
import type { RunConfig } from "./config.ts";
import type { Runner, RunnerContext } from "./execute-run.ts";
import type { SelectedCase } from "../run/select.ts";
import type { RunOutput } from "../../shared/case/agent.ts";
import type { JudgeModel } from "../../shared/case/judge-model.ts";
import type { PrestartedThreads } from "../../worker/pool/case-pool.ts";

/**
 * The local runners of the command line: `--threads 0` and a script's `cli(cases)` run the
 * selected cases in this thread, `evalfleet run` on a pool of worker threads. Each loads its
 * runner module only when it runs (`evalfleet list` never does).
 */

/** What a regrade adds to a local runner: each case's stored output, and the judge that grades it. */
export interface RegradeRunnerOptions {
  replayOf: (selected: SelectedCase) => Promise<RunOutput>;
  /** The judge for cases that name none (`--judge-model`); default the suite's. */
  judgeModel?: JudgeModel | null;
}

/** Runs the selected cases in this thread (`--threads 0`, `cli(cases)`); with `regrade`, grades their stored outputs instead. */
export function inlineRunner(suite: LoadedSuite, config: RunConfig, regrade: RegradeRunnerOptions | null = null): Runner {
  return async (ctx) => {
    const { runInline } = await import("../local/inline.ts");
    return {
      suite: await runInline(ctx.selected, {
        ...runContextOptions(ctx, config),
        exitWhenBlocked: true,
        judgeModel: regrade?.judgeModel ?? suite.judgeModel,
        replayOf: regrade?.replayOf ?? null,
        concurrency: config.concurrency,
        mcpClients: suite.mcpClients,
        onWarning: warnOnce(ctx.note),
        evalFunctions: suite.evalFunctions ?? null,
      }),
    };
  };
}

/** Runs the selected cases on a pool of worker threads (`evalfleet run`); with `regrade`, grades their stored outputs there instead. */
export function poolRunner(suite: LoadedSuite, config: RunConfig, regrade: RegradeRunnerOptions | null = null, prestarted: PrestartedThreads | null = null): Runner {
  return async (ctx) => {
    const { runOnThreads } = await import("../local/threads.ts");
    return {
      suite: await runOnThreads(suite, ctx.selected, {
        ...runContextOptions(ctx, config),
        concurrency: config.concurrency,
        threads: config.poolThreads,
        threadMemoryMb: config.threadMemoryMb,
        prestarted,
        logLevel: config.logLevel,
        onWarning: warnOnce(ctx.note),
        replayOf: regrade?.replayOf ?? null,
        judgeModelName: config.judgeModelName,
      }),
    };
  };
}

/** What both local runners take from the run's context: hooks, signal, run id, logger, cache, and the compiled settings. */
function runContextOptions(ctx: RunnerContext, config: RunConfig) {
  return {
    ...ctx.hooks,
    signal: ctx.signal,
    runId: ctx.runId ?? config.runId,
    logger: ctx.logger,
    cache: ctx.cache,
    settings: ctx.settings,
  };
}

/** Prints each distinct warning once (every worker thread reports the same failed MCP connection). */
export function warnOnce(note: (line: string) => void): (message: string) => void {
  const seen = new Set<string>();
  return (message) => {
    if (seen.has(message)) return;
    seen.add(message);
    note(`warning: ${message}`);
  };
}
