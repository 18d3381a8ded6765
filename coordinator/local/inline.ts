import type { JudgeModel } from "../../shared/case/judge-model.ts";
import type { SuiteResult } from "../../shared/result/result.ts";
import type { Logger } from "../../shared/logger.ts";
import type { McpClientLike } from "../../shared/case/mcp-client.ts";
import { BlockWatchdog } from "../../shared/process/block-watchdog.ts";
import type { Case } from "../../shared/case/case.ts";
import { ExitCode } from "../run/exit-code.ts";
import { CANCELLED_IN_FLIGHT_ERROR, resultShell } from "../../shared/result/result-shell.ts";
import type { EvalFunctions } from "../../shared/case/eval-functions.ts";
import type { RunOutput } from "../../shared/case/agent.ts";
import type { ThreadCache } from "../../shared/wire/thread.ts";
import pLimit from "p-limit";
import { runCase } from "../../worker/runtime/lifecycle.ts";
import { FileResponseStore } from "../../worker/models/file-cache.ts";
import { McpSession } from "../../shared/suite/mcp-session.ts";
import { executeCase } from "../../shared/trials/execute-case.ts";
import { casePassRateOf } from "../../shared/trials/case-pass-rule.ts";
import { configureProcessLimits } from "../../shared/providers/process-limiter.ts";
import { positiveInt, runSelected, type EngineOptions } from "../run/dispatch-loop.ts";
import { engineSettings, type RunSettingsFields } from "../run/settings-options.ts";
import type { RunSettings } from "../../shared/run-settings.ts";
import type { SelectedCase } from "../run/select.ts";

/**
 * The inline runner: the selected cases run in the calling thread. It knows nothing of the
 * selection (it is handed the selected cases) nor of the results store (the public `runCases` in
 * coordinator/api.ts wraps it with recording from outside).
 */

/** Options of {@link runInline}: the run's compiled settings, and what only this runner needs. */
export interface InlineRunOptions extends Omit<EngineOptions, RunSettingsFields> {
  /** The run's compiled settings (compileRunSettings): timeouts, bounds, repeats, retries, threshold, limits, prices, budget, grace. */
  settings: RunSettings;
  /**
   * Configure this thread's limiter with `settings.limits`. Default true; the library's `runCases`
   * passes false when it was given no limits, so a call without them leaves the limiter as it is.
   */
  configureLimits?: boolean;
  /**
   * End the process (exit 3, one line on stderr) when a case blocks this thread with synchronous
   * code past its phase's deadline plus `settings.graceMs`: nothing else could stop it, not even
   * SIGTERM or Ctrl-C (the command line's `--threads 0` and `cli(cases)`). Default false (a
   * library call never ends its caller's process).
   */
  exitWhenBlocked?: boolean;
  /** Suite-wide judge model; a case's own wins. */
  judgeModel?: JudgeModel | null;
  /** Debug details; default silent (the runner never prints). */
  logger?: Logger;
  /**
   * MCP clients the cases' agents use: connected before the first case runs (not at all when
   * nothing is selected), closed at the end; one already connected stays the caller's.
   */
  mcpClients?: readonly McpClientLike[] | null;
  /** Told each warning (a failed MCP connection) as one line. Default: logged at warn. */
  onWarning?: ((message: string) => void) | null;
  /** The evaluation functions the cases' `evalFunctions` and `runEvalFunctions` name, by name. Default none. */
  evalFunctions?: EvalFunctions | null;
  /**
   * A regrade: each selected case's stored output, graded instead of running its agent (setup and
   * teardown do not run). Read one case at a time, as the case starts. Default: the agents run.
   */
  replayOf?: ((selected: SelectedCase) => Promise<RunOutput>) | null;
  /** The response cache of the built-in model clients (`--cache`): a folder (`kind: "local"`). Default none. */
  cache?: ThreadCache | null;
}

/**
 * Runs the selected cases in the calling thread and returns their results in declaration order.
 * `concurrency` (compiled by the caller: coordinator/library-config.ts, the CLI's config; 1 keeps
 * Agno's sequential order); results are ordered whatever it is. An empty selection returns an empty, failing SuiteResult;
 * nothing throws for a case's failure.
 */
