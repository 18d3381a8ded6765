/**
 * One case's behaviour through runCase/runCases: errors and status (tests 15-20, 22-27), timeouts
 * and setup/teardown (28-35, 85), check configuration (36-43, 47-49), evidence (60-63) and the
 * scorer seam (79, 81-83) of Agno's test_suite.py (spec D-J). Tests 44-46 (db, spinner,
 * telemetry) have no counterpart: the runner has no db and builds no eval objects.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  Case,
  CaseResult,
  runCase,
  runCases,
  type Agent,
  type CaseOptions,
  type RunEvent,
  type RunMessage,
  type RunOutput,
  Score,
  type ScoreData,
} from "../../../index.ts";
import { ScriptedJudge, StubAgent, StubScorer, latch } from "../../support/doubles.ts";

const INPUT = "What is the capital of France?";
/** Long enough that only an abort ends it: a 150x margin over the 0.2 s timeouts used below. */
const STALL_MS = 30_000;
/** Every timeout in this file; the stalls above are far longer, the healthy paths far shorter. */
const TIMEOUT_S = 0.2;
const NO_JUDGE = "judge: no judge model configured: set OPENAI_API_KEY or pass judgeModel";

/** Agno's `_make_case` defaults, with any option overridden. */
function makeCase(overrides: Partial<CaseOptions> = {}): Case {
  return new Case({ name: "sample_case", input: INPUT, agent: new StubAgent(), criteria: "Mentions Paris.", ...overrides });
}

/** A StubAgent whose final output has this status and content. */
function agentWithStatus(status: string | null | undefined, content: unknown = "Paris"): StubAgent {
  const output: RunOutput = { content };
  if (status !== undefined) output.status = status;
  return new StubAgent({ output });
}

/** A named error class, as Python's exception classes name themselves in messages. */
class OSError extends Error {}

