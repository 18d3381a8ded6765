// Repeats (worker/runtime/repeats.ts) through the runners: inline and on real worker threads, each
// run with its own session, bounded by the concurrency, cancelled repeats recorded as skipped.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, ExitCode, exitCodeFor, loadSuite, runCases, runSuiteLocal } from "../../../index.ts";
import { latch } from "../../support/doubles.ts";
import { ROOT } from "../../support/paths.ts";

const root = ROOT;
const fixture = (name: string): string => join(root, "test", "fixtures", name);

describe("repeats through the runners", () => {
  test("inline: every case runs N times with its own session; concurrency bounds the runs in flight", async () => {
    let inFlight = 0;
    let peak = 0;
    const agent = {
      id: "counting",
      async run() {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return { content: "stub response" };
      },
    };
    const cases = ["a", "b"].map((name) => new Case({ name, agent, input: "q", expectedOutput: "stub response" }));
    const suite = await runCases(cases, { repeat: 3, concurrency: 2 });
    assert.equal(peak, 2, "never more runs in flight than the concurrency");
    assert.equal(suite.results.length, 2, "one entry per case");
    for (const r of suite.results) {
      assert.equal(r.repeats?.length, 3);
      assert.equal(new Set(r.repeats!.map((x) => x.sessionId)).size, 3, "a new session per run");
      assert.equal(r.passRate, 1);
    }
    assert.equal(suite.repeat, 3);
    assert.deepEqual(suite.toJSON().summary.pass_at_k, { "1": 1, "2": 1, "3": 1 });
    const sequential = await runCases(cases, { repeat: 2, concurrency: 1 });
    assert.equal(sequential.results[0]!.repeats!.length, 2);
  });

  test("inline: a cancelled run records the repeats it did not start as skipped", async () => {
    const started = latch();
    const controller = new AbortController();
    const agent = {
      id: "slow",
      async run(_input: unknown, ctx: { signal: AbortSignal }) {
        started.open();
        await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }));
        return { content: "never" };
      },
    };
    const running = runCases([new Case({ name: "slow", agent, input: "q", expectedOutput: "x" })], { repeat: 3, concurrency: 1, signal: controller.signal });
    await started.promise;
    controller.abort();
    const suite = await running;
    const r = suite.results[0]!;
    assert.equal(r.repeats?.length, 3);
    assert.match(r.repeats![0]!.error ?? "", /cancelled: suite cancelled while the case was running/);
    assert.deepEqual(
      r.repeats!.slice(1).map((x) => [x.skipped, x.error]),
      [
        [true, "skipped: the run was cancelled before this repeat started"],
        [true, "skipped: the run was cancelled before this repeat started"],
      ],
    );
    assert.equal(exitCodeFor(suite), ExitCode.Incomplete);
  });

  test("worker threads: a flaky case passes 2 runs of 3, counted across threads; pass@k and the threshold follow", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-repeats-"));
    process.env.EVALFLEET_TEST_DIR = dir;
    try {
      const suite = await loadSuite(fixture("flaky-data-suite.ts"));
      const run = await runSuiteLocal(suite, { repeat: 3, threads: 2, concurrency: 4, passThreshold: 0.3 });
      const [stable, flaky, wrong] = run.results;
      assert.deepEqual(
        [stable, flaky, wrong].map((r) => [r!.name, r!.repeats!.filter((x) => x.passed).length, r!.passed]),
        [
          ["stable", 3, true],
          ["flaky", 2, false],
          ["always_wrong", 0, false],
        ],
      );
      assert.equal(flaky!.output, "something else entirely", "the entry shows the failing run");
      assert.deepEqual(flaky!.passAtK, { "1": 2 / 3, "2": 1, "3": 1 });
      assert.ok(new Set(run.results.flatMap((r) => r.repeats!.map((x) => x.worker))).size >= 1);
      assert.equal(readdirSync(join(dir, "flaky")).length, 3, "the flaky prompt ran exactly three times");
      const summary = run.toJSON().summary;
      assert.equal(summary.pass_rate, 1 / 3);
      assert.equal(summary.repeat, 3);
      assert.deepEqual(Object.keys(summary.pass_at_k!), ["1", "2", "3"]);
      assert.ok(Math.abs(summary.pass_at_k!["1"]! - (1 + 2 / 3 + 0) / 3) < 1e-12, String(summary.pass_at_k!["1"]));
      assert.ok(Math.abs(summary.pass_at_k!["3"]! - 2 / 3) < 1e-12);
      assert.equal(exitCodeFor(run), ExitCode.Ok, "1/3 of the cases pass, the threshold is 0.3");
    } finally {
      delete process.env.EVALFLEET_TEST_DIR;
    }
  });
});
