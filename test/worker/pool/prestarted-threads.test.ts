// A pool's threads started apart from it (worker/pool/prestarted-threads.ts) with the suite to
// preload: real piscina threads import the suite as they start, before any batch, once each, and
// the pool that adopts them runs its cases on that import. A thread's load is a checked one
// (worker/pool/thread.ts): it does not refuse a file for what only the dispatching process checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSuite } from "../../../shared/suite/suite.ts";
import { CasePool, PrestartedThreads, threadShape } from "../../../worker/pool/case-pool.ts";
import { resultShell } from "../../../shared/result/result-shell.ts";
import { fixture } from "../../support/paths.ts";

const dir = mkdtempSync(join(tmpdir(), "evalfleet-preload-"));
const log = join(dir, "imports.jsonl");
// Read by the fixture in every thread (a thread's environment is a copy of this process's at its start).
process.env.EVALFLEET_TEST_IMPORT_LOG = log;
// A checked load, as a thread's: a full one refuses the repeated name (that is the dispatcher's check).
const suite = await loadSuite(fixture("thread-load-suite.ts"), { checked: true });
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** The imports of the fixture by worker threads so far. */
function threadImports(): { threadId: number; built: number }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { threadId: number; main: boolean; built: number }).filter((r) => !r.main);
}

test("threads started with a preload import the suite before their first batch, once each, and the adopting pool runs on that import", async () => {
  const shape = threadShape({ threads: 2, concurrency: 8 });
  const threads = PrestartedThreads.start(shape, { path: suite.path, module: suite.module! });
  const pool = new CasePool({ suitePath: suite.path, suiteModule: suite.module ?? null, fingerprint: suite.fingerprint, prestarted: threads, threads: 2, concurrency: 8, graceMs: 5000, logLevel: "warn" });
  try {
    // No case has been asked for yet: both threads import the suite on their own.
    const deadline = Date.now() + 60_000;
    while (threadImports().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(threadImports().length, 2, "each thread imported the suite without a batch");
    const indexes = [0, 5, 11, 19, 20];
    const results = await Promise.all(indexes.map((i) => {
      const c = suite.cases[i]!;
      return pool.run({ index: i, name: c.name, defaultTimeout: 60, hookDefaults: { setup: 60, teardown: 60 }, timeoutSeconds: 60, hasTeardown: false, maxOutputBytes: 64 * 1024, shell: () => resultShell(c, i), signal: new AbortController().signal });
    }));
    for (const r of results) assert.equal(r.passed, true, `${r.name}: ${r.error ?? ""}`);
    // The repeated name at index 20 ran as the case at that index: the thread did not re-check the file.
    assert.equal(results[4]!.output, "again");
    const imports = threadImports();
    assert.equal(imports.length, 2, `the first batches found the preloaded import: ${JSON.stringify(imports)}`);
    assert.equal(new Set(imports.map((r) => r.threadId)).size, 2);
  } finally {
    await pool.destroy();
  }
});

test("a pool that starts its own threads preloads its suite when it is given the suite's module (a worker process's, runSuiteLocal's)", async () => {
  const before = threadImports().length;
  const pool = new CasePool({ suitePath: suite.path, suiteModule: suite.module ?? null, fingerprint: suite.fingerprint, threads: 1, concurrency: 4, graceMs: 5000, logLevel: "warn" });
  try {
    const deadline = Date.now() + 60_000;
    while (threadImports().length < before + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(threadImports().length, before + 1, "the pool's thread imported the suite without a batch");
  } finally {
    await pool.destroy();
  }
});
