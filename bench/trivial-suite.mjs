// The plain-JavaScript twin of trivial-suite.ts (BENCH_CASES cases, BENCH_LATENCY_MS latency):
// what the start-up rows of the bench run, so no TypeScript loader is part of their figures.
// With BENCH_READY_DIR set, each thread that imports it writes how long after its own start
// (from the thread's environment being set up, performance.nodeTiming.environment) the suite was imported.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMainThread, threadId } from "node:worker_threads";
import { Case, defineSuite } from "evalfleet";

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 0);
const trivialAgent = {
  id: "trivial",
  async run(input, { signal }) {
    if (latencyMs > 0) {
      await new Promise((resolve, reject) => {
        const t = setTimeout(resolve, latencyMs);
        signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
      });
    }
    return { content: String(input), tools: [{ toolName: "echo" }] };
  },
};
const sameScorer = {
  score: (run, expected) => ({ value: run.content === expected ? 1 : 0, passed: run.content === expected }),
};

const n = Number(process.env.BENCH_CASES ?? 5000);
const suite = defineSuite({
  name: "trivial",
  cases: Array.from({ length: n }, (_, i) => new Case({ name: `c${i}`, agent: trivialAgent, input: String(i), scorer: sameScorer, expected: String(i) })),
});
if (process.env.BENCH_READY_DIR && !isMainThread) writeFileSync(join(process.env.BENCH_READY_DIR, `thread-${threadId}.json`), JSON.stringify({ ready_ms: performance.now() - performance.nodeTiming.environment, idle_ms: performance.eventLoopUtilization().idle }));
export default suite;
