import type { ScheduleOrder } from "../../shared/run-settings.ts";
import { seededRandom } from "../../shared/seeded-random.ts";

/**
 * The order a run starts its cases in (`--order`), and what each case is expected to cost, from
 * the recorded runs of the suite. Longest first keeps a long case from starting last and holding
 * the run open while every other slot idles (list scheduling: LPT). Results are reported in
 * declaration order whatever the start order (coordinator/run/reassemble.ts). Pure; no I/O.
 */

/** What one recorded run says of one case, per trial (a repeated run's sums divided by its repeat). */
export interface CaseSample {
  /** Seconds one trial ran. */
  seconds: number;
  /** Tokens one trial used (agent and judge), or null when none were reported. */
  tokens: number | null;
  /** US dollars one trial cost (agent and judge), or null when unknown. */
  costUsd: number | null;
}

/**
 * The recorded samples of each case, keyed by case name (the way `evalfleet compare` pairs
 * cases: indices move when cases are added), newest run first. Read by
 * coordinator/history/duration-history.ts.
 */
export type CaseHistory = ReadonlyMap<string, readonly CaseSample[]>;

/** Runs of a case whose median is taken: the newest N. */
export const HISTORY_SAMPLE_RUNS = 5;

/** What a case is expected to cost in this run. */
export interface CaseExpectation {
  /** Seconds of work: the median recorded trial times the run's repeat, or the case's timeout times the repeat when it has no history. */
  seconds: number;
  /** Tokens (median per trial times the repeat), null without history or without token counts. */
  tokens: number | null;
  /** US dollars, as `tokens`. */
  costUsd: number | null;
  /** Whether the figures come from history (false: the timeout stands in). */
  fromHistory: boolean;
}

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of the values that are known (not null), or null when none is. */
function medianKnown(values: ReadonlyArray<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return known.length === 0 ? null : median(known);
}

/**
 * What one case is expected to cost: the median of its newest {@link HISTORY_SAMPLE_RUNS}
 * samples, times `repeat` (trials per case in this run, default 1). A case with no sample stands
 * in with `timeoutSeconds` (its resolved timeout: the most it can take) and unknown tokens and cost.
 */
export function expectCase(name: string, timeoutSeconds: number, history: CaseHistory, repeat = 1): CaseExpectation {
  const samples = history.get(name)?.slice(0, HISTORY_SAMPLE_RUNS) ?? [];
  if (samples.length === 0) return { seconds: timeoutSeconds * repeat, tokens: null, costUsd: null, fromHistory: false };
  const tokens = medianKnown(samples.map((s) => s.tokens));
  const cost = medianKnown(samples.map((s) => s.costUsd));
  return {
    seconds: median(samples.map((s) => s.seconds)) * repeat,
    tokens: tokens === null ? null : tokens * repeat,
    costUsd: cost === null ? null : cost * repeat,
    fromHistory: true,
  };
}

/** A case to order: its declaration index and its name. */
export interface Orderable {
  index: number;
  case: { name: string };
}

/**
 * The start order of `selected` (any order in, declaration index tells the declared order):
 * - `declared`: by declaration index;
 * - `history`: longest expected first (`expectedSeconds`), ties by declaration index; when no
 *   selected case has history (`hasHistory`), the declared order (every case would stand in with
 *   its timeout, which orders nothing worth the surprise);
 * - `random`: a seeded shuffle (the same seed, the same order on every machine).
 * Returns a new array; `selected` is not changed.
 */
export function orderCases<T extends Orderable>(selected: readonly T[], order: ScheduleOrder, expected: (s: T) => { seconds: number; fromHistory: boolean }): T[] {
  const declared = [...selected].sort((a, b) => a.index - b.index);
  if (order.kind === "declared") return declared;
  if (order.kind === "random") return shuffle(declared, order.seed);
  const keyed = declared.map((s) => ({ s, e: expected(s) }));
  if (!keyed.some((k) => k.e.fromHistory)) return declared;
  // Array.prototype.sort is stable: equal expectations keep declaration order.
  return keyed.sort((a, b) => b.e.seconds - a.e.seconds).map((k) => k.s);
}

/** A Fisher-Yates shuffle driven by {@link seededRandom}. */
function shuffle<T>(items: T[], seed: number): T[] {
  const next = seededRandom(seed);
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
