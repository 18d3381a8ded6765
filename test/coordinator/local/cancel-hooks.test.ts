// A Ctrl-C that lands while the threads start: every case is told to onCaseEnd exactly once (the
// console printed a `SKIP` line twice: the pool reports a case cancelled before its thread started
// as skipped, the dispatch loop told onCaseEnd, then told it again for every skipped result).
import { compileRunSettings } from "../../../shared/run-settings.ts";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSuite } from "../../../shared/suite/suite.ts";
import { selectCases } from "../../../coordinator/run/select.ts";
import { runOnThreads } from "../../../coordinator/local/threads.ts";
import { ConsoleReporter } from "../../../coordinator/report/console.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { fixture } from "../../support/paths.ts";

test("cancelled while the threads start: one onCaseEnd and one SKIP line per case", async () => {
  process.env.EVALFLEET_TEST_DIR = mkdtempSync(join(tmpdir(), "evalfleet-cancel-hooks-"));
  process.env.EVALFLEET_THREAD_START_MS = "3000";
  try {
    const suite = await loadSuite(fixture("slow-thread-start-suite.ts"));
    const out = new MemoryStream();
    const reporter = new ConsoleReporter({ out, total: 3, live: false, color: false });
    const ended: string[] = [];
    const hooks = reporter.hooks();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new DOMException("received SIGINT", "AbortError")), 300);
    const result = await runOnThreads(suite, selectCases(suite.cases, {}), {
      settings: compileRunSettings({ defaultTimeoutSeconds: 60 }, suite),
      concurrency: 2,
      threads: 1,
      logLevel: "warn",
      signal: controller.signal,
      onCaseStart: (c) => hooks.onCaseStart!(c),
      onCaseEnd: (c, r) => {
        ended.push(c.name);
        hooks.onCaseEnd!(c, r);
      },
    });
    assert.deepEqual(result.results.map((r) => r.skipped), [true, true, true]);
    assert.deepEqual([...ended].sort(), ["a", "b", "c"], "each case told once");
    const lines = out.text.split("\n").filter((l) => l.startsWith("SKIP"));
    assert.deepEqual(lines.map((l) => l.split(/\s+/)[1]).sort(), ["a", "b", "c"], out.text);
  } finally {
    delete process.env.EVALFLEET_TEST_DIR;
    delete process.env.EVALFLEET_THREAD_START_MS;
  }
});
