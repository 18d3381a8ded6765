// One benchmark measurement in a fresh process, printed as one JSON line on stdout.
// Run by bench/run.ts; the suite is bench/trivial-suite.ts sized by BENCH_CASES.
//   --mode baseline|inline|local|coordinator  --concurrency N  --threads N
//   --warmup N: the first N cases run once before the measurement (baseline, inline, coordinator)
//   coordinator: --nats URL --watch-pids a,b (CPU read from /proc)
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { loadSuite, runCases, runSuiteLocal } from "../index.ts";
import { runDistributed } from "../coordinator/distributed/distributed-run.ts";
import { cpuMs, rssBytes } from "./proc-stats.ts";

const { values } = parseArgs({
  options: {
    mode: { type: "string" },
    concurrency: { type: "string", default: "64" },
    threads: { type: "string", default: "2" },
    nats: { type: "string" },
    warmup: { type: "string", default: "0" },
    "watch-pids": { type: "string", default: "" },
  },
});
const mode = values.mode!;
const concurrency = Number(values.concurrency);
const suite = await loadSuite(new URL("./trivial-suite.ts", import.meta.url).pathname);
const n = suite.cases.length;
const gc = (globalThis as { gc?: () => void }).gc;

async function baseline(cases: typeof suite.cases): Promise<void> {
  const limit = pLimit(concurrency);
  const controller = new AbortController();
  await Promise.all(
    cases.map((c) =>
      limit(async () => {
        const out = (await c.agent!.run(c.input, { signal: controller.signal, sessionId: "s" })) as { content?: unknown };
        await c.scorer!.score(out, c.expected, { signal: controller.signal });
      }),
    ),
  );
}

const watched = values["watch-pids"] ? values["watch-pids"].split(",").map(Number) : [];
const warm = Number(values.warmup);
let runOnce: () => Promise<{ passed: number }>;
if (mode === "baseline") {
  // The same warm-up as the team's baselines: the JIT has seen the code before the clock starts.
  if (warm > 0) await baseline(suite.cases.slice(0, warm));
  runOnce = async () => (await baseline(suite.cases), { passed: n });
} else if (mode === "inline") {
  if (warm > 0) await runCases(suite.cases.slice(0, warm), { concurrency });
  runOnce = () => runCases(suite.cases, { concurrency });
} else if (mode === "local") runOnce = () => runSuiteLocal(suite, { concurrency, threads: Number(values.threads) });
else if (mode === "coordinator") {
  if (warm > 0) {
    const names = suite.cases.slice(0, warm).map((c) => c.name);
    await runDistributed(suite, { nats: { servers: [values.nats!] }, name: names, waitForWorkersSeconds: 30 });
  }
  runOnce = async () => (await runDistributed(suite, { nats: { servers: [values.nats!] }, waitForWorkersSeconds: 30 })).suite;
} else throw new Error(`unknown --mode ${mode}`);

gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const rssBefore = process.memoryUsage().rss;
const cpuBefore = process.cpuUsage();
const othersBefore = watched.map((p) => cpuMs(p) ?? 0);
const t0 = performance.now();
const result = await runOnce();
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const othersAfter = watched.map((p) => cpuMs(p) ?? 0);
const rssAfter = process.memoryUsage().rss;
const heapHeld = process.memoryUsage().heapUsed;
gc?.();
const heapAfter = process.memoryUsage().heapUsed;
if (result.passed !== n) throw new Error(`${mode}: ${result.passed}/${n} passed`);
// Keep the result alive until after the memory reading: it is what the coordinator holds.
void (result as unknown as { total?: unknown }).total;
console.log(
  JSON.stringify({
    mode,
    cases: n,
    seconds,
    cases_per_s: n / seconds,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    others_cpu_ms: othersAfter.map((a, i) => a - othersBefore[i]!),
    rss_before: rssBefore,
    rss_after: rssAfter,
    heap_before: heapBefore,
    heap_held: heapHeld,
    heap_after_gc: heapAfter,
    self_rss: rssBytes(process.pid),
  }),
);
process.exit(0);
