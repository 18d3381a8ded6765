/**
 * The ETA of a run in progress from history: the expected seconds of the cases not finished
 * (those in flight less what they already ran), spread over the pool's slots. Unlike a rate
 * from the cases done so far, it knows the long case that has not started yet. Pure apart from
 * the clock it is given.
 */

/** Expected seconds by case name (coordinator/run/schedule-order.ts's `expectCase`). */
export type ExpectedSeconds = ReadonlyMap<string, number>;

/** Tracks which cases started and ended; {@link secondsLeft} is the estimate. */
export class HistoryEta {
  readonly #expected: ExpectedSeconds;
  readonly #slots: number;
  readonly #now: () => number;
  /** Expected seconds of the cases not started yet, summed. */
  #queued = 0;
  /** Distinct expectations of the cases not started, longest first, with how many cases have each; `#top` skips the used-up ones (counts only fall). */
  readonly #values: number[];
  readonly #counts = new Map<number, number>();
  #top = 0;
  readonly #pending = new Set<string>();
  /** Start time (ms on the clock) of each case in flight. */
  readonly #inFlight = new Map<string, number>();

  /** `names`: the cases of the run; `slots`: cases in flight at once; `now`: a clock in ms (default `performance.now`). */
  constructor(names: Iterable<string>, expected: ExpectedSeconds, slots: number, now: () => number = () => performance.now()) {
    this.#expected = expected;
    this.#slots = Math.max(1, Math.floor(slots));
    this.#now = now;
    for (const n of names) {
      if (this.#pending.has(n)) continue;
      this.#pending.add(n);
      const e = expected.get(n) ?? 0;
      this.#queued += e;
      this.#counts.set(e, (this.#counts.get(e) ?? 0) + 1);
    }
    this.#values = [...this.#counts.keys()].sort((a, b) => b - a);
  }

  #unqueue(name: string): void {
    const e = this.#expected.get(name) ?? 0;
    this.#queued -= e;
    this.#counts.set(e, (this.#counts.get(e) ?? 1) - 1);
  }

  /** The longest expectation of a case not started yet (a slot must run it whole), 0 for none. */
  #longestQueued(): number {
    while (this.#top < this.#values.length && (this.#counts.get(this.#values[this.#top]!) ?? 0) <= 0) this.#top++;
    return this.#values[this.#top] ?? 0;
  }

  /** A case started. */
  started(name: string): void {
    if (!this.#pending.delete(name)) return;
    this.#unqueue(name);
    this.#inFlight.set(name, this.#now());
  }

  /** A case ended (ran, or was skipped without starting). */
  ended(name: string): void {
    if (this.#pending.delete(name)) this.#unqueue(name);
    this.#inFlight.delete(name);
  }

  /** Seconds the run is expected to go on: remaining work over the slots, never less than its longest remaining case. */
  secondsLeft(): number {
    const now = this.#now();
    let work = Math.max(0, this.#queued);
    let longest = this.#longestQueued();
    for (const [name, at] of this.#inFlight) {
      const left = Math.max(0, (this.#expected.get(name) ?? 0) - (now - at) / 1000);
      work += left;
      if (left > longest) longest = left;
    }
    if (work <= 0) return 0;
    return Math.max(longest, work / this.#slots);
  }
}

/** Seconds as a short duration: `45s`, `3m 05s`, `2h 10m`. */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
