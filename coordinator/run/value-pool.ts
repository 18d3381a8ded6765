/**
 * One copy of the values that results repeat, for results held in memory (a run without a spool, trials waiting to be folded):
 * a parsed message brings its own copy of every string (the worker's id, the agent's id, the run
 * status) and of every list (a case's tags, the tools it called), the same in most results.
 * Interned, a 100,000-case run keeps one of each instead of 100,000 (docs/design.md, "What a case
 * costs the coordinator"). Pure; no I/O.
 *
 * Bounded: at most {@link ValuePoolOptions.limit} distinct values of each kind are kept; past it a
 * value passes as it came, so a run of all-different values costs no more than without the pool.
 */

/** Options of a {@link ValuePool}. */
export interface ValuePoolOptions {
  /** Distinct strings, and distinct lists, kept at most. Default 256 of each. */
  limit?: number;
}

/** Lists longer than this (elements) are not interned: they are seldom the same twice. */
const MAX_LIST_ELEMENTS = 16;
/** Strings, and lists' joined elements, longer than this (characters) are not interned. */
const MAX_CHARS = 256;

/** Interns short strings and frozen lists of strings, up to a bound. */
export class ValuePool {
  readonly #limit: number;
  readonly #strings = new Map<string, string>();
  readonly #lists = new Map<string, readonly string[]>();

  constructor(options: ValuePoolOptions = {}) {
    this.#limit = options.limit ?? 256;
  }

  /** The pool's copy of `value` (null and long strings as they are). */
  string<T extends string | null | undefined>(value: T): T {
    if (typeof value !== "string" || value.length > MAX_CHARS) return value;
    const kept = this.#strings.get(value);
    if (kept !== undefined) return kept as T;
    if (this.#strings.size < this.#limit) this.#strings.set(value, value);
    return value;
  }

  /**
   * The pool's copy of a list equal to `list`, element by element. Only frozen lists are shared (a
   * parsed message's are: its schema makes them read-only), so no holder can change another's.
   */
  list(list: readonly string[]): readonly string[] {
    if (!Object.isFrozen(list) || list.length > MAX_LIST_ELEMENTS) return list;
    let chars = 0;
    for (const s of list) {
      if (typeof s !== "string") return list;
      chars += s.length + 1;
    }
    if (chars > MAX_CHARS) return list;
    const key = JSON.stringify(list);
    const kept = this.#lists.get(key);
    if (kept !== undefined) return kept;
    if (this.#lists.size < this.#limit) this.#lists.set(key, list);
    return list;
  }
}