export async function runInline(selected: readonly SelectedCase[], options: InlineRunOptions): Promise<SuiteResult> {
  const { settings } = options;
  // Repeats share the concurrency with every other run, so `concurrency: 1` stays one run at a time.
  const runs = settings.repeatMax > 1 ? pLimit(positiveInt(options.concurrency, "concurrency")) : null;
  const mcp = selected.length > 0 && options.mcpClients?.length ? new McpSession(options.mcpClients, { logger: options.logger, onWarning: options.onWarning }) : null;
  // The limiter of this thread paces every model call of the cases (docs/providers.md).
  if (options.configureLimits !== false) configureProcessLimits(settings.limits);
  const guard = options.exitWhenBlocked && selected.length > 0 ? blockGuard(settings.graceMs / 1000) : null;
  // In this thread a folder is the only cache there is (the shared one lives behind a worker's pool).
  const cache = options.cache?.kind === "local" ? { store: new FileResponseStore(options.cache.dir), ttlSeconds: options.cache.ttlSeconds } : null;
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        // Before the first case, once (later cases wait for the same connection).
        await mcp?.ensureConnected(ctx.signal);
        const replay = options.replayOf ? await options.replayOf(sel) : null;
        const oneRun = async (repeatIndex: number): Promise<{ result: Awaited<ReturnType<typeof runCase>> }> => ({
          result: await runCase(sel.case, {
            index: sel.index,
            defaultTimeout: settings.defaultTimeoutSeconds,
            setupTimeout: settings.setupTimeoutSeconds,
            teardownTimeout: settings.teardownTimeoutSeconds,
            maxOutputBytes: settings.maxOutputBytes,
            judgeModel: options.judgeModel ?? null,
            signal: ctx.signal,
            onRunEvent: ctx.onRunEvent,
            logger: options.logger,
            evalFunctions: options.evalFunctions ?? null,
            runEvalFunctions: settings.evalFunctions,
            scoringMethod: settings.scoringMethod,
            maxTranscriptBytes: settings.maxTranscriptBytes,
            ...(replay ? { replay } : {}),
            repeat: repeatIndex,
            cache,
            cassette: settings.cassette,
            ...(guard ? { observer: guard.observe(sel.case) } : {}),
          }),
        });
        const timeoutSeconds = sel.case.resolveTimeout(settings.defaultTimeoutSeconds);
        const shell = (): ReturnType<typeof resultShell> => resultShell(sel.case, sel.index);
        const passRate = casePassRateOf(sel.case.passRate, settings.casePassRate);
        return (await executeCase(settings, oneRun, { timeoutSeconds, signal: ctx.signal, limit: runs, shell, passRate, trialsAllowed: ctx.trialsAllowed })).result;
      },
      { ...options, ...engineSettings(settings) },
    );
  } finally {
    await mcp?.close();
    guard?.afterRun();
  }
}

/** After-run watch: how long the main thread must be silent, in ms (a long synchronous report write is not a blocked case). */
const AFTER_RUN_SILENT_MS = 5_000;

/**
 * Arms the process's block watchdog at each phase's deadline plus the grace: a case that blocks
 * this thread past it ends the process with exit 3 and one line saying which case and phase.
 * `observe` gives each case's lifecycle its observer. `afterRun` (when the run is over) keeps a
 * watch when a case's run was left behind (timed out, or cancelled in flight): its code may still
 * start blocking this thread once its case has ended, even after the report; then the process
 * exits with the command's exit code instead of hanging.
 */
function blockGuard(graceSeconds: number): { observe: (c: Case) => NonNullable<Parameters<typeof runCase>[1]>["observer"]; afterRun: () => void } {
  const watchdog = BlockWatchdog.get();
  const leftBehind: string[] = [];
  return {
    observe: (c) => {
      let armed: number | null = null;
      return {
        onPhase: (phase, info, result) => {
          if (armed !== null) watchdog.disarm(armed);
          armed = null;
          if (phase === "done") {
            if (result.timedOut || result.error?.includes(CANCELLED_IN_FLIGHT_ERROR)) leftBehind.push(c.name);
            return;
          }
          if (info.deadline === undefined) return;
          const what = phase === "run" ? "its run's timeout" : `its ${phase} hook's bound`;
          armed = watchdog.arm(
            info.deadline + graceSeconds * 1000,
            `evalfleet: case '${c.name}' is blocking the main thread (no heartbeat for {blocked}s) past ${what} plus the grace (${graceSeconds}s): ` +
              `synchronous code that never yields ignores every timeout and signal in --threads 0; no report was written; exiting ${ExitCode.Incomplete} ` +
              "(run with --threads 1 or more, where such a case costs only its thread)",
            ExitCode.Incomplete,
          );
        },
      };
    },
    afterRun: () => {
      if (leftBehind.length === 0) return;
      const names = leftBehind.slice(0, 3).map((n) => `'${n}'`).join(", ") + (leftBehind.length > 3 ? `, and ${leftBehind.length - 3} more` : "");
      watchdog.armAfterRun(
        Date.now() + graceSeconds * 1000,
        `evalfleet: the run is over, but code a case left running (${names}: timed out or cancelled while its agent ran) is blocking the main thread ` +
          "(no heartbeat for {blocked}s) in --threads 0; exiting with the run's exit code (3 when it had not finished reporting)",
        ExitCode.Incomplete,
        AFTER_RUN_SILENT_MS,
      );
    },
  };
}
