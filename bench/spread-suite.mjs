// BENCH_CASES cases (default 50) whose agent waits BENCH_LATENCY_MS (default 200) BENCH_INNER times
// in a row (default 1), for bench/repeat-spread.ts: with BENCH_INNER=10 and no --repeat, each case
// runs ten "trials" one after another on the worker that took it, as every trial of a case did
// before trials became deliveries of their own; with --repeat 10, each trial is its own delivery.
import { Case, defineSuite } from "evalfleet";

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 200);
const inner = Number(process.env.BENCH_INNER ?? 1);
const wait = (signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, latencyMs);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
const agent = {
  id: "spread",
  async run(input, { signal }) {
    for (let i = 0; i < inner; i++) await wait(signal);
    return { content: String(input) };
  },
};
const same = { score: (run, expected) => ({ value: run.content === expected ? 1 : 0, passed: run.content === expected }) };

const n = Number(process.env.BENCH_CASES ?? 50);
export default defineSuite({
  name: "spread",
  cases: Array.from({ length: n }, (_, i) => new Case({ name: `s${i}`, agent, input: String(i), scorer: same, expected: String(i) })),
});
