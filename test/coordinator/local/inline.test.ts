/**
 * runCases as a whole: selection (Agno's test_suite.py tests 12-14), suite abort after a cancelled
 * run (21) and suite cancellation through a signal (M), concurrency and declaration order (O2),
 * the JSON payload (50, 51, 84), silence (52) and the presentation hooks (55-59) (spec B, K, L, M).
 * Tests 53 and 54 (one asyncio loop) have no counterpart in Node.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, ErrorCode, EvalfleetError, runCases, type Agent, type CaseOptions, type CaseResult, type RunEvent, type RunOutput } from "../../../index.ts";
import { ScriptedJudge, StubAgent, StubScorer, latch, sleep } from "../../support/doubles.ts";

const STALL_MS = 30_000;
const CANCELLED_IN_FLIGHT = "cancelled: suite cancelled while the case was running";
const SKIPPED = "skipped: suite aborted after cancelled run";
const SYNC_ONLY = "presentation hooks must be sync callables; use setup/teardown for async work";

/** Agno's `_make_case` defaults, with any option overridden. */
function makeCase(overrides: Partial<CaseOptions> = {}): Case {
  return new Case({ name: "sample_case", input: "What is the capital of France?", agent: new StubAgent(), criteria: "Mentions Paris.", ...overrides });
}

/** An agent that opens `started` when its run begins and then waits until it is aborted. */
function blockingAgent(id: string): { agent: Agent; started: Promise<void>; signals: AbortSignal[] } {
  const started = latch();
  const signals: AbortSignal[] = [];
  const agent: Agent = {
    id,
    run: async (_input, ctx) => {
      signals.push(ctx.signal);
      started.open();
      await sleep(STALL_MS, ctx.signal);
      return { content: "too late", status: "completed" };
    },
  };
  return { agent, started: started.promise, signals };
}

/** A named error class, as Python's exception classes name themselves in messages. */
class BrokenPipeError extends Error {}

describe("selection (B)", () => {
  test("a tag runs only the cases carrying it (12)", async () => {
    const smokeAgent = new StubAgent();
    const otherAgent = new StubAgent();
    const cases = [makeCase({ name: "smoke_case", tags: ["smoke"], agent: smokeAgent }), makeCase({ name: "other_case", tags: ["slow"], agent: otherAgent })];
    const suite = await runCases(cases, { tag: "smoke", judgeModel: new ScriptedJudge() });
    assert.deepEqual(
      suite.results.map((r) => r.name),
      ["smoke_case"],
    );
    assert.equal(smokeAgent.runCount, 1);
    assert.equal(otherAgent.runCount, 0);
    assert.deepEqual(suite.results[0]?.tags, ["smoke"]);
  });

  test("a name runs only that case, matched exactly and case-sensitively (13)", async () => {
    const cases = [makeCase({ name: "first" }), makeCase({ name: "second" }), makeCase({ name: "third" })];
    const suite = await runCases(cases, { name: "second", judgeModel: new ScriptedJudge() });
    assert.deepEqual(
      suite.results.map((r) => r.name),
      ["second"],
    );
    // The result keeps its declaration index.
    assert.equal(suite.results[0]?.index, 1);
    const none = await runCases(cases, { name: "Second", judgeModel: new ScriptedJudge() });
    assert.equal(none.total, 0);
    const prefix = await runCases(cases, { name: "sec", judgeModel: new ScriptedJudge() });
    assert.equal(prefix.total, 0);
  });

  test("name and tag together are ANDed; input order is kept (B1, B2)", async () => {
    const cases = [
      makeCase({ name: "a", tags: ["smoke"] }),
      makeCase({ name: "b", tags: ["slow"] }),
      makeCase({ name: "c", tags: ["smoke", "slow"] }),
    ];
    const judge = new ScriptedJudge();
    assert.deepEqual(
      (await runCases(cases, { name: "b", tag: "smoke", judgeModel: judge })).results.map((r) => r.name),
      [],
    );
    assert.deepEqual(
      (await runCases(cases, { name: "c", tag: "smoke", judgeModel: judge })).results.map((r) => r.name),
      ["c"],
    );
    assert.deepEqual(
      (await runCases(cases, { tag: "slow", judgeModel: judge })).results.map((r) => r.name),
      ["b", "c"],
    );
    // Lists match any of their values.
    assert.deepEqual(
      (await runCases(cases, { name: ["c", "a"], judgeModel: judge })).results.map((r) => r.name),
      ["a", "c"],
    );
    // A tag must match exactly, not as a substring.
    assert.equal((await runCases(cases, { tag: "smok", judgeModel: judge })).total, 0);
  });

  test("an unknown tag gives an empty, failing suite and runs nothing (14, B4)", async () => {
    const agent = new StubAgent();
    const suite = await runCases([makeCase({ agent, tags: ["smoke"] })], { tag: "nope", judgeModel: new ScriptedJudge() });
    assert.deepEqual(suite.results, []);
    assert.equal(agent.runCount, 0);
    assert.equal(suite.status, "FAIL");
    const { summary, cases } = suite.toJSON();
    assert.deepEqual(
      { total: summary.total, passed: summary.passed, failed: summary.failed, status: summary.status, skipped: summary.skipped },
      { total: 0, passed: 0, failed: 0, status: "FAIL", skipped: 0 },
    );
    assert.deepEqual(cases, []);
  });
});

