// runs in: both
import type { RedactShapes } from "../redaction/shapes.ts";
import type { Case } from "../case/case.ts";
import type { JudgeModel } from "../case/judge-model.ts";
import type { EvalFunctionsDefinition } from "../case/eval-functions.ts";
import type { McpClientLike } from "../case/mcp-client.ts";

/**
 * An Agno-style script (`cli(cases)` at the end of the file) declares its cases by calling
 * `cli()`: while evalfleet imports such a file, the call is captured instead of run, and its
 * cases become the suite's. The capture sits on a global slot (`Symbol.for`), so the `cli()` of
 * another copy of evalfleet (a suite's own install) is captured too.
 */

const LOADING = Symbol.for("evalfleet.loading");

/** What `cli(cases, options)` registers when it is called while a suite file is being loaded. */
export interface LoadCapture {
  cases?: readonly Case[];
  judgeModel?: JudgeModel | null;
  defaultTimeout?: number | null;
  mcpClients?: readonly McpClientLike[] | null;
  evalFunctions?: EvalFunctionsDefinition | null;
  redactShapes?: RedactShapes | null;
}

/** Whether a suite file is being loaded by evalfleet now (a `cli()` call would be captured). */
export function loadingSuite(): boolean {
  return Boolean((globalThis as Record<symbol, LoadCapture | undefined>)[LOADING]);
}

/**
 * Called by `cli()`: when a suite file is being loaded by evalfleet (a thread importing it, or
 * `evalfleet run`), records the cases and returns true, so the script does not run itself again.
 */
export function captureDuringLoad(
  cases: readonly Case[],
  options: { judgeModel?: JudgeModel | null; defaultTimeout?: number | null; mcpClients?: readonly McpClientLike[] | null; evalFunctions?: EvalFunctionsDefinition | null; redactShapes?: RedactShapes | null },
): boolean {
  const capture = (globalThis as Record<symbol, LoadCapture | undefined>)[LOADING];
  if (!capture) return false;
  capture.cases = cases;
  capture.judgeModel = options.judgeModel ?? null;
  capture.defaultTimeout = options.defaultTimeout ?? null;
  capture.mcpClients = options.mcpClients ?? null;
  capture.evalFunctions = options.evalFunctions ?? null;
  capture.redactShapes = options.redactShapes ?? null;
  return true;
}

/**
 * Captures `cli()` calls until `end()` is called: what a suite file being imported registers. A
 * capture begun inside another (a suite that loads a suite) hands the slot back to it at its end.
 */
export function beginLoadCapture(): { capture: LoadCapture; end: () => void } {
  const holder = globalThis as Record<symbol, LoadCapture | undefined>;
  const previous = holder[LOADING];
  const capture: LoadCapture = {};
  holder[LOADING] = capture;
  return { capture, end: () => void (holder[LOADING] = previous) };
}
