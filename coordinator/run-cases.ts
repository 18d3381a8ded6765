import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import type { SuiteResult } from "../shared/result.ts";
import type { Logger } from "../shared/logger.ts";
import type { McpClientLike } from "../shared/mcp-client.ts";
import pLimit from "p-limit";
import { DEFAULT_TIMEOUT_SECONDS, resultShell, runCase } from "../worker/lifecycle.ts";
import { McpSession } from "../worker/mcp.ts";
import { runRepeated } from "../worker/repeats.ts";
import { positiveInt, runSelected, type EngineOptions } from "./engine.ts";
import { checkPassThreshold, checkRepeat } from "./run-policy.ts";
import { selectCases, type Selector } from "./select.ts";
import { runCasesRecorded } from "./store/library.ts";
import type { DbOption } from "./store/record-run.ts";

/** Options of {@link runCases}. */
export interface RunCasesOptions extends EngineOptions, Selector {
  /** Per-case timeout in seconds when a case sets none. Default 120. */
  defaultTimeout?: number;
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
  /**
   * Record the run in a results store: a URL (`sqlite:PATH`, `postgres://...`; opened before the
   * first case, closed at the end) or a `ResultsStore` you opened and close. A store that cannot be
   * opened throws before any case runs; a failed write is a warning (`onWarning`), never a failed
   * case. Default: not recorded.
   */
  db?: DbOption | null;
  /** Bound on connecting to the store, each write and the final flush, in seconds. Default 10. */
  dbTimeout?: number;
  /** The suite name the run is recorded under (history, `--fail-on-regression`). Default `"evals"`. */
  suiteName?: string;
}

/**
 * Runs cases in the calling thread and returns their results in declaration order.
 * `concurrency` (default 1) keeps Agno's sequential order; results are ordered whatever it is.
 * An empty selection returns an empty, failing SuiteResult; nothing throws for a case's failure.
 */
export async function runCases(cases: readonly Case[], options: RunCasesOptions = {}): Promise<SuiteResult> {
  if (options.db) return runCasesRecorded(cases, options, runCases);
  const selected = selectCases(cases, options);
  const defaultTimeout = options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  const repeat = checkRepeat(options.repeat);
  const passThreshold = checkPassThreshold(options.passThreshold);
  // Repeats share the concurrency with every other run, so `concurrency: 1` stays one run at a time.
  const runs = repeat > 1 ? pLimit(positiveInt(options.concurrency, "concurrency", 1)) : null;
  const mcp = selected.length > 0 && options.mcpClients?.length ? new McpSession(options.mcpClients, { logger: options.logger, onWarning: options.onWarning }) : null;
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        // Before the first case, once (later cases wait for the same connection).
        await mcp?.ensureConnected(ctx.signal);
        const once = async (): Promise<{ result: Awaited<ReturnType<typeof runCase>> }> => ({
          result: await runCase(sel.case, {
            index: sel.index,
            defaultTimeout,
            judgeModel: options.judgeModel ?? null,
            signal: ctx.signal,
            onRunEvent: ctx.onRunEvent,
            logger: options.logger,
          }),
        });
        return (await runRepeated(repeat, once, { limit: runs, signal: ctx.signal, shell: () => resultShell(sel.case, sel.index) })).result;
      },
      { ...options, repeat, passThreshold },
    );
  } finally {
    await mcp?.close();
  }
}
