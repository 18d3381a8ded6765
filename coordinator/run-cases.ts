import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import type { SuiteResult } from "../shared/result.ts";
import type { Logger } from "../shared/logger.ts";
import { DEFAULT_TIMEOUT_SECONDS, runCase } from "../worker/lifecycle.ts";
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
}

/**
 * Runs cases in the calling thread and returns their results in declaration order.
 * `concurrency` (default 1) keeps Agno's sequential order; results are ordered whatever it is.
 * An empty selection returns an empty, failing SuiteResult; nothing throws for a case's failure.
 */
export async function runCases(cases: readonly Case[], options: RunCasesOptions = {}): Promise<SuiteResult> {
  const selected = selectCases(cases, options);
  const defaultTimeout = options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  return runSelected(
    selected,
    (sel, ctx) =>
      runCase(sel.case, {
        index: sel.index,
        defaultTimeout,
        judgeModel: options.judgeModel ?? null,
        signal: ctx.signal,
        onRunEvent: ctx.onRunEvent,
        logger: options.logger,
      }),
    options,
  );
}
