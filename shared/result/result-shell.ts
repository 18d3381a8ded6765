// runs in: both
import type { Case } from "../case/case.ts";
import { CaseResult } from "./result.ts";

/**
 * The result shell of a case: its identity, nothing run yet. Every side builds results from it
 * (the case lifecycle, the pool for a case whose thread died, the dispatch loop for a skipped case,
 * the worker for a case it refuses), so a result names its case the same way wherever it was made.
 */

/** Recorded for a case that was running when its suite was cancelled. */
export const CANCELLED_IN_FLIGHT_ERROR = "cancelled: suite cancelled while the case was running";
/** Error of a case cancelled after it was handed to a thread but before anything of it ran (no setup, no agent). */
export const CANCELLED_BEFORE_START_ERROR = "skipped: suite cancelled before the case started";

/** Builds the result shell of a case: name, tags, declaration index, its id, and its agent or team id; nothing run. */
export function resultShell(c: Case, index: number): CaseResult {
  const result = new CaseResult({ name: c.name, tags: c.tags, index, caseId: c.id ?? null });
  if (c.team) result.teamId = c.componentId;
  else result.agentId = c.componentId;
  return result;
}

/**
 * Restates why a case was skipped when it was skipped {@link CANCELLED_BEFORE_START_ERROR}: a
 * worker only knows its suite was cancelled, the coordinator knows why (aborted, budget, deadline,
 * a user's cancel). Returns whether it changed `result`.
 */
export function restateCancelledBeforeStart(result: CaseResult, skipReason: string): boolean {
  if (!result.skipped || result.error !== CANCELLED_BEFORE_START_ERROR) return false;
  result.error = `skipped: ${skipReason}`;
  return true;
}
