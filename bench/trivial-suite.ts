// BENCH_CASES trivial cases (default 5000): the agent answers at once, a scorer checks it.
import { Case, defineSuite, type Agent, type Scorer } from "evalfleet";

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 0);
export const trivialAgent: Agent = {
  id: "trivial",
  async run(input) {
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
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
