import { outcomeOf, type HistoryCase, type Outcome } from "./outcome.ts";

/**
 * `evalfleet compare A B`: what changed between two runs of a suite, case by case (matched by
 * name, since indices move when cases are added). Pure; no I/O.
 */

/** A score that changed between the runs (`null` on a side where the case had none). */
export interface ScoreChange {
  name: string;
  judge: { from: number | null; to: number | null } | null;
  scorer: { from: number | null; to: number | null } | null;
}

/** The comparison of run A (older) with run B (newer). Every list is in B's order, then A's for cases only in A. */
export interface RunComparison {
  /** Passed in A, failed in B (a case skipped in B did not run, so it is not here). */
  regressions: string[];
  /** Failed in A, passed in B. */
  fixes: string[];
  /** Judge score or scorer value changed (in either direction). */
  scoreChanges: ScoreChange[];
  /** Ran in A, skipped in B, or the other way round. */
  skipChanges: Array<{ name: string; from: Outcome; to: Outcome }>;
  onlyInA: string[];
  onlyInB: string[];
  /** Cases in both runs with the same outcome. */
  unchanged: number;
}

/** Compares run A with run B; see {@link RunComparison}. */
export function compareRuns(a: readonly HistoryCase[], b: readonly HistoryCase[]): RunComparison {
  const before = new Map(a.map((c) => [c.name, c]));
  const names = new Set(b.map((c) => c.name));
  const out: RunComparison = { regressions: [], fixes: [], scoreChanges: [], skipChanges: [], onlyInA: [], onlyInB: [], unchanged: 0 };
  for (const now of b) {
    const was = before.get(now.name);
    if (!was) {
      out.onlyInB.push(now.name);
      continue;
    }
    const from = outcomeOf(was);
    const to = outcomeOf(now);
    if (from === "pass" && to === "fail") out.regressions.push(now.name);
    else if (from === "fail" && to === "pass") out.fixes.push(now.name);
    else if (from !== to) out.skipChanges.push({ name: now.name, from, to });
    else out.unchanged++;
    const judge = was.judgeScore !== now.judgeScore ? { from: was.judgeScore, to: now.judgeScore } : null;
    const scorer = was.scoreValue !== now.scoreValue ? { from: was.scoreValue, to: now.scoreValue } : null;
    if (judge || scorer) out.scoreChanges.push({ name: now.name, judge, scorer });
  }
  for (const was of a) if (!names.has(was.name)) out.onlyInA.push(was.name);
  return out;
}
