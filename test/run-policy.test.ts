// Eval sets, the run-level pass threshold and repeats (issue 8): selection by set combined with
// --tag and --name, exit codes under a threshold (2 and 3 keep their precedence), the JSON
// summary's additive keys, pass@k, and repeats inline and on real worker threads.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, CaseResult, EvalfleetError, ExitCode, SuiteResult, exitCodeFor, loadSuite, passAtK, runCases, runSuiteLocal, selectCases } from "../index.ts";
import { describeSelector } from "../coordinator/select.ts";
import { aggregateRepeats } from "../shared/repeats.ts";
import { fitResultForWire } from "../shared/wire.ts";
import { resultToWire } from "../worker/result-wire.ts";
import { StubAgent, latch } from "./support/doubles.ts";

const root = join(import.meta.dirname, "..");
const fixture = (name: string): string => join(root, "test", "fixtures", name);

function caseNamed(name: string, options: { tags?: string[]; id?: string } = {}): Case {
  return new Case({ name, agent: new StubAgent(), input: "q", expectedOutput: "stub response", ...options });
}

function result(name: string, passed: boolean, extra: Partial<ConstructorParameters<typeof CaseResult>[0]> = {}): CaseResult {
  return new CaseResult({ name, expectations: { expectedOutput: { method: "exact", passed, reason: passed ? "equal" : "differs" } }, ...extra });
}

describe("eval sets in selection", () => {
  const cases = [caseNamed("a", { tags: ["smoke"], id: "row-a" }), caseNamed("b", { tags: ["smoke"] }), caseNamed("c", { tags: ["slow"], id: "row-c" }), caseNamed("d")];
  const evalSets = { core: ["row-a", "b", "row-c"], extra: { description: "the rest", cases: ["d"] } };
  const names = (selector: Parameters<typeof selectCases>[1]) => selectCases(cases, selector).map((s) => s.case.name);

  test("a set selects its members by name or id, in declaration order", () => {
    assert.deepEqual(names({ set: "core", evalSets }), ["a", "b", "c"]);
    assert.deepEqual(names({ set: ["extra", "core"], evalSets }), ["a", "b", "c", "d"]);
  });

  test("a set is ANDed with --tag and --name", () => {
    assert.deepEqual(names({ set: "core", tag: "smoke", evalSets }), ["a", "b"]);
    assert.deepEqual(names({ set: "core", name: ["c", "d"], evalSets }), ["c"]);
    assert.deepEqual(names({ set: "extra", tag: "smoke", evalSets }), []);
  });

  test("an unknown set is a usage error listing the suite's sets", () => {
    assert.throws(
      () => selectCases(cases, { set: "nightly", evalSets }),
      (err: unknown) => err instanceof EvalfleetError && err.code === "USAGE" && err.message === "unknown eval set 'nightly' (the suite has: core, extra)",
    );
    assert.throws(() => selectCases(cases, { set: "x" }), /unknown eval set 'x' \(the suite defines no eval sets: declare them with defineSuite\(\{ evalSets \}\)\)/);
  });

  test("no cases selected says which set was asked for; without one, Agno's text is unchanged", () => {
    assert.equal(describeSelector({ tag: "nope", set: "core" }), "name=None, tag='nope', set='core'");
    assert.equal(describeSelector({ tag: "nope" }), "name=None, tag='nope'");
  });

  test("a suite's eval sets file selects with --set through runSuiteLocal's selection", async () => {
    const suite = await loadSuite(fixture("dataset-suite.ts"));
    assert.deepEqual([...suite.evalSets!.keys()], ["smoke", "tools"]);
    assert.equal(suite.evalSets!.get("tools")!.description, "Cases that grade tool calls");
    assert.deepEqual(
      selectCases(suite.cases, { set: "smoke", evalSets: suite.evalSets }).map((s) => s.case.name),
      ["capital_exact", "multi_turn_contains", "csv_contains"],
    );
    assert.deepEqual(
      selectCases(suite.cases, { set: "tools", tag: "csv", evalSets: suite.evalSets }).map((s) => s.case.name),
      ["csv_tools_missing"],
    );
  });
});