describe("errors and status (E, F)", () => {
  test("an agent that throws is recorded and the suite continues (15)", async () => {
    const judge = new ScriptedJudge();
    const broken = makeCase({ name: "broken", agent: new StubAgent({ error: new Error("model exploded") }) });
    const ok = makeCase({ name: "ok" });
    const suite = await runCases([broken, ok], { judgeModel: judge });
    const [first, second] = suite.results;
    assert.equal(first?.error, "agent: Error: model exploded");
    assert.equal(first?.passed, false);
    assert.equal(first?.judgePassed, null);
    assert.equal(second?.error, null);
    assert.equal(second?.passed, true);
    // No checks run for the failed case: only the second was judged.
    assert.equal(judge.requests.length, 1);
  });

  test("the error class name comes from err.name (E5)", async () => {
    const result = await runCase(makeCase({ agent: new StubAgent({ error: new TypeError("bad input") }) }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "agent: TypeError: bad input");
  });

  test("an agent whose promise rejects mid-run is recorded the same way (E5)", async () => {
    const agent: Agent = {
      id: "rejecting",
      run: async () => {
        throw new RangeError("too many tokens");
      },
    };
    const result = await runCase(makeCase({ agent }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "agent: RangeError: too many tokens");
    assert.equal(result.agentId, "rejecting");
  });

  test("an exception thrown mid-stream keeps the evidence already streamed (E5)", async () => {
    const agent: Agent = {
      id: "mid-stream",
      run: () =>
        (async function* (): AsyncGenerator<RunEvent> {
          yield { type: "run_output", output: { content: "partial", status: "completed" } };
          throw new Error("connection reset");
        })(),
    };
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent }), { judgeModel: judge });
    assert.equal(result.error, "agent: Error: connection reset");
    assert.equal(result.output, "partial");
    assert.equal(judge.requests.length, 0);
  });

  test("streamed run_error events are recorded; only the healthy case is judged (16)", async () => {
    const judge = new ScriptedJudge();
    const limited = makeCase({
      name: "limited",
      agent: new StubAgent({ events: [{ type: "run_error", content: "rate limited by provider" }], emitOutput: false }),
    });
    const typed = makeCase({
      name: "typed",
      agent: new StubAgent({ events: [{ type: "run_error", error: "boom", errorType: "ModelProviderError" }], emitOutput: false }),
    });
    const ok = makeCase({ name: "ok", agent: new StubAgent({ output: { content: "Paris", status: "completed" } }) });
    const suite = await runCases([limited, typed, ok], { judgeModel: judge });
    assert.deepEqual(
      suite.results.map((r) => r.error),
      ["agent: rate limited by provider", "agent: ModelProviderError: boom", null],
    );
    assert.equal(judge.requests.length, 1);
    assert.match(judge.requests[0]!.user, /\nParis\n/);
    assert.deepEqual(
      suite.results.map((r) => r.judgePassed),
      [null, null, true],
    );
  });

  test("a run_error event prefers content, then error, then 'unknown error' (E3)", async () => {
    const run = async (event: RunEvent): Promise<string | null> =>
      (await runCase(makeCase({ agent: new StubAgent({ events: [event], emitOutput: false }) }), { judgeModel: new ScriptedJudge() })).error;
    assert.equal(await run({ type: "run_error", content: "from content", error: "from error" }), "agent: from content");
    assert.equal(await run({ type: "run_error", content: "", error: "from error" }), "agent: from error");
    assert.equal(await run({ type: "run_error" }), "agent: unknown error");
    assert.equal(await run({ type: "run_error", errorType: "Timeout" }), "agent: Timeout: unknown error");
  });

  test("a paused run is not judged; its evidence is still kept (17)", async () => {
    const output: RunOutput = { content: "I have tools to execute, but I need confirmation.", status: "paused" };
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent: new StubAgent({ output }) }), { judgeModel: judge });
    assert.equal(result.error, "agent: run paused awaiting user input");
    assert.equal(judge.requests.length, 0);
    assert.equal(result.judgePassed, null);
    assert.equal(result.response, output);
    assert.equal(result.output, "I have tools to execute, but I need confirmation.");
    assert.equal(result.passed, false);
  });

  test("a cancelled run is not graded by any check (18)", async () => {
    const judge = new ScriptedJudge();
    const scorer = new StubScorer();
    const c = makeCase({ agent: agentWithStatus("cancelled", "Run cancelled by user."), expectedToolCalls: ["search_web"], scorer });
    const result = await runCase(c, { judgeModel: judge });
    assert.equal(result.error, "agent: run cancelled");
    assert.equal(result.judgePassed, null);
    assert.equal(result.reliabilityPassed, null);
    assert.equal(result.reliability, null);
    assert.equal(result.score, null);
    assert.equal(judge.requests.length, 0);
    assert.equal(scorer.calls.length, 0);
  });

  test("a team case labels its errors 'team' (19)", async () => {
    const result = await runCase(makeCase({ agent: null, team: agentWithStatus("cancelled") }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "team: run cancelled");
  });

  test("the team label follows every error route (20)", async () => {
    const judge = new ScriptedJudge();
    const teamCase = (name: string, team: Agent): Case => makeCase({ name, agent: null, team });
    const suite = await runCases(
      [
        teamCase("raises", new StubAgent({ error: new Error("boom") })),
        teamCase("event", new StubAgent({ events: [{ type: "run_error", content: "member failed" }], emitOutput: false })),
        teamCase("no_output", new StubAgent({ emitOutput: false })),
        teamCase("paused", agentWithStatus("paused")),
        teamCase("running", agentWithStatus("running")),
      ],
      { judgeModel: judge },
    );
    assert.deepEqual(
      suite.results.map((r) => r.error),
      [
        "team: Error: boom",
        "team: member failed",
        "team: no run output recorded",
        "team: run paused awaiting user input",
        "team: run ended with status running",
      ],
    );
    assert.equal(judge.requests.length, 0);
  });

  test("a non-completed status is not graded (22)", async () => {
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent: agentWithStatus("running") }), { judgeModel: judge });
    assert.equal(result.error, "agent: run ended with status running");
    assert.equal(judge.requests.length, 0);
    assert.equal(result.judgePassed, null);
  });

  test("error status and unknown statuses have their own messages (F3)", async () => {
    const judge = new ScriptedJudge();
    const error = await runCase(makeCase({ agent: agentWithStatus("error") }), { judgeModel: judge });
    assert.equal(error.error, "agent: run ended in error status");
    const regenerated = await runCase(makeCase({ agent: agentWithStatus("regenerated") }), { judgeModel: judge });
    assert.equal(regenerated.error, "agent: run ended with status regenerated");
    const pending = await runCase(makeCase({ agent: agentWithStatus("pending") }), { judgeModel: judge });
    assert.equal(pending.error, "agent: run ended with status pending");
    assert.equal(judge.requests.length, 0);
  });

  test("a run_error event from a team member is labelled by the case's field (23)", async () => {
    const events: RunEvent[] = [{ type: "run_error", content: "team member failed", source: "team" }];
    const result = await runCase(makeCase({ agent: new StubAgent({ events, emitOutput: false }) }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "agent: team member failed");
  });

  test("a run_error event that carries only `error` (a workflow's) is recorded (24)", async () => {
    const result = await runCase(makeCase({ agent: new StubAgent({ events: [{ type: "run_error", error: "step failed" }], emitOutput: false }) }), {
      judgeModel: new ScriptedJudge(),
    });
    assert.equal(result.error, "agent: step failed");
  });

  test("an error event followed by a completed output is still not graded (F5)", async () => {
    const judge = new ScriptedJudge();
    const agent = new StubAgent({ events: [{ type: "run_error", content: "tool crashed" }], output: { content: "Paris", status: "completed" } });
    const result = await runCase(makeCase({ agent }), { judgeModel: judge });
    assert.equal(result.error, "agent: tool crashed");
    assert.equal(result.output, "Paris");
    assert.equal(judge.requests.length, 0);
  });

  test("an error event and the evidence survive a later timeout (25)", async () => {
    const agent = new StubAgent({ events: [{ type: "run_error", content: "boom mid-stream" }], postDelay: STALL_MS });
    const result = await runCase(makeCase({ agent, timeoutSeconds: TIMEOUT_S }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.timedOut, true);
    assert.equal(result.error, `agent: boom mid-stream; timeout: exceeded ${TIMEOUT_S}s`);
  });

  test("output evidence survives a stall after the final output, and is not graded afterwards (26, D5)", async () => {
    const output: RunOutput = { content: "the answer", status: "completed", tools: [{ toolName: "search_web" }] };
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent: new StubAgent({ output, tailDelay: STALL_MS }), timeoutSeconds: TIMEOUT_S }), { judgeModel: judge });
    assert.equal(result.timedOut, true);
    assert.equal(result.error, `timeout: exceeded ${TIMEOUT_S}s`);
    assert.equal(result.output, "the answer");
    assert.deepEqual(result.toolsCalled, ["search_web"]);
    assert.equal(result.response, output);
    assert.equal(result.judgePassed, null);
    assert.equal(judge.requests.length, 0);
    assert.equal(result.passed, false);
  });

  test("a missing status is graded as completed, and the next case passes (27, adapted)", async () => {
    const judge = new ScriptedJudge();
    const missing = makeCase({ name: "missing", agent: agentWithStatus(undefined) });
    const nullish = makeCase({ name: "null", agent: agentWithStatus(null) });
    const next = makeCase({ name: "next" });
    const suite = await runCases([missing, nullish, next], { judgeModel: judge });
    for (const r of suite.results) {
      assert.equal(r.error, null, r.name);
      assert.equal(r.judgePassed, true, r.name);
      assert.equal(r.passed, true, r.name);
    }
    assert.equal(judge.requests.length, 3);
  });

  test("a run returning a promise (not a stream) is graded like a streamed one (E1)", async () => {
    const agent = new StubAgent({ promise: true, output: { content: "Paris", status: "completed", tools: [{ toolName: "search_web" }] } });
    const result = await runCase(makeCase({ agent, expectedToolCalls: ["search_web"] }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, null);
    assert.equal(result.output, "Paris");
    assert.equal(result.judgePassed, true);
    assert.equal(result.reliabilityPassed, true);
  });

  test("a promise resolving to nothing is 'no run output recorded' (F3)", async () => {
    const agent: Agent = { id: "empty", run: async () => undefined as unknown as RunOutput };
    const result = await runCase(makeCase({ agent }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "agent: no run output recorded");
  });

  test("when several outputs arrive, the last one wins (E2)", async () => {
    const agent: Agent = {
      run: () =>
        (async function* (): AsyncGenerator<RunEvent> {
          yield { type: "run_output", output: { content: "draft", status: "running" } };
          yield { type: "run_output", output: { content: "Paris", status: "completed" } };
        })(),
    };
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent }), { judgeModel: judge });
    assert.equal(result.error, null);
    assert.equal(result.output, "Paris");
    assert.equal(judge.requests.length, 1);
  });
});

