/**
 * What the trajectory check costs per case (worker/runtime/checks/trajectory.ts, through
 * `evaluateReliability`): a run of 50 tool calls graded against 10 matchers, half of them with a
 * RegExp argument, half with deep equality on nested arguments, in order, with a forbidden call
 * and a bound; a passing case, and the same case failing (its reason and closest call built).
 * The case's lists are frozen, as a `Case` freezes them, so they are compiled once. Prints the
 * fastest of 25 rounds of 2,000 checks and their median (a shared machine's other work only ever
 * adds time), then one JSON line. Run: `node --import tsx bench/trajectory-check.ts`.
 */
import { performance } from "node:perf_hooks";
import type { RunOutput, ToolExecution } from "../shared/case/agent.ts";
import type { ToolCallExpectation } from "../shared/case/tool-call-matchers.ts";
import { evaluateReliability, type ReliabilityOptions } from "../worker/runtime/checks/reliability.ts";

const CALLS = 50;
const ROUNDS = 25;
const PER_ROUND = 2_000;

/** Call i: one of ten tools, with text, numbers and a nested filter, as an agent's calls have. */
function toolCall(i: number, city: string): ToolExecution {
  return {
    toolName: `tool_${i % 10}`,
    toolArgs: { query: `find ${city} item ${i}`, page: i, filters: { city, tags: ["a", "b", String(i % 3)], range: { from: i, to: i + 10 } } },
    result: { ok: true, items: i % 4 },
  };
}

const output = (city: string): RunOutput => ({ content: "done", status: "completed", tools: Array.from({ length: CALLS }, (_, i) => toolCall(i, city)) });

// Ten matchers over calls 4, 9, 14, ..., 49 (so in order): even ones a RegExp, odd ones deep equality.
const expected: ToolCallExpectation[] = Array.from({ length: 10 }, (_, k) => {
  const i = 4 + k * 5;
  return k % 2 === 0
    ? { name: `tool_${i % 10}`, args: { query: new RegExp(`^find \\w+ item ${i}$`) } }
    : { name: `tool_${i % 10}`, args: { page: i, filters: { city: "Paris", tags: ["a", "b", String(i % 3)], range: { from: i, to: i + 10 } } } };
});
const options: ReliabilityOptions = Object.freeze({
  expectedToolCalls: Object.freeze(expected),
  allowAdditionalToolCalls: true,
  toolCallOrder: "in_order",
  forbiddenToolCalls: Object.freeze(["delete_everything"]),
  maxToolCalls: 60,
});

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Microseconds per check: the fastest round and the median. */
function measure(label: string, run: RunOutput, passes: boolean): { best: number; median: number } {
  const first = evaluateReliability(run, options);
  if (first.passed !== passes) throw new Error(`${label}: expected the check to ${passes ? "pass" : "fail"}, got: ${first.reason}`);
  for (let i = 0; i < PER_ROUND * 2; i++) evaluateReliability(run, options);
  const samples: number[] = [];
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < PER_ROUND; i++) sink += evaluateReliability(run, options).trajectory!.steps.length;
    samples.push(((performance.now() - t) * 1000) / PER_ROUND);
  }
  if (sink !== ROUNDS * PER_ROUND * CALLS) throw new Error("the checks did not run");
  const out = { best: Math.min(...samples), median: median(samples) };
  console.log(`${label.padEnd(52)} ${out.best.toFixed(1).padStart(6)} us per case (median ${out.median.toFixed(1)})`);
  return out;
}

console.log(`a case with ${CALLS} tool calls and ${expected.length} matchers (5 RegExp, 5 deep equality), in order, a forbidden call, a bound`);
const passing = measure("passing (every matcher met)", output("Paris"), true);
const failing = measure("failing (5 matchers miss: reasons, closest calls)", output("Lyon"), false);
console.log(JSON.stringify({ trajectory_check_us_per_case: passing.best, trajectory_check_median_us_per_case: passing.median, trajectory_check_failing_us_per_case: failing.best }));
