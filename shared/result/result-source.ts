// runs in: both
/**
 * Where a run's case results come from, in declaration order (issue 29): a {@link SuiteResult}
 * walks its results through one, so a distributed run's coordinator need not hold every result
 * until its reports are written. A run of this process's cases has its results in memory
 * ({@link arrayResultSource}); a distributed run's are read back one at a time from the file its
 * collector appended them to (coordinator/run/result-spool.ts). `R` is `CaseResult` (a
 * parameter: the module defining it imports this one).
 */
export interface ResultSource<R> extends Iterable<R> {
  /** How many cases the run has (the results the iterator yields). */
  readonly size: number;
  /**
   * True when each walk yields fresh copies (read from a file): a change made to one is not kept,
   * so the run's figures can be computed once. False when it yields the same objects each time.
   */
  readonly readsCopies: boolean;
  /** Lets go of what holds the results (a file): nothing can be read afterwards. Optional; idempotent. */
  close?(): void;
}

/** A source over results held in memory (the same objects at each walk). */
export function arrayResultSource<R>(results: readonly R[]): ResultSource<R> & { readonly results: readonly R[] } {
  return {
    results,
    get size() {
      return results.length;
    },
    readsCopies: false,
    [Symbol.iterator]: () => results[Symbol.iterator](),
  };
}
