import type { HistoryCase } from "../../coordinator/history/outcome.ts";

/** A scripted case: `P` passed, `F` failed, `S` skipped; scores optional. */
export function historyCase(name: string, outcome: "P" | "F" | "S", judgeScore: number | null = null, scoreValue: number | null = null): HistoryCase {
  return { name, passed: outcome === "P", skipped: outcome === "S", judgeScore, scoreValue, durationSeconds: 0.1 };
}