describe("timeouts and setup/teardown (D)", () => {
  test("a timeout sets the flags, aborts the run, and teardown still runs (28, D8)", async () => {
    const agent = new StubAgent({ delay: STALL_MS });
    const seen: Array<{ timedOut: boolean; error: string | null; duration: number }> = [];
    const c = makeCase({
      agent,
      timeoutSeconds: TIMEOUT_S,
      teardown: (_ctx, result) => void seen.push({ timedOut: result.timedOut, error: result.error, duration: result.durationSeconds }),
    });
    const result = await runCase(c, { judgeModel: new ScriptedJudge() });
    assert.equal(result.timedOut, true);
    assert.equal(result.error, `timeout: exceeded ${TIMEOUT_S}s`);
    // Teardown got the live result: the timeout already recorded, the duration not yet set.
    assert.deepEqual(seen, [{ timedOut: true, error: `timeout: exceeded ${TIMEOUT_S}s`, duration: 0 }]);
    assert.ok(result.durationSeconds >= TIMEOUT_S, `duration ${result.durationSeconds}`);
    assert.equal(agent.signals[0]?.aborted, true);
    assert.equal(result.passed, false);
  });

  test("the runner's default timeout applies to a case that sets none (D2)", async () => {
    const suite = await runCases([makeCase({ agent: new StubAgent({ delay: STALL_MS }) })], { judgeModel: new ScriptedJudge(), defaultTimeout: TIMEOUT_S });
    assert.equal(suite.results[0]?.error, `timeout: exceeded ${TIMEOUT_S}s`);
  });

  test("a timeout of 0 counts: it is not replaced by the default (D2)", async () => {
    const result = await runCase(makeCase({ agent: new StubAgent({ delay: STALL_MS }), timeoutSeconds: 0 }), {
      judgeModel: new ScriptedJudge(),
      defaultTimeout: 120,
    });
    assert.equal(result.timedOut, true);
    assert.equal(result.error, "timeout: exceeded 0s");
  });

  test("the timeout covers the judge call; teardown still runs (29, D3)", async () => {
    const judge = new ScriptedJudge({ delay: STALL_MS });
    let teardowns = 0;
    const c = makeCase({ timeoutSeconds: TIMEOUT_S, teardown: () => void teardowns++ });
    const result = await runCase(c, { judgeModel: judge });
    assert.equal(judge.requests.length, 1);
    assert.equal(result.timedOut, true);
    assert.equal(result.error, `timeout: exceeded ${TIMEOUT_S}s`);
    assert.equal(result.judgePassed, null);
    assert.equal(result.output, "stub response");
    assert.equal(teardowns, 1);
  });

  test("the setup context is threaded to teardown (30, D6)", async () => {
    const sentinel = { token: "ctx" };
    const received: unknown[] = [];
    let setupArgs = -1;
    const c = makeCase({
      setup: (...args: unknown[]) => {
        setupArgs = args.length;
        return sentinel;
      },
      teardown: (ctx, result) => void received.push(ctx, result),
    });
    const result = await runCase(c, { judgeModel: new ScriptedJudge() });
    assert.equal(setupArgs, 0);
    assert.equal(received[0], sentinel);
    assert.equal(received[1], result);
    assert.equal(result.passed, true);
  });

  test("async setup and teardown are awaited, in order around the run (31)", async () => {
    const log: string[] = [];
    const agent: Agent = {
      id: "logging",
      run: async () => {
        log.push("run");
        return { content: "Paris", status: "completed" };
      },
    };
    const c = makeCase({
      agent,
      setup: async () => {
        await new Promise((r) => setImmediate(r));
        log.push("setup done");
        return "ctx";
      },
      teardown: async (ctx) => {
        await new Promise((r) => setImmediate(r));
        log.push(`teardown done ${String(ctx)}`);
      },
    });
    const result = await runCase(c, { judgeModel: new ScriptedJudge() });
    assert.deepEqual(log, ["setup done", "run", "teardown done ctx"]);
    assert.equal(result.passed, true);
  });

  test("a sync hook returning a thenable (not a native promise) is awaited (32, adapted)", async () => {
    const gate = latch<string>();
    const thenable: PromiseLike<string> = { then: (ok, fail) => gate.promise.then(ok, fail) };
    let teardownCtx: unknown;
    const c = makeCase({ setup: () => thenable, teardown: (ctx) => void (teardownCtx = ctx) });
    let done = false;
    const running = runCase(c, { judgeModel: new ScriptedJudge() }).then((r) => ((done = true), r));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(done, false, "runCase must wait for the thenable");
    gate.open("from thenable");
    const result = await running;
    assert.equal(teardownCtx, "from thenable");
    assert.equal(result.passed, true);
  });

  test("a sync teardown that returns a promise is awaited before the case ends (33)", async () => {
    const gate = latch();
    let done = false;
    const c = makeCase({ teardown: () => gate.promise });
    const running = runCase(c, { judgeModel: new ScriptedJudge() }).then((r) => ((done = true), r));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(done, false, "runCase must wait for teardown's promise");
    gate.open();
    assert.equal((await running).passed, true);
  });

  test("a teardown error fails the case but the suite continues (34, D9)", async () => {
    const failing = makeCase({
      name: "failing_cleanup",
      teardown: () => {
        throw new OSError("could not delete");
      },
    });
    const suite = await runCases([failing, makeCase({ name: "next" })], { judgeModel: new ScriptedJudge() });
    const [first, second] = suite.results;
    assert.equal(first?.error, "cleanup: OSError: could not delete");
    assert.equal(first?.judgePassed, true);
    assert.equal(first?.passed, false);
    assert.equal(second?.passed, true);
  });

  test("a rejected async teardown is a cleanup error too (D9)", async () => {
    const result = await runCase(makeCase({ teardown: async () => Promise.reject(new Error("bucket busy")) }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "cleanup: Error: bucket busy");
  });

  test("a setup error skips the body and teardown (35, D7)", async () => {
    const agent = new StubAgent();
    let teardowns = 0;
    const c = makeCase({
      agent,
      setup: () => {
        throw new RangeError("fixture missing");
      },
      teardown: () => void teardowns++,
    });
    const result = await runCase(c, { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "setup: RangeError: fixture missing");
    assert.equal(agent.runCount, 0);
    assert.equal(teardowns, 0);
    assert.equal(typeof result.durationSeconds, "number");
    assert.equal(result.timedOut, false);
    assert.equal(result.passed, false);
  });

  test("setup is outside the timeout; teardown runs on errors, not after a failed setup (85)", async () => {
    // A setup three times longer than the timeout; the body itself takes a few milliseconds.
    const events: unknown[] = [];
    const slowSetup = makeCase({
      name: "slow_setup",
      timeoutSeconds: 0.3,
      setup: async () => {
        await new Promise((r) => setTimeout(r, 900));
        events.push("setup");
        return "ctx";
      },
      teardown: (ctx, result) => void events.push(["teardown", ctx, result.timedOut]),
    });
    const result = await runCase(slowSetup, { judgeModel: new ScriptedJudge() });
    assert.equal(result.timedOut, false);
    assert.equal(result.error, null);
    assert.equal(result.passed, true);
    assert.deepEqual(events, ["setup", ["teardown", "ctx", false]]);
    // The duration covers setup too (D1).
    assert.ok(result.durationSeconds >= 0.85, `duration ${result.durationSeconds}`);

    let teardownError: string | null | undefined;
    const agentError = makeCase({
      agent: new StubAgent({ error: new Error("boom") }),
      setup: () => "ctx",
      teardown: (_ctx, r) => void (teardownError = r.error),
    });
    await runCase(agentError, { judgeModel: new ScriptedJudge() });
    assert.equal(teardownError, "agent: Error: boom");

    let called = false;
    const setupFails = makeCase({
      setup: () => {
        throw new Error("no fixture");
      },
      teardown: () => void (called = true),
    });
    const failed = await runCase(setupFails, { judgeModel: new ScriptedJudge() });
    assert.equal(called, false);
    assert.equal(failed.error, "setup: Error: no fixture");
  });
});

describe("check configuration (G, H)", () => {
  test("a judge-only case (36)", async () => {
    const result = await runCase(makeCase(), { judgeModel: new ScriptedJudge() });
    assert.equal(result.judgePassed, true);
    assert.equal(result.judgeReason, "meets the criteria");
    assert.equal(result.reliabilityPassed, null);
    assert.equal(result.passed, true);
  });

  test("binary scoring is the default: the request asks for a pass/fail verdict (37)", async () => {
    const judge = new ScriptedJudge();
    const c = makeCase();
    const result = await runCase(c, { judgeModel: judge });
    assert.equal(c.judgeThreshold, 7);
    assert.equal(judge.requests.length, 1);
    const request = judge.requests[0]!;
    assert.equal(request.schemaName, "binary");
    assert.match(request.system, /## Criteria\nMentions Paris\.\n/);
    assert.match(request.system, /Determine if the output PASSES or FAILS the criteria above\./);
    assert.deepEqual(Object.keys((request.jsonSchema as { properties: object }).properties).sort(), ["passed", "reason"]);
    assert.equal(result.judgeScore, null);
    assert.equal(result.toJSON().judge_score, null);
  });

  test("the request carries the input and the output fenced with a fresh 32-hex nonce (G2)", async () => {
    const judge = new ScriptedJudge();
    await runCase(makeCase({ agent: agentWithStatus("completed", "Paris is the capital.") }), { judgeModel: judge });
    await runCase(makeCase({ agent: agentWithStatus("completed", "Paris is the capital.") }), { judgeModel: judge });
    const nonces = judge.requests.map((request) => {
      const m = /^<input>\nWhat is the capital of France\?\n<\/input>\n\n[\s\S]*<output nonce="([0-9a-f]{32})">\nParis is the capital\.\n<\/output nonce="\1">\n$/.exec(request.user);
      assert.ok(m, `unexpected user message: ${request.user}`);
      return m[1];
    });
    assert.equal(nonces.length, 2);
    assert.notEqual(nonces[0], nonces[1]);
  });

  test("numeric scoring forwards the mode and threshold and captures the score (38, G4)", async () => {
    const judge = new ScriptedJudge({ answer: { score: 8, reason: "mostly right" } });
    const result = await runCase(makeCase({ judgeMode: "numeric", judgeThreshold: 8 }), { judgeModel: judge });
    const request = judge.requests[0]!;
    assert.equal(request.schemaName, "numeric");
    assert.match(request.system, /## Scoring \(1-10\)/);
    assert.deepEqual(Object.keys((request.jsonSchema as { properties: object }).properties).sort(), ["reason", "score"]);
    // score >= threshold passes: 8 against 8.
    assert.equal(result.judgePassed, true);
    assert.equal(result.judgeScore, 8);
    assert.equal(result.judgeReason, "mostly right");
    assert.equal(result.toJSON().judge_score, 8);
    assert.equal(result.passed, true);
  });

  test("a numeric score below the threshold fails the case (39)", async () => {
    const judge = new ScriptedJudge({ answer: { score: 5, reason: "partial" } });
    const result = await runCase(makeCase({ judgeMode: "numeric" }), { judgeModel: judge });
    assert.equal(result.judgePassed, false);
    assert.equal(result.judgeScore, 5);
    assert.equal(result.error, null);
    assert.equal(result.passed, false);
  });

  test("an empty judge reason is stored as null (G5)", async () => {
    const result = await runCase(makeCase(), { judgeModel: new ScriptedJudge({ answer: { passed: false, reason: "" } }) });
    assert.equal(result.judgePassed, false);
    assert.equal(result.judgeReason, null);
  });

  test("a reliability-only case (40)", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web" }] };
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ criteria: null, expectedToolCalls: ["search_web"], agent: new StubAgent({ output }) }), { judgeModel: judge });
    assert.equal(result.judgePassed, null);
    assert.equal(judge.requests.length, 0);
    assert.equal(result.reliabilityPassed, true);
    assert.deepEqual(result.reliability, {
      passed: true,
      passedToolCalls: ["search_web"],
      failedToolCalls: [],
      additionalToolCalls: [],
      missingToolCalls: [],
      reason: "the expected call matched (1 tool call)",
      trajectory: { order: "any", steps: [{ step: 1, tool: "search_web", member: null, outcome: "ok", verdict: "matched", expectation: 0 }], failures: [] },
    });
    assert.equal(result.passed, true);
  });

  test("both checks: a passing judge with failing reliability fails the case (41)", async () => {
    const output: RunOutput = { content: "42", status: "completed", tools: [{ toolName: "search_web" }] };
    const result = await runCase(makeCase({ expectedToolCalls: ["multiply"], agent: new StubAgent({ output }) }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.judgePassed, true);
    assert.equal(result.reliabilityPassed, false);
    assert.deepEqual(result.reliability?.missingToolCalls, ["multiply"]);
    assert.deepEqual(result.reliability?.additionalToolCalls, ["search_web"]);
    assert.equal(result.error, null);
    assert.equal(result.passed, false);
  });

  test("a judge model that throws, or answers malformed, gives 'judge: returned no result' (42, G6)", async () => {
    const throwing = await runCase(makeCase(), { judgeModel: new ScriptedJudge({ error: new Error("503 upstream") }) });
    assert.equal(throwing.error, "judge: returned no result");
    assert.equal(throwing.judgePassed, null);
    const malformed = await runCase(makeCase(), { judgeModel: new ScriptedJudge({ answer: { verdict: "yes" } }) });
    assert.equal(malformed.error, "judge: returned no result");
    const outOfRange = await runCase(makeCase({ judgeMode: "numeric" }), { judgeModel: new ScriptedJudge({ answer: { score: 11, reason: "x" } }) });
    assert.equal(outOfRange.error, "judge: returned no result");
    const prose = await runCase(makeCase(), { judgeModel: new ScriptedJudge({ answer: "I think it passes." }) });
    assert.equal(prose.error, "judge: returned no result");
  });

  test("a judge answer given as JSON text is accepted (G6)", async () => {
    const result = await runCase(makeCase(), { judgeModel: new ScriptedJudge({ answer: '```json\n{"passed": true, "reason": "names Paris"}\n```' }) });
    assert.equal(result.error, null);
    assert.equal(result.judgePassed, true);
    assert.equal(result.judgeReason, "names Paris");
  });

  test("a reliability error becomes a case error; the other checks still run (43, G1)", async () => {
    const output: RunOutput = {
      content: "Paris",
      status: "completed",
      tools: [{ toolName: "search_web" }],
      get messages(): readonly RunMessage[] {
        throw new TypeError("transcript unavailable");
      },
    };
    const scorer = new StubScorer();
    const result = await runCase(makeCase({ agent: new StubAgent({ output }), expectedToolCalls: ["search_web"], scorer }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.error, "reliability: TypeError: transcript unavailable");
    assert.equal(result.reliabilityPassed, null);
    assert.equal(result.judgePassed, true);
    assert.equal(scorer.calls.length, 1);
    assert.equal(result.passed, false);
  });

  test("the trajectory check: its bounds alone turn reliability on; a predicate that throws is the check's error, naming it", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web", toolArgs: { q: "capital of France" } }, { toolName: "delete_user", toolArgs: { id: 1 } }] };
    const forbidden = await runCase(makeCase({ criteria: null, forbiddenToolCalls: ["delete_user"], agent: new StubAgent({ output }) }));
    assert.equal(forbidden.reliabilityPassed, false);
    assert.equal(forbidden.reliability?.reason, "forbidden delete_user called at step 2: delete_user(id=1)");
    assert.equal(forbidden.errorKind, null, "a failed check, not an error");
    const throwing = await runCase(
      makeCase({ criteria: null, expectedToolCalls: [{ name: "search_web", args: { q: (v: unknown) => (v as { no: { such: string } }).no.such } }], agent: new StubAgent({ output }) }),
    );
    assert.match(throwing.error ?? "", /^reliability: TrajectoryPredicateError: the predicate of expectedToolCalls\[0\]\.args\.q threw TypeError: /);
    assert.equal(throwing.errorKind, "check");
    assert.equal(throwing.reliabilityPassed, null);
    assert.equal(throwing.passed, false);
  });

  test("judge model resolution: the case's, then the runner's, then none (47, G3)", async () => {
    const caseJudge = new ScriptedJudge({ id: "case" });
    const suiteJudge = new ScriptedJudge({ id: "suite" });
    const own = makeCase({ name: "own", judgeModel: caseJudge });
    const inherits = makeCase({ name: "inherits" });
    const suite = await runCases([own, inherits], { judgeModel: suiteJudge });
    assert.equal(caseJudge.requests.length, 1);
    assert.equal(suiteJudge.requests.length, 1);
    assert.match(caseJudge.requests[0]!.system, /Mentions Paris/);
    assert.equal(suite.status, "PASS");

    const none = await runCases([makeCase({ name: "none" })]);
    assert.equal(none.results[0]?.error, NO_JUDGE);
    assert.equal(none.results[0]?.judgePassed, null);
    // A case-level model needs no runner model.
    const caseOnly = await runCases([makeCase({ name: "case_only", judgeModel: caseJudge })]);
    assert.equal(caseOnly.results[0]?.passed, true);
    assert.equal(caseJudge.requests.length, 2);
  });

  test("a missing judge model does not stop the other checks (G1)", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web" }] };
    const result = await runCase(makeCase({ agent: new StubAgent({ output }), expectedToolCalls: ["search_web"] }));
    assert.equal(result.error, NO_JUDGE);
    assert.equal(result.reliabilityPassed, true);
  });

  test("allowAdditionalToolCalls is honoured: strict fails extras, lenient lists them (48)", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web" }, { toolName: "get_weather" }] };
    const strict = await runCase(makeCase({ criteria: null, expectedToolCalls: ["search_web"], allowAdditionalToolCalls: false, agent: new StubAgent({ output }) }));
    assert.equal(strict.reliabilityPassed, false);
    assert.deepEqual(strict.reliability?.passedToolCalls, ["search_web"]);
    assert.deepEqual(strict.reliability?.failedToolCalls, ["get_weather"]);
    assert.equal(strict.passed, false);
    const lenient = await runCase(makeCase({ criteria: null, expectedToolCalls: ["search_web"], agent: new StubAgent({ output }) }));
    assert.equal(lenient.reliabilityPassed, true);
    assert.deepEqual(lenient.reliability?.additionalToolCalls, ["get_weather"]);
    assert.deepEqual(lenient.reliability?.failedToolCalls, []);
    assert.equal(lenient.passed, true);
  });

  test("reliability grades executions: an errored expected call is missing, annotated (48, H9)", async () => {
    const output: RunOutput = { content: "Paris", status: "completed", tools: [{ toolName: "search_web", toolCallError: "timeout" }] };
    const result = await runCase(makeCase({ criteria: null, expectedToolCalls: ["search_web"], agent: new StubAgent({ output }) }));
    assert.equal(result.reliabilityPassed, false);
    assert.deepEqual(result.reliability?.missingToolCalls, ["search_web (requested but refused/errored \u2014 execution matching, new in 2.8.0)"]);
    assert.deepEqual(result.toolsCalled, ["search_web"]);
  });

  test("a team output: tools flatten one level, reliability recurses every level (49, E7, H4, H12)", async () => {
    const output: RunOutput = {
      content: "42",
      status: "completed",
      tools: [{ toolName: "delegate_task_to_member" }],
      memberResponses: [
        {
          content: "6 x 7 = 42",
          tools: [{ toolName: "multiply" }],
          memberResponses: [{ content: "checked", tools: [{ toolName: "verify" }] }],
        },
      ],
    };
    const result = await runCase(makeCase({ agent: null, team: new StubAgent({ id: "math-team", output }), criteria: null, expectedToolCalls: ["multiply", "verify"] }));
    assert.deepEqual(result.toolsCalled, ["delegate_task_to_member", "multiply"]);
    assert.equal(result.reliabilityPassed, true);
    assert.deepEqual(result.reliability?.passedToolCalls, ["multiply", "verify"]);
    assert.deepEqual(result.reliability?.additionalToolCalls, ["delegate_task_to_member"]);
    assert.equal(result.teamId, "math-team");
    assert.equal(result.passed, true);
  });

  test("strict mode on a team counts the leader's delegation as unexpected (H11)", async () => {
    const output: RunOutput = { content: "42", status: "completed", tools: [{ toolName: "delegate_task_to_member" }], memberResponses: [{ tools: [{ toolName: "multiply" }] }] };
    const result = await runCase(makeCase({ agent: null, team: new StubAgent({ output }), criteria: null, expectedToolCalls: ["multiply"], allowAdditionalToolCalls: false }));
    assert.equal(result.reliabilityPassed, false);
    assert.deepEqual(result.reliability?.failedToolCalls, ["delegate_task_to_member"]);
  });
});

