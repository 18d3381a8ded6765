import type { CaseResult } from "../../shared/result/result.ts";
import type { SelectedCase } from "./select.ts";
import { resultShell } from "../../shared/result/result-shell.ts";

/**
 * Folding results that arrive in any order, any number of times, into declaration order.
 * Pure; no I/O. Every selected case is accounted for exactly once.
 */

/** What {@link ResultCollector.add} did with a result. */
export type CollectOutcome = "accepted" | "duplicate" | "unknown";

/**
 * Keeps the first result per selected index; later duplicates and unknown indices are refused.
 * Results sit in an array indexed by the case's declaration index, not a Map: a 100,000-case run
 * holds one pointer per case instead of a hash entry, and declaration order is the array's order.
 */
export class ResultCollector {
  /** The selected cases by declaration index (holes where a case is not selected). */
  readonly #selected: Array<SelectedCase | undefined> = [];
  /** The selected cases in declaration order. */
  readonly #ordered: readonly SelectedCase[];
  readonly #results: Array<CaseResult | undefined> = [];
  #size = 0;

  constructor(selected: readonly SelectedCase[]) {
    const ordered: SelectedCase[] = [];
    for (const s of [...selected].sort((a, b) => a.index - b.index)) {
      if (this.#selected[s.index]) continue;
      this.#selected[s.index] = s;
      ordered.push(s);
    }
    this.#ordered = ordered;
  }

  /** The selected case at a declaration index, if that case is selected. */
  selectedAt(index: number): SelectedCase | undefined {
    return this.#selected[index];
  }

  /** Offers a result; the first one per index wins. */
  add(result: CaseResult): CollectOutcome {
    const sel = this.#selected[result.index];
    if (!sel || sel.case.name !== result.name) return "unknown";
    if (this.#results[result.index]) return "duplicate";
    this.#results[result.index] = result;
    this.#size++;
    return "accepted";
  }

  has(index: number): boolean {
    return this.#results[index] !== undefined;
  }

  /** How many selected cases have a result. */
  get size(): number {
    return this.#size;
  }

  /** True once every selected case has a result. */
  get complete(): boolean {
    return this.#size === this.#ordered.length;
  }

  /** The selected cases still without a result, in declaration order. */
  missing(): SelectedCase[] {
    return this.#ordered.filter((s) => this.#results[s.index] === undefined);
  }

  /** Results in declaration order; a case without one becomes a skipped result with `skipped: {reason}`. */
  finish(skipReason: string): CaseResult[] {
    return reassemble(this.#ordered, (index) => this.#results[index], skipReason);
  }
}

/** Results in the order of `selected`; a case without a result becomes skipped with `skipped: {reason}`. */
export function reassemble(selected: readonly SelectedCase[], resultAt: (index: number) => CaseResult | undefined, skipReason: string): CaseResult[] {
  return [...selected].sort((a, b) => a.index - b.index).map((s) => resultAt(s.index) ?? skippedResult(s, skipReason));
}

/** A skipped result: nothing ran, no session, duration 0 (spec M2). */
export function skippedResult(s: SelectedCase, reason: string): CaseResult {
  const result = resultShell(s.case, s.index);
  result.skipped = true;
  result.error = `skipped: ${reason}`;
  return result;
}
