import type { JudgeModel } from "../../shared/judge-model.ts";
import type { SuiteResult } from "../../shared/result.ts";
import type { Logger } from "../../shared/logger.ts";
import type { McpClientLike } from "../../shared/mcp-client.ts";
import { DEFAULT_GRACE_SECONDS, DEFAULT_INLINE_CONCURRENCY } from "../../shared/defaults.ts";
import { BlockWatchdog } from "../../shared/block-watchdog.ts";
import type { Case } from "../../shared/case.ts";
import { ExitCode } from "../run/exit-code.ts";
import { CANCELLED_IN_FLIGHT_ERROR, resultShell } from "../../shared/result-shell.ts";
import type { EvalFunctions } from "../../shared/eval-functions.ts";
import type { ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";
import type { RunOutput } from "../../shared/agent.ts";
import type { ThreadCache } from "../../shared/wire/thread.ts";
import pLimit from "p-limit";
import { runCase } from "../../worker/runtime/lifecycle.ts";
import { FileResponseStore } from "../../worker/models/file-cache.ts";
import { McpSession } from "../../shared/mcp-session.ts";
import { runRepeated } from "../../shared/repeats.ts";
import { withInfraRetries } from "../../shared/infra-retry.ts";
import { configureProcessLimits } from "../../shared/limits/process-limiter.ts";
import { positiveInt, runSelected, type EngineOptions } from "../run/dispatch-loop.ts";
import { checkPassThreshold, checkRepeat } from "../run/policy.ts";
import type { SelectedCase } from "../run/select.ts";

/**
 * The inline runner: the selected cases run in the calling thread. It knows nothing of the
 * selection (it is handed the selected cases) nor of the results store (the public `runCases` in
 * coordinator/api.ts wraps it with recording from outside).
 */

/** Options of {@link runInline}. */
export interface InlineRunOptions extends EngineOptions {
  /** Per-case timeout in seconds for cases that set none, already resolved (`resolveDefaultTimeout`). */
  defaultTimeout: number;
  /** Setup and teardown bounds in seconds for cases that set none, resolved (`resolveHookTimeouts`). Default 60 each. */
  hookDefaults?: { setup: number; teardown: number };
  /** Largest output kept on a result, in bytes. Default 256 KiB. */
  maxOutputBytes?: number;
  /**
   * End the process (exit 3, one line on stderr) when a case blocks this thread with synchronous
   * code past its phase's deadline plus `graceSeconds`: nothing else could stop it, not even
   * SIGTERM or Ctrl-C (the command line's `--threads 0` and `cli(cases)`). Default false (a
   * library call never ends its caller's process).
   */
  exitWhenBlocked?: boolean;
  /** Seconds past a deadline before a blocked process is ended ({@link exitWhenBlocked}). Default {@link DEFAULT_GRACE_SECONDS}. */
  graceSeconds?: number;
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
  /** Evaluation functions that grade every case, after its own (`--eval-function`), already checked against `evalFunctions`. Default none. */
  runEvalFunctions?: readonly string[] | null;
  /** A scoring method that replaces every expected-output check's own (`--scoring-method`). Default none. */
  scoringMethod?: ScoringMethod | null;
  /** Keep each case's transcript within this many bytes (a recorded run, `--max-transcript-kb`). Default 0: none. */
  maxTranscriptBytes?: number;
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
 * `concurrency` (default {@link DEFAULT_INLINE_CONCURRENCY}) keeps Agno's sequential order;
 * results are ordered whatever it is. An empty selection returns an empty, failing SuiteResult;
 * nothing throws for a case's failure.
 */
export async function runInline(selected: readonly SelectedCase[], options: InlineRunOptions): Promise<SuiteResult> {
  const repeat = checkRepeat(options.repeat);
  const passThreshold = checkPassThreshold(options.passThreshold);
  // Repeats share the concurrency with every other run, so `concurrency: 1` stays one run at a time.
  const runs = repeat > 1 ? pLimit(positiveInt(options.concurrency, "concurrency", DEFAULT_INLINE_CONCURRENCY)) : null;
  const mcp = selected.length > 0 && options.mcpClients?.length ? new McpSession(options.mcpClients, { logger: options.logger, onWarning: options.onWarning }) : null;
  // The limiter of this thread paces every model call of the cases (docs/providers.md).
  if (options.limits) configureProcessLimits(options.limits);
  const guard = options.exitWhenBlocked && selected.length > 0 ? blockGuard(options.graceSeconds ?? DEFAULT_GRACE_SECONDS) : null;
  // In this thread a folder is the only cache there is (the shared one lives behind a worker's pool).
  const cache = options.cache?.kind === "local" ? { store: new FileResponseStore(options.cache.dir), ttlSeconds: options.cache.ttlSeconds } : null;
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        // Before the first case, once (later cases wait for the same connection).
        await mcp?.ensureConnected(ctx.signal);
        const replay = options.replayOf ? await options.replayOf(sel) : null;
        const once = (repeatIndex: number): Promise<{ result: Awaited<ReturnType<typeof runCase>> }> =>
          withInfraRetries(() => oneRun(repeatIndex), { retries: options.retries ?? 0, signal: ctx.signal, timeoutSeconds: sel.case.resolveTimeout(options.defaultTimeout) });
        const oneRun = async (repeatIndex: number): Promise<{ result: Awaited<ReturnType<typeof runCase>> }> => ({
          result: await runCase(sel.case, {
            index: sel.index,
            defaultTimeout: options.defaultTimeout,
            ...(options.hookDefaults ? { setupTimeout: options.hookDefaults.setup, teardownTimeout: options.hookDefaults.teardown } : {}),
            ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
            judgeModel: options.judgeModel ?? null,
            signal: ctx.signal,
            onRunEvent: ctx.onRunEvent,
            logger: options.logger,
            evalFunctions: options.evalFunctions ?? null,
            runEvalFunctions: options.runEvalFunctions ?? null,
            scoringMethod: options.scoringMethod ?? null,
            maxTranscriptBytes: options.maxTranscriptBytes ?? 0,
            ...(replay ? { replay } : {}),
            repeat: repeatIndex,
            cache,
            ...(guard ? { observer: guard.observe(sel.case) } : {}),
          }),
        });
        return (await runRepeated(repeat, once, { limit: runs, signal: ctx.signal, shell: () => resultShell(sel.case, sel.index) })).result;
      },
      { ...options, repeat, passThreshold },
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