describe("evidence (C1, E6-E8)", () => {
  test("evidence fields, the session id, and no response key in the JSON (60)", async () => {
    const output: RunOutput = { content: "Paris is the capital.", status: "completed", tools: [{ toolName: "search_web" }, { toolName: "summarize" }, { toolName: null }] };
    const agent = new StubAgent({ output });
    const result = await runCase(makeCase({ name: "capital", agent }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.response, output);
    assert.equal(result.output, "Paris is the capital.");
    assert.deepEqual(result.toolsCalled, ["search_web", "summarize", "?"]);
    assert.match(result.sessionId, /^eval-capital-[0-9a-f]{8}$/);
    assert.deepEqual(agent.sessionIds, [result.sessionId]);
    assert.deepEqual(agent.inputs, [INPUT]);
    const json = result.toJSON();
    assert.equal("response" in json, false);
    assert.equal(JSON.stringify(json).includes("response"), false);
  });

  test("every run gets a new session id (C1)", async () => {
    const agent = new StubAgent();
    const c = makeCase({ name: "capital", agent });
    await runCase(c, { judgeModel: new ScriptedJudge() });
    await runCase(c, { judgeModel: new ScriptedJudge() });
    assert.equal(agent.sessionIds.length, 2);
    assert.notEqual(agent.sessionIds[0], agent.sessionIds[1]);
  });

  test("structured content is serialised as JSON, not a repr (61)", async () => {
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent: agentWithStatus("completed", { answer: 42 }) }), { judgeModel: judge });
    assert.equal(result.output, '{"answer": 42}');
    assert.match(judge.requests[0]!.user, /\n\{"answer": 42\}\n/);
  });

  test("falsy content is preserved; missing content is an empty string (62)", async () => {
    const zero = await runCase(makeCase({ agent: agentWithStatus("completed", 0) }), { judgeModel: new ScriptedJudge() });
    assert.equal(zero.output, "0");
    const no = await runCase(makeCase({ agent: agentWithStatus("completed", false) }), { judgeModel: new ScriptedJudge() });
    assert.equal(no.output, "false");
    const missing = await runCase(makeCase({ agent: new StubAgent({ output: { status: "completed" } }) }), { judgeModel: new ScriptedJudge() });
    assert.equal(missing.output, "");
  });

  test("non-serialisable content falls back to a repr-like string; the case still runs (63)", async () => {
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ agent: agentWithStatus("completed", { total: 10n }) }), { judgeModel: judge });
    assert.equal(result.output, "{ total: 10n }");
    assert.equal(judge.requests.length, 1);
    assert.equal(result.judgePassed, true);
    assert.equal(result.passed, true);
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const cycle = await runCase(makeCase({ agent: agentWithStatus("completed", cyclic) }), { judgeModel: new ScriptedJudge() });
    assert.match(cycle.output ?? "", /^<ref \*1> \{ name: 'loop', self: \[Circular \*1\] \}$/);
    assert.equal(cycle.passed, true);
  });
});

