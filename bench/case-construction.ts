/**
 * What the unknown-option check (issue 32, shared/option-keys.ts) costs per case: `new Case(...)`
 * with the options of a typical code suite (a scorer case of 6 keys, a judge case of 9 keys with
 * tags and a timeout) and the options of a dataset row, built with the check on and then off
 * (`optionKeyChecks.enabled`, which only this bench switches), in alternating rounds in one process
 * so the machine's noise falls on both alike. Also `defineSuite` over the cases built.
 *
 * The difference of two constructions of ~2 us is within a shared machine's noise, so the check
 * is also timed alone: `unknownCaseOption` over the same option objects, a million calls.
 *
 * Prints ns per case for each (the fastest of ROUNDS rounds, and the median), the check's share,
 * and a JSON line last for bench/run.ts: `{ cases, ns_per_case_checked, ns_per_case_unchecked,
 * key_check_ns_per_case, key_check_alone_ns, key_check_share }`. Run: `node --import tsx bench/case-construction.ts [--quick]`.
 */
import { performance } from "node:perf_hooks";
import { Case, defineSuite, type Agent, type Scorer } from "../index.ts";
import { optionKeyChecks } from "../shared/option-keys.ts";
import { unknownCaseOption } from "../shared/case/case-option-checks.ts";

const quick = process.argv.includes("--quick");
/** Cases built per round. */
const N = quick ? 20_000 : 100_000;
/** Rounds per variant; the fastest is the figure (a shared machine's other work only adds time). */
const ROUNDS = quick ? 7 : 15;

const agent: Agent = { id: "bench", async run(input) { return { content: String(input) }; } };
const scorer: Scorer = { score: (run, expected) => ({ value: run.content === expected ? 1 : 0, passed: run.content === expected }) };

/** One round: N cases, alternating the two option shapes a suite most often has. */
function build(): Case[] {
  const cases = new Array<Case>(N);
  for (let i = 0; i < N; i++) {
    cases[i] = i % 2 === 0
      ? new Case({ name: `c${i}`, agent, input: String(i), scorer, expected: String(i), tags: ["smoke"] })
      : new Case({ name: `c${i}`, agent, input: `what is ${i}?`, criteria: "states the number", tags: ["regression", "math"], timeoutSeconds: 30, description: "judge case", metadata: { i }, id: `id-${i}` });
  }
  return cases;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timeRound(checked: boolean): number {
  optionKeyChecks.enabled = checked;
  try {
    const t = performance.now();
    const cases = build();
    defineSuite({ name: "bench", cases });
    return ((performance.now() - t) * 1e6) / N;
  } finally {
    optionKeyChecks.enabled = true;
  }
}

// Warm-up: both paths compiled by the JIT before any round counts.
for (let i = 0; i < 3; i++) {
  timeRound(true);
  timeRound(false);
}
const on: number[] = [];
const off: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  // Alternate which variant goes first, so neither always runs right after a GC of the other's garbage.
  if (i % 2 === 0) {
    on.push(timeRound(true));
    off.push(timeRound(false));
  } else {
    off.push(timeRound(false));
    on.push(timeRound(true));
  }
}
// The check alone, on the two option shapes of build(): what it adds to each case, without the noise of construction.
const shapes: object[] = [
  { name: "c0", agent, input: "0", scorer, expected: "0", tags: ["smoke"] },
  { name: "c1", agent, input: "what is 1?", criteria: "states the number", tags: ["regression", "math"], timeoutSeconds: 30, description: "judge case", metadata: { i: 1 }, id: "id-1" },
];
const CALLS = 1_000_000;
const alone: number[] = [];
let unknownSeen = 0;
for (let round = 0; round < ROUNDS + 3; round++) {
  const t = performance.now();
  for (let i = 0; i < CALLS; i++) if (unknownCaseOption(shapes[i & 1]!) !== null) unknownSeen++;
  if (round >= 3) alone.push(((performance.now() - t) * 1e6) / CALLS);
}
if (unknownSeen !== 0) throw new Error("the bench's own options have an unknown key");
const aloneNs = Math.min(...alone);

const checked = Math.min(...on);
const unchecked = Math.min(...off);
const cost = checked - unchecked;
console.log(`new Case + defineSuite, ${N} cases x ${ROUNDS} rounds per variant`);
console.log(`  key check on   ${checked.toFixed(0).padStart(6)} ns/case (median ${median(on).toFixed(0)})`);
console.log(`  key check off  ${unchecked.toFixed(0).padStart(6)} ns/case (median ${median(off).toFixed(0)})`);
console.log(`  difference     ${cost.toFixed(0).padStart(6)} ns/case (within noise when |difference| is below the medians' spread)`);
console.log(`  the check alone ${aloneNs.toFixed(1).padStart(5)} ns/case (${((aloneNs / unchecked) * 100).toFixed(1)}% of construction; median ${median(alone).toFixed(1)})`);
console.log(
  JSON.stringify({
    cases: N,
    ns_per_case_checked: Math.round(checked),
    ns_per_case_unchecked: Math.round(unchecked),
    key_check_ns_per_case: Math.round(cost),
    key_check_alone_ns: Number(aloneNs.toFixed(1)),
    key_check_share: Number((aloneNs / unchecked).toFixed(4)),
  }),
);
