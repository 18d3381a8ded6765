import type { CaseResult } from "../../shared/result/result.ts";
import type { SelectedCase } from "./select.ts";
import { resultShell } from "../../shared/result/result-shell.ts";
import { arrayResultSource, type ResultSource } from "../../shared/result/result-source.ts";

/**
 * Folding results that arrive in any order, any number of times, into declaration order. Every
 * selected case is accounted for exactly once. Pure, unless given a {@link ResultKeep} that writes
 * (a distributed run's spool, coordinator/run/result-spool.ts).
 */

/**
 * Where a collector keeps its accepted results when they are not held in memory: a copy taken at
 * {@link ResultCollector.keep}, read back by index (a fresh object each read).
 */
export interface ResultKeep {
  put(result: CaseResult): void;
  get(index: number): CaseResult | undefined;
  close(): void;
}

/** Options of {@link ResultCollector.finishSource}. */
export interface FinishOptions {
  /** Told each case skipped here (it had no result), before it is kept: a hook may still add to it. */
  onSkipped?: (result: CaseResult, sel: SelectedCase) => void;
  /** Offered each accepted skipped result (from a worker) before the source is built; returns whether it changed it. */
  fixSkipped?: (result: CaseResult) => boolean;
}

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
  /** Accepted results held in memory (without a keep). */
  readonly #results: Array<CaseResult | undefined> = [];
  /** With a keep: per declaration index, 0 (none), 1 (accepted) or 2 (accepted, skipped). */
  readonly #marks: Uint8Array | null;
  readonly #keep: ResultKeep | null;
  #size = 0;

  /**
   * `keep`: where accepted results go instead of memory (each copied at {@link keep}); default none:
   * the results are held, and {@link finish} returns them.
   */
  constructor(selected: readonly SelectedCase[], keep: ResultKeep | null = null) {
    const ordered: SelectedCase[] = [];
    for (const s of [...selected].sort((a, b) => a.index - b.index)) {
      if (this.#selected[s.index]) continue;
      this.#selected[s.index] = s;
      ordered.push(s);
    }
    this.#ordered = ordered;
    this.#keep = keep;
    this.#marks = keep ? new Uint8Array(this.#selected.length) : null;
  }

  /** The selected case at a declaration index, if that case is selected. */
  selectedAt(index: number): SelectedCase | undefined {
    return this.#selected[index];
  }

  /** Offers a result; the first one per index wins. */
  add(result: CaseResult): CollectOutcome {
    const sel = this.#selected[result.index];
    if (!sel || sel.case.name !== result.name) return "unknown";
    if (this.has(result.index)) return "duplicate";
    if (this.#marks) this.#marks[result.index] = result.skipped ? 2 : 1;
    else this.#results[result.index] = result;
    this.#size++;
    return "accepted";
  }

  /**
   * Keeps an accepted result as it is now, once its hooks have run: with a keep, a copy goes to it
   * (later changes to the object are not kept); in memory the object itself is already held.
   */
  keep(result: CaseResult): void {
    if (this.#keep && this.#marks![result.index]) this.#keep.put(result);
  }

  has(index: number): boolean {
    return this.#marks ? this.#marks[index]! > 0 : this.#results[index] !== undefined;
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
    return this.#ordered.filter((s) => !this.has(s.index));
  }

  /** Results in declaration order; a case without one becomes a skipped result with `skipped: {reason}`. Results in memory only. */
  finish(skipReason: string): CaseResult[] {
    if (this.#keep) throw new Error("ResultCollector.finish: the results are in a keep; use finishSource");
    return reassemble(this.#ordered, (index) => this.#results[index], skipReason);
  }

  /**
   * Every case in declaration order as a {@link ResultSource}: a case without a result becomes a
   * skipped result with `skipped: {reason}` (told to `onSkipped`, then kept). With a keep the source
   * reads each result back as it is walked; in memory it holds them.
   */
  finishSource(skipReason: string, options: FinishOptions = {}): ResultSource<CaseResult> {
    const keep = this.#keep;
    if (!keep) {
      const results = this.finish(skipReason);
      for (const r of results) {
        if (!r.skipped) continue;
        if (!this.has(r.index)) options.onSkipped?.(r, this.#selected[r.index]!);
        else options.fixSkipped?.(r);
      }
      return arrayResultSource(results);
    }
    const marks = this.#marks!;
    for (const s of this.#ordered) {
      if (marks[s.index] === 0) {
        const r = skippedResult(s, skipReason);
        options.onSkipped?.(r, s);
        keep.put(r);
      } else if (marks[s.index] === 2 && options.fixSkipped) {
        const r = keep.get(s.index)!;
        if (options.fixSkipped(r)) keep.put(r);
      }
    }
    const ordered = this.#ordered;
    return {
      size: ordered.length,
      readsCopies: true,
      *[Symbol.iterator]() {
        for (const s of ordered) yield keep.get(s.index)!;
      },
      close: () => keep.close(),
    };
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