describe("scorer seam (I)", () => {
  test("a scorer-only case passes; no other check runs; the scorer gets (output, expected) (79)", async () => {
    const output: RunOutput = { content: "42", status: "completed" };
    const scorer = new StubScorer();
    const judge = new ScriptedJudge();
    const result = await runCase(makeCase({ criteria: null, scorer, expected: 42, agent: new StubAgent({ output }) }), { judgeModel: judge });
    assert.equal(judge.requests.length, 0);
    assert.equal(result.judgePassed, null);
    assert.equal(result.reliabilityPassed, null);
    assert.equal(scorer.calls.length, 1);
    assert.equal(scorer.calls[0]?.run, output);
    assert.equal(scorer.calls[0]?.expected, 42);
    assert.equal(result.passed, true);
    const json = result.toJSON();
    assert.equal(json.score_value, 1);
    assert.equal(json.score_passed, true);
    assert.equal(json.score_reason, "stub ok");
  });

  test("the scorer runs after the judge and gets the whole team output (I1)", async () => {
    const order: string[] = [];
    const output: RunOutput = { content: "42", status: "completed", memberResponses: [{ content: "member" }] };
    const judge = new ScriptedJudge({ answer: () => (order.push("judge"), { passed: true, reason: "ok" }) });
    const scorer = new StubScorer(() => (order.push("scorer"), { value: 0.9, passed: true }));
    const result = await runCase(makeCase({ agent: null, team: new StubAgent({ output }), scorer }), { judgeModel: judge });
    assert.deepEqual(order, ["judge", "scorer"]);
    assert.equal(scorer.calls[0]?.run, output);
    assert.equal(result.score?.value, 0.9);
    assert.equal(result.toJSON().score_reason, null);
  });

  test("a failing score fails the case without an error (81)", async () => {
    const result = await runCase(makeCase({ criteria: null, scorer: new StubScorer({ value: 0.2, passed: false, reason: "too far" }) }));
    assert.equal(result.error, null);
    assert.equal(result.score?.passed, false);
    assert.equal(result.score?.value, 0.2);
    assert.equal(result.passed, false);
  });

  test("a scorer error becomes a case error and leaves no score (82)", async () => {
    const scorer = new StubScorer(() => {
      throw new TypeError("cannot parse answer");
    });
    const result = await runCase(makeCase({ criteria: null, scorer }));
    assert.equal(result.error, "scorer: TypeError: cannot parse answer");
    assert.equal(result.score, null);
    assert.equal(result.passed, false);
  });

  test("a score outside [0, 1] is a RangeError (I3)", async () => {
    const result = await runCase(makeCase({ criteria: null, scorer: new StubScorer({ value: 1.4, passed: true }) }));
    assert.equal(result.error, "scorer: RangeError: Score.value must be in [0, 1], got 1.4");
    assert.equal(result.score, null);
    const negative = await runCase(makeCase({ criteria: null, scorer: new StubScorer({ value: -0.1, passed: false }) }));
    assert.equal(negative.error, "scorer: RangeError: Score.value must be in [0, 1], got -0.1");
    // The bounds are inclusive.
    const zero = await runCase(makeCase({ criteria: null, scorer: new StubScorer({ value: 0, passed: true }) }));
    assert.equal(zero.error, null);
    assert.equal(zero.passed, true);
  });

  test("a scorer returning a non-object is a scorer error", async () => {
    const scorer = { score: async (): Promise<ScoreData> => null as unknown as ScoreData };
    const result = await runCase(makeCase({ criteria: null, scorer }));
    assert.equal(result.error, "scorer: TypeError: scorer returned null, expected a Score {value, passed, reason?}");
  });

  test("the scorer runs inside the timeout; an earlier judge verdict is kept (83, D4, G8)", async () => {
    const scorer = new StubScorer({ value: 1, passed: true }, { delay: STALL_MS });
    const result = await runCase(makeCase({ scorer, timeoutSeconds: TIMEOUT_S }), { judgeModel: new ScriptedJudge() });
    assert.equal(scorer.calls.length, 1);
    assert.equal(result.timedOut, true);
    assert.equal(result.error, `timeout: exceeded ${TIMEOUT_S}s`);
    assert.equal(result.score, null);
    assert.equal(result.judgePassed, true);
    assert.equal(result.passed, false);
  });

  test("a paused run never reaches the scorer, and writes no scorer error (83, F2)", async () => {
    const scorer = new StubScorer();
    const result = await runCase(makeCase({ criteria: null, scorer, agent: agentWithStatus("paused") }));
    assert.equal(scorer.calls.length, 0);
    assert.equal(result.error, "agent: run paused awaiting user input");
    assert.equal(result.error?.includes("scorer:"), false);
    assert.equal(result.score, null);
  });

  test("errors join in check order: judge, reliability, scorer (L4)", async () => {
    const output: RunOutput = {
      content: "Paris",
      status: "completed",
      get messages(): readonly RunMessage[] {
        throw new Error("no transcript");
      },
    };
    const scorer = new StubScorer(() => {
      throw new Error("scorer bug");
    });
    const result = await runCase(makeCase({ agent: new StubAgent({ output }), expectedToolCalls: ["search_web"], scorer }), {
      judgeModel: new ScriptedJudge({ error: new Error("down") }),
    });
    assert.equal(result.error, "judge: returned no result; reliability: Error: no transcript; scorer: Error: scorer bug");
  });

  test("a Score instance returned by a scorer is kept as is", async () => {
    const score = new Score({ value: 0.5, passed: true, reason: "half", detail: { raw: 5 } });
    const result = await runCase(makeCase({ criteria: null, scorer: { score: () => score } }));
    assert.equal(result.score, score);
    assert.deepEqual(result.score?.detail, { raw: 5 });
    assert.equal(result.passed, true);
    // detail stays off the JSON report (K3).
    assert.equal(JSON.stringify(result.toJSON()).includes("raw"), false);
  });

  test("a result survives toData/fromData unchanged (plain data)", async () => {
    const result = await runCase(makeCase({ scorer: new StubScorer() }), { judgeModel: new ScriptedJudge() });
    const copy = CaseResult.fromData(result.toData());
    assert.deepEqual(copy.toJSON(), result.toJSON());
  });
});
