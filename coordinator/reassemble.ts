import type { CaseResult } from "../shared/result.ts";
import type { SelectedCase } from "./select.ts";
import { resultShell } from "../worker/lifecycle.ts";

/**
 * Folding results that arrive in any order, any number of times, into declaration order.
 * Pure; no I/O. Every selected case is accounted for exactly once.
 */

/** What {@link ResultCollector.add} did with a result. */
export type CollectOutcome = "accepted" | "duplicate" | "unknown";

/** Keeps the first result per selected index; later duplicates and unknown indices are refused. */
export class ResultCollector {
  readonly #selected: ReadonlyMap<number, SelectedCase>;
  readonly #results = new Map<number, CaseResult>();

  constructor(selected: readonly SelectedCase[]) {
    this.#selected = new Map(selected.map((s) => [s.index, s]));
  }

  /** Offers a result; the first one per index wins. */
  add(result: CaseResult): CollectOutcome {
    const sel = this.#selected.get(result.index);
    if (!sel || sel.case.name !== result.name) return "unknown";
    if (this.#results.has(result.index)) return "duplicate";
    this.#results.set(result.index, result);
    return "accepted";
  }

  has(index: number): boolean {
    return this.#results.has(index);
  }

  /** How many selected cases have a result. */
  get size(): number {
    return this.#results.size;
  }

  /** True once every selected case has a result. */
  get complete(): boolean {
    return this.#results.size === this.#selected.size;
  }

  /** The selected cases still without a result, in declaration order. */
  missing(): SelectedCase[] {
    return [...this.#selected.values()].filter((s) => !this.#results.has(s.index)).sort((a, b) => a.index - b.index);
  }

  /** Results in declaration order; a case without one becomes a skipped result with `skipped: {reason}`. */
  finish(skipReason: string): CaseResult[] {
    return reassemble([...this.#selected.values()], this.#results, skipReason);
  }
}

/** Results in the order of `selected`; a case without a result becomes skipped with `skipped: {reason}`. */
export function reassemble(selected: readonly SelectedCase[], results: ReadonlyMap<number, CaseResult>, skipReason: string): CaseResult[] {
  return [...selected]
    .sort((a, b) => a.index - b.index)
    .map((s) => results.get(s.index) ?? skippedResult(s, skipReason));
}

/** A skipped result: nothing ran, no session, duration 0 (spec M2). */
export function skippedResult(s: SelectedCase, reason: string): CaseResult {
  const result = resultShell(s.case, s.index);
  result.skipped = true;
  result.error = `skipped: ${reason}`;
  return result;
}
