// What a recorded run's transcripts cost the process that collects the results: the same suite
// (bench/transcript-suite.ts: BENCH_CASES cases of BENCH_TRANSCRIPT_KB KiB of run output each) run
// on the thread pool without a store, then recorded in SQLite with transcripts kept. Prints one JSON
// line: heap held per case after the run (the SuiteResult alive, after a GC) in both, and what the
// store received. Run with: node --expose-gc --import tsx bench/transcript-memory.ts
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSuite, runSuiteLocal } from "../index.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const suite = await loadSuite(new URL("./transcript-suite.ts", import.meta.url).pathname);
const n = suite.cases.length;

async function measure(db: string | null): Promise<{ heapPerCase: number; seconds: number; runId: string | null }> {
  gc!();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  // Local mode brings each case's raw response back to this thread too (the report's `response`);
  // a distributed coordinator never receives it. The transcript must add nothing on top of that.
  const result = await runSuiteLocal(suite, { concurrency: 16, threads: 2, ...(db ? { db } : {}) });
  const seconds = (performance.now() - t0) / 1000;
  gc!();
  const held = process.memoryUsage().heapUsed - before;
  if (result.passed !== n) throw new Error(`${result.passed}/${n} passed`);
  return { heapPerCase: Math.max(0, held) / n, seconds, runId: result.runId };
}

const plain = await measure(null);
const db = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-bench-transcripts-")), "r.db")}`;
const recorded = await measure(db);
const store = await ResultsStore.open(db);
const stored = await store.transcripts(recorded.runId!);
const bytes = [...stored.values()].reduce((sum, t) => sum + JSON.stringify(t).length, 0);
await store.close();
console.log(
  JSON.stringify({
    cases: n,
    transcript_kb: Number(process.env.BENCH_TRANSCRIPT_KB ?? 16),
    heap_bytes_per_case_unrecorded: Math.round(plain.heapPerCase),
    heap_bytes_per_case_recorded_with_transcripts: Math.round(recorded.heapPerCase),
    transcripts_stored: stored.size,
    transcript_bytes_stored_per_case: Math.round(bytes / Math.max(1, stored.size)),
    seconds_unrecorded: Number(plain.seconds.toFixed(2)),
    seconds_recorded: Number(recorded.seconds.toFixed(2)),
  }),
);
process.exit(0);
