import { createHash } from "node:crypto";
import type { RunRecord } from "./store/run-record.ts";

/**
 * Which runs can be compared in a trend: those that selected the same set of cases. A `--tag`
 * run beside full runs is not a dip in the pass rate, it is another selection. Pure; no I/O.
 */

/**
 * A key for the set of case names a run selected (order ignored): equal keys, same selection.
 * `null` when the run did not record its selected names (an AgentAsJudgeEval run records a count).
 */
export function selectionKey(run: Pick<RunRecord, "selection">): string | null {
  const cases = run.selection.cases;
  if (!Array.isArray(cases)) return null;
  const names = [...new Set(cases.map(String))].sort();
  return createHash("sha256").update(names.join("\u0000")).digest("hex").slice(0, 16);
}

/** The number of cases a run selected, when it recorded them. */
export function selectionSize(run: Pick<RunRecord, "selection">): number | null {
  const cases = run.selection.cases;
  return Array.isArray(cases) ? cases.length : typeof cases === "number" ? cases : null;
}
