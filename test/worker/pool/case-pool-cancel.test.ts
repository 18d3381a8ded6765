// A case cancelled while it waits for a thread that is still starting up is reported at once as not
// started, and when the thread comes up nothing of it runs (no setup, no agent). Real piscina threads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSuite } from "../../../shared/suite/suite.ts";
import { CasePool } from "../../../worker/pool/case-pool.ts";
import { NOT_STARTED_WAIT_MS } from "../../../worker/pool/attempt.ts";
import { CANCELLED_BEFORE_START_ERROR } from "../../../worker/runtime/lifecycle.ts";
import { resultShell } from "../../../shared/result/result-shell.ts";
import { fixture } from "../../support/paths.ts";

test("cancelled before its thread started: reported skipped without waiting for the thread, and never run", async () => {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-pool-cancel-"));
  process.env.EVALFLEET_TEST_DIR = dir;
  process.env.EVALFLEET_THREAD_START_MS = "4000";
  const suite = await loadSuite(fixture("slow-thread-start-suite.ts"));
  const pool = new CasePool({ suitePath: suite.path, fingerprint: suite.fingerprint, threads: 1, concurrency: 4, graceMs: 5000, logLevel: "warn" });
  try {
    const controller = new AbortController();
    const request = (i: number, signal: AbortSignal) => {
      const c = suite.cases[i]!;
      return pool.run({ index: i, name: c.name, defaultTimeout: 60, hookDefaults: { setup: 60, teardown: 60 }, timeoutSeconds: 60, hasTeardown: false, maxOutputBytes: 256 * 1024, shell: () => resultShell(c, i), signal });
    };
    const t0 = performance.now();
    const cancelled = [request(0, controller.signal), request(1, controller.signal)];
    setTimeout(() => controller.abort(new DOMException("cancelled", "AbortError")), 200);
    const results = await Promise.all(cancelled);
    const waited = performance.now() - t0;
    for (const r of results) {
      assert.equal(r.skipped, true, `${r.name} is skipped`);
      assert.equal(r.error, CANCELLED_BEFORE_START_ERROR);
      assert.equal(r.passed, false);
    }
    // The thread needs 4 s to come up; the cancelled cases were reported long before.
    assert.ok(waited < 200 + NOT_STARTED_WAIT_MS + 2_500, `reported after ${waited.toFixed(0)} ms`);

    // A case that is not cancelled runs once the thread is up; by then the thread has seen the
    // cancels, and the two cancelled cases left no trace.
    const live = await request(2, new AbortController().signal);
    assert.equal(live.passed, true, live.error ?? "");
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(readdirSync(dir).sort(), ["run.c", "setup.c"]);
  } finally {
    await pool.destroy();
    delete process.env.EVALFLEET_TEST_DIR;
    delete process.env.EVALFLEET_THREAD_START_MS;
  }
});
