import type { ScheduleOrder } from "../../shared/run-settings.ts";
import { expectCase, orderCases, type CaseExpectation, type CaseHistory, type Orderable } from "./schedule-order.ts";

/**
 * What a run is expected to take before it starts (`--estimate`) and while it runs (the ETA):
 * the cases' expectations from history, played out on the pool's slots in the start order the
 * run uses (list scheduling: each case goes to the slot that frees first). Pure; no I/O.
 */

/**
 * The makespan of running `seconds` (in start order) on `slots` slots, each case taken by the
 * first slot to free up: the time, in the unit of `seconds`, until the last case ends. 0 for none.
 */
export function listScheduleMakespan(seconds: readonly number[], slots: number): number {
  const n = Math.max(1, Math.floor(slots));
  // A binary min-heap of the slots' free-at times.
  const heap: number[] = new Array<number>(Math.min(n, seconds.length)).fill(0);
  let end = 0;
  for (let i = 0; i < seconds.length; i++) {
    const start = heap[0]!;
    const done = start + Math.max(0, seconds[i]!);
    if (done > end) end = done;
    heap[0] = done;
    siftDown(heap, 0);
  }
  return end;
}

function siftDown(heap: number[], at: number): void {
  const n = heap.length;
  let i = at;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && heap[l]! < heap[m]!) m = l;
    if (r < n && heap[r]! < heap[m]!) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m]!, heap[i]!];
    i = m;
  }
}

/** A run's expected cost on its pool. */
export interface RunEstimate {
  cases: number;
  /** Cases with no recorded sample: their timeout stands in for their duration, their tokens and cost are unknown. */
  withoutHistory: number;
  /** Slots the estimate plays the run on (threads' concurrency, or workers x concurrency). */
  slots: number;
  /** Expected wall-clock seconds: the list-scheduling makespan of the start order on `slots`. */
  seconds: number;
  /** Seconds of work summed over the cases. */
  workSeconds: number;
  /** Tokens summed over the cases that have a token count in history. */
  tokens: number;
  /** US dollars summed over the cases that have a cost in history. */
  costUsd: number;
  /** Cases with history but no recorded cost (an unpriced model): the cost leaves them out. */
  withoutCost: number;
}

/** What {@link estimateRun} needs of a case: its index, name and resolved timeout (seconds). */
export interface EstimatedCase extends Orderable {
  timeoutSeconds: number;
}

/** The expected duration, tokens and cost of running `selected` in `order` on `slots` slots with `repeat` trials per case. */
export function estimateRun(selected: readonly EstimatedCase[], history: CaseHistory, opts: { order: ScheduleOrder; slots: number; repeat?: number }): RunEstimate {
  const repeat = opts.repeat ?? 1;
  const expected = new Map<number, CaseExpectation>(selected.map((s) => [s.index, expectCase(s.case.name, s.timeoutSeconds, history, repeat)]));
  const ordered = orderCases(selected, opts.order, (s) => expected.get(s.index)!);
  const out: RunEstimate = { cases: selected.length, withoutHistory: 0, slots: Math.max(1, Math.floor(opts.slots)), seconds: 0, workSeconds: 0, tokens: 0, costUsd: 0, withoutCost: 0 };
  const seconds: number[] = [];
  for (const s of ordered) {
    const e = expected.get(s.index)!;
    seconds.push(e.seconds);
    out.workSeconds += e.seconds;
    if (!e.fromHistory) {
      out.withoutHistory++;
      continue;
    }
    out.tokens += e.tokens ?? 0;
    if (e.costUsd === null) out.withoutCost++;
    else out.costUsd += e.costUsd;
  }
  out.seconds = listScheduleMakespan(seconds, out.slots);
  return out;
}

/**
 * Seconds left of a run in progress: the expected work of the cases not finished, spread over the
 * slots (never less than the longest of them, which one slot must run alone). An estimate: 0 once
 * nothing is left.
 */
export function remainingSeconds(remainingWork: number, longestRemaining: number, slots: number): number {
  if (remainingWork <= 0) return 0;
  return Math.max(longestRemaining, remainingWork / Math.max(1, slots));
}