describe("suite abort and cancellation (M)", () => {
  test("a cancelled run aborts the suite; unrun cases are recorded as skipped (21, M1-M3)", async () => {
    const neverAgent = new StubAgent();
    const interrupted = makeCase({ name: "interrupted", agent: new StubAgent({ output: { content: "Run cancelled by user.", status: "cancelled" } }) });
    const neverRun = makeCase({ name: "never_run", tags: ["smoke", "slow"], agent: neverAgent });
    const started: string[] = [];
    const ended: Array<[string, boolean]> = [];
    const suite = await runCases([interrupted, neverRun], {
      judgeModel: new ScriptedJudge(),
      onCaseStart: (c) => void started.push(c.name),
      onCaseEnd: (c, r) => void ended.push([c.name, r.skipped]),
    });
    const [first, second] = suite.results;
    assert.equal(first?.error, "agent: run cancelled");
    assert.equal(first?.skipped, false);
    assert.equal(neverAgent.runCount, 0);
    assert.equal(second?.skipped, true);
    assert.equal(second?.error, SKIPPED);
    assert.deepEqual(second?.tags, ["smoke", "slow"]);
    assert.equal(second?.agentId, "stub-agent");
    assert.equal(second?.sessionId, "");
    assert.equal(second?.durationSeconds, 0);
    assert.equal(second?.index, 1);
    assert.deepEqual(ended, [
      ["interrupted", false],
      ["never_run", true],
    ]);
    // onCaseStart is not called for a skipped case (L5).
    assert.deepEqual(started, ["interrupted"]);
    const json = suite.toJSON();
    assert.deepEqual(
      { total: json.summary.total, passed: json.summary.passed, failed: json.summary.failed, status: json.summary.status, skipped: json.summary.skipped },
      { total: 2, passed: 0, failed: 2, status: "FAIL", skipped: 1 },
    );
    assert.deepEqual(
      json.cases.map((c) => c.skipped),
      [false, true],
    );
  });

  test("a skipped team case keeps its team id (M2)", async () => {
    const interrupted = makeCase({ name: "interrupted", agent: new StubAgent({ output: { content: "", status: "cancelled" } }) });
    const teamCase = makeCase({ name: "team_case", agent: null, team: new StubAgent({ id: "research-team" }) });
    const suite = await runCases([interrupted, teamCase], { judgeModel: new ScriptedJudge() });
    assert.equal(suite.results[1]?.teamId, "research-team");
    assert.equal(suite.results[1]?.agentId, null);
    assert.equal(suite.results[1]?.error, SKIPPED);
  });

  test("an onCaseEnd error on a skipped case is appended to it (M3)", async () => {
    const interrupted = makeCase({ name: "interrupted", agent: new StubAgent({ output: { content: "", status: "cancelled" } }) });
    const suite = await runCases([interrupted, makeCase({ name: "never_run" })], {
      judgeModel: new ScriptedJudge(),
      onCaseEnd: (_c, r) => {
        if (r.skipped) throw new BrokenPipeError("stdout gone");
      },
    });
    assert.equal(suite.results[1]?.error, `${SKIPPED}; hook: onCaseEnd BrokenPipeError: stdout gone`);
  });

  test("aborting the signal cancels the case in flight and skips the rest (M1, signal)", async () => {
    const blocked = blockingAgent("slow");
    const laterAgent = new StubAgent();
    const teardowns: Array<string | null> = [];
    const ended: Array<[string, boolean]> = [];
    const controller = new AbortController();
    const running = runCases(
      [
        makeCase({ name: "in_flight", agent: blocked.agent, teardown: (_ctx, r) => void teardowns.push(r.error) }),
        makeCase({ name: "later", agent: laterAgent }),
        makeCase({ name: "last", agent: laterAgent }),
      ],
      { judgeModel: new ScriptedJudge(), signal: controller.signal, onCaseEnd: (c, r) => void ended.push([c.name, r.skipped]) },
    );
    await blocked.started;
    controller.abort();
    const suite = await running;
    assert.equal(suite.cancelled, true);
    const [inFlight, later, last] = suite.results;
    assert.equal(inFlight?.error, CANCELLED_IN_FLIGHT);
    assert.equal(inFlight?.skipped, false);
    assert.equal(inFlight?.timedOut, false);
    assert.equal(inFlight?.passed, false);
    assert.equal(blocked.signals[0]?.aborted, true);
    // Teardown still ran, and saw the cancellation.
    assert.deepEqual(teardowns, [CANCELLED_IN_FLIGHT]);
    assert.equal(laterAgent.runCount, 0);
    assert.deepEqual(
      [later?.skipped, later?.error, last?.skipped, last?.error],
      [true, SKIPPED, true, SKIPPED],
    );
    assert.deepEqual(ended, [
      ["in_flight", false],
      ["later", true],
      ["last", true],
    ]);
    assert.equal(suite.toJSON().summary.skipped, 2);
  });

  test("with concurrency, every case in flight is cancelled and the rest skipped (M1, signal)", async () => {
    const a = blockingAgent("a");
    const b = blockingAgent("b");
    const third = new StubAgent();
    const controller = new AbortController();
    const running = runCases([makeCase({ name: "a", agent: a.agent }), makeCase({ name: "b", agent: b.agent }), makeCase({ name: "c", agent: third })], {
      judgeModel: new ScriptedJudge(),
      signal: controller.signal,
      concurrency: 2,
    });
    await Promise.all([a.started, b.started]);
    controller.abort();
    const suite = await running;
    assert.deepEqual(
      suite.results.map((r) => [r.name, r.error]),
      [
        ["a", CANCELLED_IN_FLIGHT],
        ["b", CANCELLED_IN_FLIGHT],
        ["c", SKIPPED],
      ],
    );
    assert.equal(third.runCount, 0);
    assert.equal(suite.cancelled, true);
  });

  test("an already-aborted signal runs nothing and skips every case (M)", async () => {
    const agent = new StubAgent();
    const started: string[] = [];
    const suite = await runCases([makeCase({ name: "a", agent }), makeCase({ name: "b", agent })], {
      judgeModel: new ScriptedJudge(),
      signal: AbortSignal.abort(),
      onCaseStart: (c) => void started.push(c.name),
    });
    assert.equal(agent.runCount, 0);
    assert.deepEqual(started, []);
    assert.deepEqual(
      suite.results.map((r) => [r.skipped, r.error]),
      [
        [true, SKIPPED],
        [true, SKIPPED],
      ],
    );
    assert.equal(suite.cancelled, true);
    assert.equal(suite.status, "FAIL");
  });

  test("a suite cancelled during a case's setup does not start its agent (M)", async () => {
    const agent = new StubAgent();
    const inSetup = latch();
    const releaseSetup = latch();
    let teardowns = 0;
    const controller = new AbortController();
    const running = runCases(
      [
        makeCase({
          name: "setting_up",
          agent,
          setup: async () => {
            inSetup.open();
            await releaseSetup.promise;
            return "ctx";
          },
          teardown: () => void teardowns++,
        }),
      ],
      { judgeModel: new ScriptedJudge(), signal: controller.signal },
    );
    await inSetup.promise;
    controller.abort();
    releaseSetup.open();
    const suite = await running;
    assert.equal(agent.runCount, 0);
    assert.equal(suite.results[0]?.error, CANCELLED_IN_FLIGHT);
    // Setup completed, so teardown runs (D8).
    assert.equal(teardowns, 1);
    assert.equal(suite.cancelled, true);
  });
});

