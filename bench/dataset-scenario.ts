// The dataset memory benchmark, in a fresh process: writes a JSONL dataset of BENCH_ROWS rows
// (default 100,000; each row a two-message conversation of ~600 bytes), loads the suite, runs it
// in local mode (2 worker threads, concurrency 64), and prints one JSON line: how much the
// coordinator's heap holds per row after loading and after the run (results included), its peak,
// and the dataset's size for comparison. Run with --expose-gc (bench/run.ts does).
//   node --expose-gc --import tsx bench/dataset-scenario.ts [--rows N]
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { rows: { type: "string" }, threads: { type: "string", default: "2" }, concurrency: { type: "string", default: "64" } } });
const rows = Number(values.rows ?? process.env.BENCH_ROWS ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const heap = (): number => {
  gc!();
  return process.memoryUsage().heapUsed;
};

const dir = mkdtempSync(join(tmpdir(), "evalfleet-dataset-bench-"));
const file = join(dir, "cases.jsonl");
const system = "You are a support assistant for a software company. Answer briefly and precisely, cite the knowledge base when you use it, and never invent prices, dates or policies. ".repeat(2);
const out = createWriteStream(file);
for (let i = 0; i < rows; i++) {
  const row = {
    id: `r${i}`,
    name: `row_${i}`,
    inputs: [
      { role: "system", content: system },
      { role: "user", content: `Ticket ${i}: the customer asks for the number of this ticket. | answer=${i}` },
    ],
    expected_output: String(i),
    tags: [i % 10 === 0 ? "smoke" : "full"],
  };
  if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, "drain");
}
out.end();
await once(out, "finish");
const datasetBytes = statSync(file).size;
process.env.BENCH_DATASET = file;

const { loadSuite, runSuiteLocal } = await import("../index.ts");
const before = heap();
const t0 = performance.now();
const suite = await loadSuite(new URL("./dataset-suite.ts", import.meta.url).pathname);
const loadSeconds = (performance.now() - t0) / 1000;
if (suite.cases.length !== rows) throw new Error(`loaded ${suite.cases.length} cases, expected ${rows}`);
const afterLoad = heap();
// For comparison: what the coordinator would hold per row with every row's fields in memory
// (measured on a sample of rows read in full and kept).
const sample = Math.min(rows, 10_000);
const kept = suite.cases.slice(0, sample).map((c) => (c as unknown as { materialize(): unknown }).materialize());
const materializedPerRow = (heap() - afterLoad) / sample;
kept.length = 0;

let peakHeap = 0;
let peakRss = 0;
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakRss = Math.max(peakRss, m.rss);
}, 20);
const t1 = performance.now();
const result = await runSuiteLocal(suite, { threads: Number(values.threads), concurrency: Number(values.concurrency) });
const runSeconds = (performance.now() - t1) / 1000;
clearInterval(sampler);
if (result.passed !== rows) throw new Error(`${result.passed}/${rows} passed`);
const afterRun = heap();
// Keep the suite and the results alive until after the reading: they are what the coordinator holds.
void suite.cases.length;
void result.results.length;
rmSync(dir, { recursive: true, force: true });

console.log(
  JSON.stringify({
    rows,
    dataset_bytes: datasetBytes,
    load_seconds: loadSeconds,
    run_seconds: runSeconds,
    cases_per_s: rows / runSeconds,
    heap_per_row_loaded: (afterLoad - before) / rows,
    heap_per_row_if_materialized: materializedPerRow,
    heap_per_case_after_run: (afterRun - before) / rows,
    peak_heap_bytes: peakHeap,
    peak_heap_over_before_per_row: (peakHeap - before) / rows,
    peak_rss_bytes: peakRss,
  }),
);
process.exit(0);