describe("the pass threshold and exit codes", () => {
  const suite = (passed: number, failed: number, meta: ConstructorParameters<typeof SuiteResult>[1] = {}) =>
    new SuiteResult([...Array.from({ length: passed }, (_, i) => result(`p${i}`, true)), ...Array.from({ length: failed }, (_, i) => result(`f${i}`, false))], meta);

  test("with a threshold: 0 at or above it even with failures, 1 below it", () => {
    assert.equal(exitCodeFor(suite(19, 1, { passThreshold: 0.95 })), ExitCode.Ok, "19/20 meets 0.95 exactly");
    assert.equal(exitCodeFor(suite(18, 2, { passThreshold: 0.95 })), ExitCode.Failed);
    assert.equal(exitCodeFor(suite(1, 2, { passThreshold: 0 })), ExitCode.Ok);
    assert.equal(exitCodeFor(suite(3, 0, { passThreshold: 1 })), ExitCode.Ok);
    assert.equal(exitCodeFor(suite(2, 1, { passThreshold: 1 })), ExitCode.Failed);
    assert.equal(exitCodeFor(suite(2, 1)), ExitCode.Failed, "without a threshold every case must pass");
  });

  test("2 and 3 keep their meaning and precedence; a failed report write is still 1", () => {
    assert.equal(exitCodeFor(suite(0, 0, { passThreshold: 0 })), ExitCode.Usage, "an empty selection never passes");
    assert.equal(exitCodeFor(suite(9, 1, { passThreshold: 0.5, cancelled: true })), ExitCode.Incomplete);
    assert.equal(exitCodeFor(suite(9, 1, { passThreshold: 0.5 }), { incomplete: true }), ExitCode.Incomplete);
    const skipped = new SuiteResult([result("a", true), new CaseResult({ name: "s", skipped: true, error: "skipped: x" })], { passThreshold: 0.5 });
    assert.equal(exitCodeFor(skipped), ExitCode.Incomplete, "a skipped case makes the run incomplete even when the rate is met");
    assert.equal(exitCodeFor(suite(10, 0, { passThreshold: 0.5 }), { reportFailed: true }), ExitCode.Failed);
  });

  test("the summary keeps Agno's keys first and adds pass_rate, pass_threshold, repeat and pass_at_k", () => {
    const s = suite(3, 1, { passThreshold: 0.7, runId: "r", durationSeconds: 1.5 });
    const json = s.toJSON();
    assert.deepEqual(Object.keys(json.summary), ["total", "passed", "failed", "status", "skipped", "run_id", "duration_seconds", "pass_rate", "pass_threshold", "repeat", "pass_at_k"]);
    assert.deepEqual(json.summary, { total: 4, passed: 3, failed: 1, status: "FAIL", skipped: 0, run_id: "r", duration_seconds: 1.5, pass_rate: 0.75, pass_threshold: 0.7, repeat: 1, pass_at_k: null });
    assert.equal(s.thresholdMet, true);
    assert.equal(new SuiteResult([]).toJSON().summary.pass_rate, 0);
    assert.equal(new SuiteResult([result("a", true)]).toJSON().summary.pass_threshold, null);
  });

  test("a case's JSON keeps its keys and order, then expectations, repeats, pass_rate and pass_at_k (null without repeats)", () => {
    const json = result("a", true).toJSON();
    const keys = Object.keys(json);
    assert.deepEqual(keys.slice(0, 19), ["name", "agent_id", "team_id", "tags", "session_id", "duration_seconds", "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output", "tools_called", "timed_out", "skipped", "passed", "error", "score_value", "score_passed", "score_reason"]);
    assert.deepEqual(keys.slice(-4), ["expectations", "repeats", "pass_rate", "pass_at_k"]);
    assert.equal(json.repeats, null);
    assert.equal(json.pass_rate, null);
    assert.equal(json.pass_at_k, null);
    assert.equal(new CaseResult({ name: "plain" }).toJSON().expectations, null);
  });
});

describe("repeats: aggregation and pass@k (pure)", () => {
  test("pass@k is the unbiased estimator 1 - C(n-c, k) / C(n, k)", () => {
    assert.equal(passAtK(3, 2, 1), 2 / 3);
    assert.equal(passAtK(3, 2, 2), 1);
    assert.ok(Math.abs(passAtK(5, 1, 2) - 0.4) < 1e-12);
    assert.equal(passAtK(4, 0, 4), 0);
    assert.equal(passAtK(10, 10, 1), 1);
  });

  test("one entry per case: the first failing run's fields on top, every run listed, passed only when all passed", () => {
    const runs = [
      result("x", true, { sessionId: "eval-x-1", durationSeconds: 0.1, output: "ok" }),
      result("x", false, { sessionId: "eval-x-2", durationSeconds: 0.2, output: "bad", error: null }),
      result("x", true, { sessionId: "eval-x-3", durationSeconds: 0.3, output: "ok" }),
    ];
    const agg = aggregateRepeats(runs);
    assert.equal(agg.sessionId, "eval-x-2");
    assert.equal(agg.output, "bad");
    assert.equal(agg.durationSeconds, 0.6);
    assert.equal(agg.passed, false);
    assert.equal(agg.passRate, 2 / 3);
    assert.deepEqual(agg.passAtK, { "1": 2 / 3, "2": 1, "3": 1 });
    const json = agg.toJSON();
    assert.deepEqual(
      json.repeats!.map((r) => [r.repeat, r.session_id, r.passed, r.output]),
      [
        [1, "eval-x-1", true, "ok"],
        [2, "eval-x-2", false, "bad"],
        [3, "eval-x-3", true, "ok"],
      ],
    );
    assert.deepEqual(Object.keys(json.repeats![0]!), ["repeat", "session_id", "duration_seconds", "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output", "tools_called", "timed_out", "skipped", "passed", "error", "score_value", "score_passed", "score_reason", "expectations", "attempts", "worker"]);
    const allPass = aggregateRepeats([result("y", true), result("y", true)]);
    assert.equal(allPass.passed, true);
    // The summary averages pass@k over cases.
    assert.equal(new SuiteResult([agg], { repeat: 1 }).toJSON().summary.pass_at_k, null, "no pass@k without repeats");
    const s2 = new SuiteResult([agg, aggregateRepeats([result("y", true), result("y", true), result("y", false)])], { repeat: 3 });
    assert.deepEqual(s2.toJSON().summary.pass_at_k, { "1": 2 / 3, "2": 1, "3": 1 });
  });

  test("a result message cuts each repeat's output so the case fits the broker's limit", () => {
    const big = "x".repeat(200_000);
    const agg = aggregateRepeats([result("z", true, { output: big }), result("z", true, { output: big }), result("z", true, { output: big })]);
    const wire = fitResultForWire(resultToWire(agg));
    const bytes = Buffer.byteLength(JSON.stringify(wire));
    assert.ok(bytes < 300 * 1024, `${bytes} bytes`);
    // The marker counts toward each share (65536 bytes), so what is kept is a little less.
    assert.match(wire.repeats![2]!.output!, /\[evalfleet: output truncated: 200000 bytes, kept the first \d+\]$/);
    assert.ok(Buffer.byteLength(wire.repeats![2]!.output!) <= 65536);
    assert.equal(wire.response, null);
  });
});

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