describe("order and concurrency (O2)", () => {
  test("by default cases run one after another, in declaration order", async () => {
    const log: string[] = [];
    const logging = (name: string): Agent => ({
      id: name,
      run: async () => {
        log.push(`${name}:start`);
        await new Promise((r) => setImmediate(r));
        log.push(`${name}:end`);
        return { content: "Paris", status: "completed" };
      },
    });
    const suite = await runCases([makeCase({ name: "a", agent: logging("a") }), makeCase({ name: "b", agent: logging("b") }), makeCase({ name: "c", agent: logging("c") })], {
      judgeModel: new ScriptedJudge(),
    });
    assert.deepEqual(log, ["a:start", "a:end", "b:start", "b:end", "c:start", "c:end"]);
    assert.equal(suite.status, "PASS");
  });

  test("with concurrency, results come back in declaration order whatever the finishing order", async () => {
    // "a" can only finish after "c" has started, so it finishes last.
    const cStarted = latch();
    const finished: string[] = [];
    const a: Agent = {
      id: "a",
      run: async () => {
        await cStarted.promise;
        await new Promise((r) => setImmediate(r));
        finished.push("a");
        return { content: "Paris", status: "completed" };
      },
    };
    const quick = (name: string, onStart?: () => void): Agent => ({
      id: name,
      run: async () => {
        onStart?.();
        finished.push(name);
        return { content: "Paris", status: "completed" };
      },
    });
    const suite = await runCases(
      [makeCase({ name: "a", agent: a }), makeCase({ name: "b", agent: quick("b") }), makeCase({ name: "c", agent: quick("c", () => cStarted.open()) })],
      { judgeModel: new ScriptedJudge(), concurrency: 3 },
    );
    assert.equal(finished[finished.length - 1], "a");
    assert.deepEqual(
      suite.results.map((r) => [r.name, r.index, r.passed]),
      [
        ["a", 0, true],
        ["b", 1, true],
        ["c", 2, true],
      ],
    );
  });

  test("an invalid concurrency is a usage error", async () => {
    for (const concurrency of [0, 1.5, -2]) {
      await assert.rejects(runCases([makeCase()], { concurrency }), (err: unknown) => {
        assert.ok(err instanceof EvalfleetError);
        assert.equal(err.code, ErrorCode.Usage);
        assert.equal(err.message, `concurrency must be a whole number >= 1, got ${concurrency}`);
        return true;
      });
    }
  });
});

