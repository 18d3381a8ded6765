// runs in: both
import type { RunEvent } from "./case/agent.ts";
import type { Case } from "./case/case.ts";
import type { CaseResult } from "./result/result.ts";
import { describeError } from "./errors.ts";

/**
 * The presentation hooks of a run (`onCaseStart`, `onCaseEnd`, `onRunEvent`), and how every runner
 * calls them: synchronously, with a throw or a returned promise recorded on the case instead of
 * breaking the run. Shared by the case lifecycle, the local runners and the distributed run.
 */

/** Presentation hooks. All are sync; a throw or a returned promise is recorded on the case as `hook: ...`. */
export interface SuiteHooks {
  /** Before a case runs (not for skipped cases). */
  onCaseStart?: ((c: Case) => unknown) | null;
  /** After a case ends, skipped cases included. */
  onCaseEnd?: ((c: Case, result: CaseResult) => unknown) | null;
  /** Every streamed event except the final output. */
  onRunEvent?: ((c: Case, event: RunEvent) => unknown) | null;
}

/** Only the presentation hooks of a runner's options (which carry much else). */
export function hooksOf(options: SuiteHooks): SuiteHooks {
  return { onCaseStart: options.onCaseStart, onCaseEnd: options.onCaseEnd, onRunEvent: options.onRunEvent };
}

/** Message of the TypeError recorded when a presentation hook returns a promise. */
export const SYNC_HOOK_MESSAGE = "presentation hooks must be sync callables; use setup/teardown for async work";

/**
 * Calls a presentation hook, which must be sync. A throw, or a returned promise, is recorded as
 * `hook: <name> <Error>: <message>` through `record`. Returns false when the hook failed.
 */
export function callSyncHook(name: string, call: () => unknown, record: (message: string) => void): boolean {
  try {
    const ret = call();
    if (isThenable(ret)) {
      // The async work has started and cannot be stopped; keep its failure from crashing the process.
      Promise.resolve(ret).catch(() => undefined);
      throw new TypeError(SYNC_HOOK_MESSAGE);
    }
    return true;
  } catch (err) {
    record(`hook: ${name} ${describeError(err)}`);
    return false;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";
}
