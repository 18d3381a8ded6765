// The pool sends the cases asked for in one turn of the event loop to its threads in batches (one
// piscina task each). Real piscina threads: every case still replies on its own, a slow case does
// not hold back its batch-mates, the batches are spread over the threads, and a batch whose thread
// is terminated under a stuck case loses none of its other cases.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadSuite } from "../../../shared/suite/suite.ts";
import { CasePool } from "../../../worker/pool/case-pool.ts";
import { resultShell } from "../../../shared/result/result-shell.ts";
import type { CaseResult } from "../../../shared/result/result.ts";
import { fixture } from "../../support/paths.ts";

const suite = await loadSuite(fixture("batch-suite.ts"));
const index = (name: string): number => suite.cases.findIndex((c) => c.name === name);

function runOn(pool: CasePool, names: string[], signal = new AbortController().signal): Promise<CaseResult>[] {
  return names.map((name) => {
    const i = index(name);
    const c = suite.cases[i]!;
    return pool.run({ index: i, name, defaultTimeout: 60, hookDefaults: { setup: 60, teardown: 60 }, timeoutSeconds: c.resolveTimeout(60), hasTeardown: false, maxOutputBytes: 256 * 1024, shell: () => resultShell(c, i), signal });
  });
}

test("cases asked for together run in batches spread over the threads; each replies on its own, the slow one last", async () => {
  const pool = new CasePool({ suitePath: suite.path, fingerprint: suite.fingerprint, threads: 2, concurrency: 64, graceMs: 5000, logLevel: "warn" });
  try {
    const quick = Array.from({ length: 40 }, (_, i) => `quick_${i}`);
    const settled: string[] = [];
    const all = runOn(pool, ["slow", ...quick]).map((p) => p.then((r) => (settled.push(r.name), r)));
    const results = await Promise.all(all);
    for (const r of results) assert.equal(r.passed, true, `${r.name}: ${r.error ?? ""}`);
    // The slow case shares a batch with quick ones; they did not wait for it.
    assert.equal(settled.at(-1), "slow");
    assert.equal(settled.length, 41);
    assert.deepEqual(results.map((r) => r.name), ["slow", ...quick], "each promise has its own case's result");
    const threads = new Set(results.map((r) => r.worker));
    assert.equal(threads.size, 2, `cases ran on ${[...threads].join(", ")}`);
  } finally {
    await pool.destroy();
  }
});

test("a stuck case's thread is terminated; the other cases of its batch run again and pass", async () => {
  const pool = new CasePool({ suitePath: suite.path, fingerprint: suite.fingerprint, threads: 1, concurrency: 16, graceMs: 500, logLevel: "warn" });
  try {
    const names = ["spins_forever", "quick_0", "quick_1", "quick_2", "slow"];
    const results = await Promise.all(runOn(pool, names));
    const stuck = results[0]!;
    assert.equal(stuck.timedOut, true);
    // The message says how long after the deadline the thread really went: the grace, and then some.
    const after = Number(/thread terminated (\d+\.\d)s after the deadline/.exec(stuck.error ?? "")?.[1]);
    assert.ok(after >= 0.5 && after < 30, stuck.error ?? "");
    for (const r of results.slice(1)) {
      assert.equal(r.passed, true, `${r.name}: ${r.error ?? ""}`);
    }
    // The quick cases were done before the thread blocked; the slow one was still running when the
    // thread was terminated, so it ran again from the start on a new thread.
    assert.deepEqual(results.slice(1).map((r) => [r.name, r.attempts]), [["quick_0", 1], ["quick_1", 1], ["quick_2", 1], ["slow", 2]]);
  } finally {
    await pool.destroy();
  }
});
