// The start order's makespan, simulated with the real ordering code (bench/run.ts runs it in a
// fresh process; it prints one JSON line). No agent, no I/O: a second.
//
//   node --import tsx bench/makespan-simulation.ts
//
// 2,000 cases whose typical durations are lognormal (sigma 1: a few cases 20x the median) run on
// 3 workers x 8 slots. Each case's history is 5 recorded runs and the run itself is one more
// draw, each its typical duration times lognormal noise (sigma 0.2): the order is made from what
// was recorded, the makespan from what the run then takes. The cases are handed out in the start
// order to whichever slot frees first (list scheduling, as a worker pulls its next case).
// - makespan_ratio: the makespan with `--order history` (coordinator/run/schedule-order.ts) over
//   the lower bound max(longest case, total work / slots); mean of 20 seeded suites. Target <= 1.05.
// - makespan_ratio_declared: the same in declaration order (the cases declared in random order of length).
// - makespan_ratio_history_max / _declared_max: the worst of the 20.
import { expectCase, orderCases, type CaseHistory, type CaseSample } from "../coordinator/run/schedule-order.ts";
import { listScheduleMakespan } from "../coordinator/run/schedule-estimate.ts";
import { seededRandom } from "../shared/seeded-random.ts";

const CASES = 2000;
const SLOTS = 3 * 8;
const SUITES = 20;
const HISTORY_RUNS = 5;
const SIGMA = 1;
const NOISE_SIGMA = 0.2;
/** Seconds, the median case. */
const MEDIAN_SECONDS = 10;

function gaussian(next: () => number): () => number {
  return () => {
    // Box-Muller; 1 - u keeps log away from 0.
    const u = 1 - next();
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

function oneSuite(seed: number): { history: number; declared: number } {
  const z = gaussian(seededRandom(seed));
  const typical = Array.from({ length: CASES }, () => MEDIAN_SECONDS * Math.exp(SIGMA * z()));
  const draw = (t: number): number => t * Math.exp(NOISE_SIGMA * z());
  const history: CaseHistory = new Map(typical.map((t, i): [string, CaseSample[]] => [`c${i}`, Array.from({ length: HISTORY_RUNS }, () => ({ seconds: draw(t), tokens: null, costUsd: null }))]));
  const actual = typical.map(draw);
  const selected = typical.map((_, index) => ({ index, case: { name: `c${index}` } }));
  const bound = Math.max(Math.max(...actual), actual.reduce((a, b) => a + b, 0) / SLOTS);
  const makespan = (order: "history" | "declared"): number => {
    const ordered = orderCases(selected, { kind: order }, (s) => expectCase(s.case.name, 120, history));
    return listScheduleMakespan(ordered.map((s) => actual[s.index]!), SLOTS);
  };
  return { history: makespan("history") / bound, declared: makespan("declared") / bound };
}

const runs = Array.from({ length: SUITES }, (_, i) => oneSuite(1000 + i));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  JSON.stringify({
    makespan_ratio: mean(runs.map((r) => r.history)),
    makespan_ratio_declared: mean(runs.map((r) => r.declared)),
    makespan_ratio_history_max: Math.max(...runs.map((r) => r.history)),
    makespan_ratio_declared_max: Math.max(...runs.map((r) => r.declared)),
    makespan_cases: CASES,
    makespan_slots: SLOTS,
  }),
);
