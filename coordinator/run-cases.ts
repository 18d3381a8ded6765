import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import type { SuiteResult } from "../shared/result.ts";
import type { Logger } from "../shared/logger.ts";
import type { McpClientLike } from "../shared/mcp-client.ts";
import { DEFAULT_TIMEOUT_SECONDS, runCase } from "../worker/lifecycle.ts";
import { McpSession } from "../worker/mcp.ts";
import { runSelected, type EngineOptions } from "./engine.ts";
import { selectCases, type Selector } from "./select.ts";

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
}

/**
 * Runs cases in the calling thread and returns their results in declaration order.
 * `concurrency` (default 1) keeps Agno's sequential order; results are ordered whatever it is.
 * An empty selection returns an empty, failing SuiteResult; nothing throws for a case's failure.
 */
export async function runCases(cases: readonly Case[], options: RunCasesOptions = {}): Promise<SuiteResult> {
  const selected = selectCases(cases, options);
  const defaultTimeout = options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  const mcp = selected.length > 0 && options.mcpClients?.length ? new McpSession(options.mcpClients, { logger: options.logger, onWarning: options.onWarning }) : null;
  try {
    return await runSelected(
      selected,
      async (sel, ctx) => {
        // Before the first case, once (later cases wait for the same connection).
        await mcp?.ensureConnected(ctx.signal);
        return runCase(sel.case, {
          index: sel.index,
          defaultTimeout,
          judgeModel: options.judgeModel ?? null,
          signal: ctx.signal,
          onRunEvent: ctx.onRunEvent,
          logger: options.logger,
        });
      },
      options,
    );
  } finally {
    await mcp?.close();
  }
}
