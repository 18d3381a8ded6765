// BENCH_CASES trivial cases (default 5000): the agent answers (after BENCH_LATENCY_MS, default 0,
// honouring the abort signal), a scorer checks the answer. Every process of a benchmark must see the
// same BENCH_CASES, since the case count is part of the suite's fingerprint.
import { Case, defineSuite, type Agent, type Scorer } from "evalfleet";

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 0);
export const trivialAgent: Agent = {
  id: "trivial",
  async run(input, { signal }) {
    if (latencyMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, latencyMs);
        signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
      });
    }
    return { content: String(input), tools: [{ toolName: "echo" }] };
  },
};
export const sameScorer: Scorer = {
  score: (run, expected) => ({ value: run.content === expected ? 1 : 0, passed: run.content === expected }),
};

const n = Number(process.env.BENCH_CASES ?? 5000);
export default defineSuite({
  name: "trivial",
  cases: Array.from({ length: n }, (_, i) => new Case({ name: `c${i}`, agent: trivialAgent, input: String(i), scorer: sameScorer, expected: String(i) })),
});