describe("payload (K)", () => {
  const LEGACY_KEYS = [
    "name",
    "agent_id",
    "team_id",
    "tags",
    "session_id",
    "duration_seconds",
    "judge_passed",
    "judge_reason",
    "judge_score",
    "reliability_passed",
    "output",
    "tools_called",
    "timed_out",
    "skipped",
    "passed",
    "error",
  ];
  const SCORE_KEYS = ["score_value", "score_passed", "score_reason"];

  test("toJSON matches the contract: key order, types, serialisable (50)", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web" }] };
    const c = makeCase({ name: "capital_of_france", tags: ["smoke", "geo"], agent: new StubAgent({ output }), expectedToolCalls: ["search_web"] });
    const suite = await runCases([c], { judgeModel: new ScriptedJudge(), runId: "run-123" });
    const json = suite.toJSON();
    assert.deepEqual(Object.keys(json), ["summary", "cases"]);
    assert.deepEqual(Object.keys(json.summary), ["total", "passed", "failed", "status", "skipped", "run_id", "duration_seconds", "pass_rate", "pass_threshold", "repeat", "pass_at_k", "infra_errors", "tokens", "cost_usd", "cost_unknown_cases", "budget", "confidence", "pass_rate_ci", "pass_rate_method", "trial_pass_rate", "pass_hat_k", "case_pass_rate", "judge_score_mean", "judge_score_ci", "score_value_mean", "score_value_ci", "adaptive_repeats"]);
    assert.equal(json.summary.run_id, "run-123");
    assert.equal(typeof json.summary.duration_seconds, "number");
    const [entry] = json.cases;
    assert.ok(entry);
    assert.deepEqual(Object.keys(entry), [...LEGACY_KEYS, ...SCORE_KEYS, "index", "attempts", "worker", "expectations", "repeats", "pass_rate", "pass_at_k", "phase_seconds", "error_kind", "tokens", "cost_usd", "reliability_reason", "trajectory", "pass_rate_ci", "case_pass_rate", "decided", "adaptive_stop"]);
    assert.match(entry.session_id, /^eval-capital_of_france-[0-9a-f]{8}$/);
    assert.equal(typeof entry.duration_seconds, "number");
    assert.ok(Number.isFinite(entry.duration_seconds) && entry.duration_seconds >= 0);
    // Rounded to milliseconds.
    assert.equal(Math.round(entry.duration_seconds * 1000) / 1000, entry.duration_seconds);
    assert.ok(Array.isArray(entry.tags));
    assert.deepEqual(entry.tags, ["smoke", "geo"]);
    assert.ok(Array.isArray(entry.tools_called));
    assert.deepEqual(entry.tools_called, ["search_web"]);
    assert.deepEqual(
      {
        name: entry.name,
        agent_id: entry.agent_id,
        team_id: entry.team_id,
        judge_passed: entry.judge_passed,
        judge_reason: entry.judge_reason,
        judge_score: entry.judge_score,
        reliability_passed: entry.reliability_passed,
        output: entry.output,
        timed_out: entry.timed_out,
        skipped: entry.skipped,
        passed: entry.passed,
        error: entry.error,
        score_value: entry.score_value,
        score_passed: entry.score_passed,
        score_reason: entry.score_reason,
        index: entry.index,
        attempts: entry.attempts,
        worker: entry.worker,
      },
      {
        name: "capital_of_france",
        agent_id: "stub-agent",
        team_id: null,
        judge_passed: true,
        judge_reason: "meets the criteria",
        judge_score: null,
        reliability_passed: true,
        output: "Paris",
        timed_out: false,
        skipped: false,
        passed: true,
        error: null,
        score_value: null,
        score_passed: null,
        score_reason: null,
        index: 0,
        attempts: 1,
        worker: "local",
      },
    );
    // Serialisable, and JSON.stringify goes through toJSON.
    assert.deepEqual(JSON.parse(JSON.stringify(suite)), json);
    assert.equal("response" in entry, false);
  });

  test("the score keys are additive: the first 16 keys keep the legacy order (84)", async () => {
    const suite = await runCases([makeCase({ scorer: new StubScorer({ value: 0.75, passed: true, reason: "close" }) })], { judgeModel: new ScriptedJudge() });
    const entry = suite.toJSON().cases[0]!;
    const keys = Object.keys(entry);
    assert.deepEqual(keys.slice(0, 16), LEGACY_KEYS);
    assert.deepEqual(keys.slice(16, 19), SCORE_KEYS);
    assert.deepEqual([entry.score_value, entry.score_passed, entry.score_reason], [0.75, true, "close"]);
    const unscored = (await runCases([makeCase()], { judgeModel: new ScriptedJudge() })).toJSON().cases[0]!;
    assert.deepEqual([unscored.score_value, unscored.score_passed, unscored.score_reason], [null, null, null]);
  });

  test("a failed suite's summary (51, K1)", async () => {
    const failing = [
      makeCase({ name: "wrong", judgeModel: new ScriptedJudge({ answer: { passed: false, reason: "says Lyon" } }) }),
      makeCase({ name: "broken", agent: new StubAgent({ error: new Error("boom") }) }),
    ];
    const suite = await runCases(failing, { judgeModel: new ScriptedJudge() });
    assert.deepEqual([suite.total, suite.passed, suite.failed, suite.status], [2, 0, 2, "FAIL"]);
    const { summary } = suite.toJSON();
    assert.deepEqual([summary.total, summary.passed, summary.failed, summary.status, summary.skipped], [2, 0, 2, "FAIL", 0]);
  });

  test("PASS only when every case passed (K1)", async () => {
    const judge = new ScriptedJudge();
    const all = await runCases([makeCase({ name: "a" }), makeCase({ name: "b" })], { judgeModel: judge });
    assert.deepEqual([all.total, all.passed, all.failed, all.status], [2, 2, 0, "PASS"]);
    const mixed = await runCases([makeCase({ name: "a" }), makeCase({ name: "b", agent: new StubAgent({ error: new Error("boom") }) })], { judgeModel: judge });
    assert.deepEqual([mixed.total, mixed.passed, mixed.failed, mixed.status], [2, 1, 1, "FAIL"]);
    assert.equal(mixed.cancelled, false);
  });
});

