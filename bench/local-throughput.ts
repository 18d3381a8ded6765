// Local-mode throughput, side by side in one process: the same trivial cases called directly
// through p-limit (no evalfleet), runCases inline, and runSuiteLocal on worker threads.
// Prints cases/s (median of RUNS runs) and each as a ratio to the baseline.
// Usage: npm run bench   (BENCH_CASES=5000 BENCH_RUNS=3 BENCH_CONCURRENCY=64)
import pLimit from "p-limit";
import { loadSuite, runCases, runSuiteLocal } from "../index.ts";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);
const suite = await loadSuite(new URL("./trivial-suite.ts", import.meta.url).pathname);
const n = suite.cases.length;

async function baseline(): Promise<void> {
  const limit = pLimit(concurrency);
  const controller = new AbortController();
  await Promise.all(
    suite.cases.map((c) =>
      limit(async () => {
        const out = (await c.agent!.run(c.input, { signal: controller.signal, sessionId: "s" })) as { content?: unknown };
        await c.scorer!.score(out, c.expected, { signal: controller.signal });
      }),
    ),
  );
}

async function measure(label: string, body: () => Promise<unknown>): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await body();
    const seconds = (performance.now() - t0) / 1000;
    if (r && typeof r === "object" && "passed" in r && (r as { passed: number }).passed !== n) throw new Error(`${label}: not every case passed`);
    rates.push(n / seconds);
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)]!;
}

const results: Array<[string, number]> = [];
results.push(["baseline: p-limit, direct calls", await measure("baseline", baseline)]);
results.push(["runCases inline", await measure("inline", () => runCases(suite.cases, { concurrency }))]);
results.push(["runSuiteLocal, 1 thread", await measure("threads-1", () => runSuiteLocal(suite, { concurrency, threads: 1 }))]);
results.push(["runSuiteLocal, 2 threads", await measure("threads-2", () => runSuiteLocal(suite, { concurrency, threads: 2 }))]);

const base = results[0]![1];
console.log(`${n} trivial cases, concurrency ${concurrency}, median of ${runs} runs, node ${process.version}`);
for (const [label, rate] of results) console.log(`${label.padEnd(34)} ${rate.toFixed(0).padStart(8)} cases/s   ${(rate / base).toFixed(3)}x baseline`);
