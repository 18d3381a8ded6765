import type { CaseRecord } from "./store/case-record.ts";

/**
 * The least a history needs of a recorded case, and how its outcome reads. Pure; no I/O.
 * A `CaseRecord` from the store fits; so does a literal in a test.
 */

/**
 * One case of one run, as history logic sees it: the record's verdict, the numeric judge's score
 * (1-10) and the scorer's value (0-1), each null when absent, and the duration in seconds.
 */
export type HistoryCase = Pick<CaseRecord, "name" | "passed" | "skipped" | "judgeScore" | "scoreValue" | "durationSeconds">;

/** A case's outcome in one run: a skipped case was not run, so it neither passed nor failed. */
export type Outcome = "pass" | "fail" | "skip";

/** The outcome of a recorded case. */
export function outcomeOf(c: HistoryCase): Outcome {
  if (c.skipped) return "skip";
  return c.passed ? "pass" : "fail";
}