describe("silence (L6)", () => {
  test("the runner writes nothing to stdout or stderr (52)", async () => {
    // Let the test reporter flush what it queued before this test, so only the runner's writes are seen.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    const written: Array<[string, string]> = [];
    const out = process.stdout.write;
    const err = process.stderr.write;
    /** Records a write and passes it on, so the test reporter's own protocol is never swallowed. */
    const spy = (stream: "stdout" | "stderr", original: typeof out, target: NodeJS.WriteStream): typeof out =>
      function (this: unknown, chunk: unknown, ...rest: unknown[]): boolean {
        // node --test children report to the parent in v8-serialized frames (they start with 0xFF); those are not the runner's.
        if (!(Buffer.isBuffer(chunk) && chunk[0] === 0xff)) written.push([stream, String(chunk)]);
        return (original as (...args: unknown[]) => boolean).call(target, chunk, ...rest);
      } as typeof out;
    process.stdout.write = spy("stdout", out, process.stdout);
    process.stderr.write = spy("stderr", err, process.stderr);
    let suite;
    try {
      suite = await runCases(
        [
          makeCase({ name: "passes" }),
          makeCase({ name: "judge_fails", judgeModel: new ScriptedJudge({ answer: { passed: false, reason: "no" } }) }),
          makeCase({ name: "malformed_judge", judgeModel: new ScriptedJudge({ answer: "not json at all" }) }),
          makeCase({ name: "agent_throws", agent: new StubAgent({ error: new Error("boom") }) }),
          makeCase({ name: "error_event", agent: new StubAgent({ events: [{ type: "run_error", content: "rate limited" }], emitOutput: false }) }),
          makeCase({
            name: "cleanup_fails",
            teardown: () => {
              throw new Error("rm failed");
            },
          }),
          makeCase({ name: "scorer_fails", criteria: null, scorer: new StubScorer({ value: 2, passed: true }) }),
        ],
        {
          judgeModel: new ScriptedJudge(),
          onCaseStart: (c) => {
            if (c.name === "passes") throw new Error("start bug");
          },
        },
      );
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
    }
    assert.deepEqual(written, []);
    assert.equal(suite.total, 7);
    assert.equal(suite.passed, 0);
  });
});

describe("presentation hooks (L)", () => {
  test("onRunEvent receives exactly the scripted events, with the same case object, never the output (55)", async () => {
    const events: RunEvent[] = [
      { type: "run_started" },
      { type: "tool_call_started", tool: { toolName: "search_web" } },
      { type: "tool_call_completed", tool: { toolName: "search_web" } },
      { type: "run_content", content: "Paris" },
    ];
    const c = makeCase({ agent: new StubAgent({ events }) });
    const seen: Array<[Case, RunEvent]> = [];
    const suite = await runCases([c], { judgeModel: new ScriptedJudge(), onRunEvent: (hc, e) => void seen.push([hc, e]) });
    assert.equal(seen.length, events.length);
    seen.forEach(([hc, e], i) => {
      assert.equal(hc, c);
      assert.equal(e, events[i]);
    });
    assert.equal(
      seen.some(([, e]) => e.type === "run_output"),
      false,
    );
    assert.equal(suite.results[0]?.passed, true);
  });

  test("run_error events are forwarded to onRunEvent too (E3)", async () => {
    const errorEvent: RunEvent = { type: "run_error", content: "rate limited" };
    const seen: RunEvent[] = [];
    await runCases([makeCase({ agent: new StubAgent({ events: [errorEvent], emitOutput: false }) })], {
      judgeModel: new ScriptedJudge(),
      onRunEvent: (_c, e) => void seen.push(e),
    });
    assert.deepEqual(seen, [errorEvent]);
  });

  test("onCaseStart and onCaseEnd see every case, in order (56)", async () => {
    const started: string[] = [];
    const ended: Array<[string, string]> = [];
    const order: string[] = [];
    const agent = (name: string): Agent => ({
      id: name,
      run: async () => {
        order.push(`run ${name}`);
        return { content: "Paris", status: "completed" };
      },
    });
    await runCases([makeCase({ name: "a", agent: agent("a") }), makeCase({ name: "b", agent: agent("b") })], {
      judgeModel: new ScriptedJudge(),
      onCaseStart: (c) => void (started.push(c.name), order.push(`start ${c.name}`)),
      onCaseEnd: (c, r) => void (ended.push([c.name, r.name]), order.push(`end ${c.name}`)),
    });
    assert.deepEqual(started, ["a", "b"]);
    assert.deepEqual(ended, [
      ["a", "a"],
      ["b", "b"],
    ]);
    assert.deepEqual(order, ["start a", "run a", "end a", "start b", "run b", "end b"]);
  });

  test("onCaseStart and onCaseEnd errors are isolated and recorded (57, L3)", async () => {
    const agents = [new StubAgent(), new StubAgent()];
    const errorsSeenByHook: Array<string | null> = [];
    const suite = await runCases([makeCase({ name: "a", agent: agents[0] }), makeCase({ name: "b", agent: agents[1] })], {
      judgeModel: new ScriptedJudge(),
      onCaseStart: () => {
        throw new Error("start bug");
      },
      onCaseEnd: (_c, r) => {
        errorsSeenByHook.push(r.error);
        throw new BrokenPipeError("stdout gone");
      },
    });
    assert.deepEqual(
      agents.map((a) => a.runCount),
      [1, 1],
    );
    for (const r of suite.results) {
      assert.equal(r.error, "hook: onCaseStart Error: start bug; hook: onCaseEnd BrokenPipeError: stdout gone");
      assert.equal(r.judgePassed, true);
      assert.equal(r.passed, false);
    }
    // The start error is appended after the case ran, before onCaseEnd; the end error after the hook returned.
    assert.deepEqual(errorsSeenByHook, ["hook: onCaseStart Error: start bug", "hook: onCaseStart Error: start bug"]);
  });

  test("async presentation hooks are flagged as errors, not silently dropped (58, L2)", async () => {
    const c = makeCase({ agent: new StubAgent({ events: [{ type: "run_started" }] }) });
    const suite = await runCases([c], {
      judgeModel: new ScriptedJudge(),
      onCaseStart: async () => undefined,
      onRunEvent: async () => {
        // A rejected promise must not surface as an unhandled rejection either.
        throw new Error("async renderer");
      },
      onCaseEnd: async () => undefined,
    });
    const error = suite.results[0]?.error ?? "";
    assert.equal(
      error,
      `hook: onRunEvent TypeError: ${SYNC_ONLY}; hook: onCaseStart TypeError: ${SYNC_ONLY}; hook: onCaseEnd TypeError: ${SYNC_ONLY}`,
    );
    assert.match(error, /must be sync/);
    assert.equal(suite.results[0]?.judgePassed, true);
  });

  test("an onRunEvent error is recorded once, forwarding stops, the checks still run (59, L3)", async () => {
    let calls = 0;
    const events: RunEvent[] = [{ type: "a" }, { type: "b" }, { type: "c" }];
    const suite = await runCases([makeCase({ agent: new StubAgent({ events }) })], {
      judgeModel: new ScriptedJudge(),
      onRunEvent: () => {
        calls++;
        throw new TypeError("renderer bug");
      },
    });
    const r = suite.results[0]!;
    assert.equal(calls, 1);
    assert.equal(r.error, "hook: onRunEvent TypeError: renderer bug");
    assert.equal(r.judgePassed, true);
    assert.equal(r.output, "stub response");
  });

  test("onRunEvent is reset per case: a failure in one case does not silence the next", async () => {
    const seen: string[] = [];
    await runCases(
      [makeCase({ name: "a", agent: new StubAgent({ events: [{ type: "x" }, { type: "y" }] }) }), makeCase({ name: "b", agent: new StubAgent({ events: [{ type: "x" }, { type: "y" }] }) })],
      {
        judgeModel: new ScriptedJudge(),
        onRunEvent: (c, e) => {
          seen.push(`${c.name}:${e.type}`);
          if (c.name === "a") throw new Error("only in a");
        },
      },
    );
    assert.deepEqual(seen, ["a:x", "b:x", "b:y"]);
  });

  test("error parts join in Agno's order: stream hook, checks, timeout, cleanup, start hook, end hook (L4)", async () => {
    const c = makeCase({
      agent: new StubAgent({ events: [{ type: "run_started" }] }),
      judgeModel: new ScriptedJudge({ error: new Error("down") }),
      scorer: new StubScorer({ value: 1, passed: true }, { delay: STALL_MS }),
      timeoutSeconds: 0.2,
      teardown: () => {
        throw new Error("rm failed");
      },
    });
    const suite = await runCases([c], {
      onRunEvent: () => {
        throw new Error("render");
      },
      onCaseStart: () => {
        throw new Error("start bug");
      },
      onCaseEnd: () => {
        throw new Error("end bug");
      },
    });
    const r: CaseResult = suite.results[0]!;
    assert.equal(
      r.error,
      [
        "hook: onRunEvent Error: render",
        "judge: returned no result",
        "timeout: exceeded 0.2s",
        "cleanup: Error: rm failed",
        "hook: onCaseStart Error: start bug",
        "hook: onCaseEnd Error: end bug",
      ].join("; "),
    );
    assert.equal(r.timedOut, true);
  });
});
