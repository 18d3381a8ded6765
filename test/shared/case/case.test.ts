/**
 * Case construction and validation (shared/case/case.ts): Agno's test_suite.py tests 1-11, 80 and 86
 * (spec A, C3), ported to evalfleet's options object. Tests 3 and 11 need a run; they go through
 * runCase. Test 87 (CaseResult) is in result.test.ts.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, CaseValidationError, ErrorCode, JudgeMode, runCase, type CaseOptions, type JudgeMode as JudgeModeT } from "../../../index.ts";
import { ScriptedJudge, StubAgent, StubScorer } from "../../support/doubles.ts";

/** Agno's `_make_case` defaults, with any option overridden. */
function makeCase(overrides: Partial<CaseOptions> = {}): Case {
  return new Case({
    name: "sample_case",
    input: "What is the capital of France?",
    agent: new StubAgent(),
    criteria: "Mentions Paris.",
    ...overrides,
  });
}

/** Asserts that `build` throws a CaseValidationError with exactly `message`. */
function assertRejects(build: () => unknown, message: string): void {
  assert.throws(build, (err: unknown) => {
    assert.ok(err instanceof CaseValidationError, `expected a CaseValidationError, got ${String(err)}`);
    assert.equal(err.message, message);
    assert.equal(err.code, ErrorCode.CaseInvalid);
    return true;
  });
}

const NO_CHECKS = "case 'sample_case' has no checks: set criteria, expectedToolCalls, and/or scorer";

describe("Case: the no-checks guard (A3)", () => {
  test("a case without checks is rejected (1)", () => {
    assertRejects(() => makeCase({ criteria: null }), NO_CHECKS);
    assertRejects(() => new Case({ name: "sample_case", input: "hi", agent: new StubAgent() }), NO_CHECKS);
  });

  test("falsy checks are not checks: criteria '' or expectedToolCalls [] alone (2)", () => {
    assertRejects(() => makeCase({ criteria: "" }), NO_CHECKS);
    assertRejects(() => makeCase({ criteria: null, expectedToolCalls: [] }), NO_CHECKS);
    assertRejects(() => makeCase({ criteria: "", expectedToolCalls: [] }), NO_CHECKS);
  });

  test("a null scorer is no check either (80)", () => {
    assertRejects(() => makeCase({ criteria: null, scorer: null }), NO_CHECKS);
  });

  test("criteria-only, tools-only and scorer-only cases construct (4, 79)", () => {
    assert.equal(makeCase().criteria, "Mentions Paris.");
    const tools = makeCase({ criteria: null, expectedToolCalls: ["search_web"] });
    assert.deepEqual(tools.expectedToolCalls, ["search_web"]);
    assert.equal(tools.criteria, null);
    const scorer = new StubScorer();
    const scored = makeCase({ criteria: null, scorer });
    assert.equal(scored.scorer, scorer);
  });

  test("an empty expectedToolCalls next to criteria constructs but runs no reliability check (3)", async () => {
    const c = makeCase({ expectedToolCalls: [] });
    assert.deepEqual(c.expectedToolCalls, []);
    const judge = new ScriptedJudge();
    const result = await runCase(c, { judgeModel: judge });
    assert.equal(judge.requests.length, 1);
    assert.equal(result.judgePassed, true);
    assert.equal(result.reliabilityPassed, null);
    assert.equal(result.reliability, null);
    assert.equal(result.error, null);
    assert.equal(result.passed, true);
  });

  test("criteria '' next to a real check is allowed and turns the judge off (A6)", async () => {
    const judge = new ScriptedJudge();
    const c = makeCase({ criteria: "", scorer: new StubScorer() });
    const result = await runCase(c, { judgeModel: judge });
    assert.equal(judge.requests.length, 0);
    assert.equal(result.judgePassed, null);
    assert.equal(result.score?.passed, true);
    assert.equal(result.passed, true);
  });
});

describe("Case: judgeMode and judgeThreshold (A4, A5)", () => {
  test("JudgeMode is the binary/numeric enum and binary is the default (5)", () => {
    assert.deepEqual([JudgeMode.BINARY, JudgeMode.NUMERIC], ["binary", "numeric"]);
    assert.deepEqual(Object.keys(JudgeMode), ["BINARY", "NUMERIC"]);
    assert.equal(makeCase().judgeMode, JudgeMode.BINARY);
  });

  test("the enum member and the equal string both construct (6)", () => {
    assert.equal(makeCase({ judgeMode: JudgeMode.NUMERIC }).judgeMode, "numeric");
    assert.equal(makeCase({ judgeMode: "numeric" }).judgeMode, JudgeMode.NUMERIC);
    assert.equal(makeCase({ judgeMode: "binary" }).judgeMode, JudgeMode.BINARY);
  });

  test("an invalid judgeMode is rejected at construction (7)", () => {
    assertRejects(() => makeCase({ judgeMode: "Numeric" as JudgeModeT }), "case 'sample_case': judgeMode must be a JudgeMode, got 'Numeric'");
    assertRejects(() => makeCase({ judgeMode: "" as JudgeModeT }), "case 'sample_case': judgeMode must be a JudgeMode, got ''");
  });

  test("a numeric threshold outside 1-10 is rejected; binary never checks it (8)", () => {
    assertRejects(() => makeCase({ judgeMode: "numeric", judgeThreshold: 0 }), "case 'sample_case': judgeThreshold must be 1-10, got 0");
    assertRejects(() => makeCase({ judgeMode: "numeric", judgeThreshold: 11 }), "case 'sample_case': judgeThreshold must be 1-10, got 11");
    // The bounds are inclusive.
    assert.equal(makeCase({ judgeMode: "numeric", judgeThreshold: 1 }).judgeThreshold, 1);
    assert.equal(makeCase({ judgeMode: "numeric", judgeThreshold: 10 }).judgeThreshold, 10);
    assert.equal(makeCase({ judgeMode: "binary", judgeThreshold: 99 }).judgeThreshold, 99);
  });

  test("the no-checks guard runs before the judgeMode check (A-order)", () => {
    assertRejects(() => makeCase({ criteria: null, judgeMode: "Numeric" as JudgeModeT }), NO_CHECKS);
  });
});

describe("Case: agent or team (A1, A2, C3)", () => {
  test("exactly one of agent or team is required (9)", () => {
    assertRejects(() => makeCase({ agent: null }), "case 'sample_case': provide one of 'agent' or 'team'");
    assertRejects(() => makeCase({ agent: undefined }), "case 'sample_case': provide one of 'agent' or 'team'");
    assertRejects(() => makeCase({ team: new StubAgent({ id: "research-team" }) }), "case 'sample_case': provide only one of 'agent' or 'team'");
    // The component check comes first, even for a case that also has no checks.
    assertRejects(() => makeCase({ agent: null, criteria: null }), "case 'sample_case': provide one of 'agent' or 'team'");
  });

  test("agent and team cases both construct, labelled by the field that was set (10)", () => {
    const agent = new StubAgent({ id: "stub-agent" });
    const team = new StubAgent({ id: "research-team" });
    const a = makeCase({ agent });
    const t = makeCase({ agent: null, team });
    assert.equal(a.agent, agent);
    assert.equal(a.team, null);
    assert.equal(a.label, "agent");
    assert.equal(a.component, agent);
    assert.equal(t.team, team);
    assert.equal(t.agent, null);
    assert.equal(t.label, "team");
    assert.equal(t.component, team);
  });

  test("a team case populates teamId, not agentId (11)", async () => {
    const team = new StubAgent({ id: "research-team" });
    const result = await runCase(makeCase({ agent: null, team }), { judgeModel: new ScriptedJudge() });
    assert.equal(result.teamId, "research-team");
    assert.equal(result.agentId, null);
    assert.equal(result.passed, true);
    const json = result.toJSON();
    assert.equal(json.team_id, "research-team");
    assert.equal(json.agent_id, null);
  });

  test("a falsy component id falls back to the case name (C3)", async () => {
    const agentCase = makeCase({ agent: new StubAgent({ id: "" }) });
    assert.equal(agentCase.componentId, "sample_case");
    const result = await runCase(agentCase, { judgeModel: new ScriptedJudge() });
    assert.equal(result.agentId, "sample_case");
    assert.equal(result.teamId, null);
    const teamCase = makeCase({ agent: null, team: new StubAgent({ id: null }) });
    assert.equal(teamCase.componentId, "sample_case");
  });
});

describe("Case: stored fields and defaults (A6, A7, 86)", () => {
  test("defaults follow Agno (A7)", () => {
    const c = makeCase();
    assert.deepEqual(c.tags, []);
    assert.equal(c.timeoutSeconds, null);
    assert.equal(c.resolveTimeout(120), 120);
    assert.equal(c.judgeModel, null);
    assert.equal(c.judgeMode, "binary");
    assert.equal(c.judgeThreshold, 7);
    assert.equal(c.expectedToolCalls, null);
    assert.equal(c.allowAdditionalToolCalls, true);
    assert.equal(c.scorer, null);
    assert.equal(c.expected, undefined);
    assert.equal(c.setup, null);
    assert.equal(c.teardown, null);
  });

  test("every option binds to its own field (86, adapted: options object instead of positional args)", () => {
    const agent = new StubAgent();
    const judge = new ScriptedJudge();
    const scorer = new StubScorer();
    const setup = (): string => "ctx";
    const teardown = (): void => undefined;
    const c = new Case({
      name: "bound",
      input: "What is 6 x 7?",
      agent,
      tags: ["smoke", "math"],
      timeoutSeconds: 30,
      criteria: "Says 42.",
      judgeModel: judge,
      judgeMode: "numeric",
      judgeThreshold: 8,
      expectedToolCalls: ["multiply"],
      allowAdditionalToolCalls: false,
      scorer,
      expected: 42,
      setup,
      teardown,
    });
    assert.equal(c.name, "bound");
    assert.equal(c.input, "What is 6 x 7?");
    assert.equal(c.agent, agent);
    assert.equal(c.team, null);
    assert.deepEqual(c.tags, ["smoke", "math"]);
    assert.equal(c.timeoutSeconds, 30);
    assert.equal(c.criteria, "Says 42.");
    assert.equal(c.judgeModel, judge);
    assert.equal(c.judgeMode, "numeric");
    assert.equal(c.judgeThreshold, 8);
    assert.deepEqual(c.expectedToolCalls, ["multiply"]);
    assert.equal(c.allowAdditionalToolCalls, false);
    assert.equal(c.scorer, scorer);
    assert.equal(c.expected, 42);
    assert.equal(c.setup, setup);
    assert.equal(c.teardown, teardown);
  });

  test("scorer and expected stay unset when only the older options are given (86)", () => {
    const c = makeCase({ tags: ["smoke"], timeoutSeconds: 5, setup: () => 1, teardown: () => undefined });
    assert.equal(c.scorer, null);
    assert.equal(c.expected, undefined);
  });

  test("a case is frozen, and so are its tags and tool list", () => {
    const tags = ["smoke"];
    const c = makeCase({ tags, expectedToolCalls: ["search_web"] });
    assert.ok(Object.isFrozen(c));
    assert.throws(() => {
      (c as unknown as { name: string }).name = "renamed";
    }, TypeError);
    assert.throws(() => (c.tags as string[]).push("more"), TypeError);
    assert.throws(() => (c.expectedToolCalls as string[]).push("more"), TypeError);
    // The caller's array is copied, not captured.
    tags.push("later");
    assert.deepEqual(c.tags, ["smoke"]);
  });

  test("nothing else is validated: empty name, duplicate names, any timeout sign (A6)", () => {
    assert.equal(makeCase({ name: "" }).name, "");
    const a = makeCase({ name: "dup" });
    const b = makeCase({ name: "dup" });
    assert.equal(a.name, b.name);
    assert.equal(makeCase({ timeoutSeconds: -1 }).timeoutSeconds, -1);
  });

  test("timeoutSeconds 0 counts and is not replaced by the default (D2)", () => {
    const c = makeCase({ timeoutSeconds: 0 });
    assert.equal(c.timeoutSeconds, 0);
    assert.equal(c.resolveTimeout(120), 0);
    assert.equal(makeCase({ timeoutSeconds: 3 }).resolveTimeout(120), 3);
  });
});


describe("setup and teardown bounds", () => {
  test("null by default; the case's own win over the runner's defaults, even 0", () => {
    const c = makeCase({});
    assert.deepEqual([c.setupTimeoutSeconds, c.teardownTimeoutSeconds], [null, null]);
    assert.deepEqual(c.resolveHookTimeouts({ setup: 60, teardown: 60 }), { setup: 60, teardown: 60 });
    assert.deepEqual(makeCase({ setupTimeoutSeconds: 0, teardownTimeoutSeconds: 5 }).resolveHookTimeouts({ setup: 60, teardown: 60 }), { setup: 0, teardown: 5 });
  });

  test("a negative or non-number bound is refused naming the field", () => {
    assert.throws(() => makeCase({ setupTimeoutSeconds: -1 }), /setupTimeoutSeconds/);
    assert.throws(() => makeCase({ teardownTimeoutSeconds: "5" as unknown as number }), /teardownTimeoutSeconds/);
  });
});

describe("Case: trajectory options", () => {
  test("matchers, order, forbidden calls and bounds are kept; forbidden calls and bounds count as checks", () => {
    const matcher = { name: "get_weather", args: { city: /^lon/i } };
    const c = makeCase({ criteria: null, expectedToolCalls: ["search", matcher], toolCallOrder: "in_order", forbiddenToolCalls: ["delete_user"], maxToolCalls: 4, toolCallsMustSucceed: true });
    assert.deepEqual(c.expectedToolCalls, ["search", matcher]);
    assert.ok(Object.isFrozen(c.expectedToolCalls));
    assert.equal(c.toolCallOrder, "in_order");
    assert.deepEqual(c.forbiddenToolCalls, ["delete_user"]);
    assert.equal(c.maxToolCalls, 4);
    assert.equal(c.toolCallsMustSucceed, true);
    const plain = makeCase();
    assert.deepEqual([plain.toolCallOrder, plain.forbiddenToolCalls, plain.maxToolCalls, plain.toolCallsMustSucceed, plain.allowAdditionalToolCalls], ["any", null, null, false, true]);
    for (const only of [{ forbiddenToolCalls: ["rm"] }, { maxToolCalls: 0 }, { toolCallsMustSucceed: true }]) assert.doesNotThrow(() => makeCase({ criteria: null, ...only }), JSON.stringify(only));
    assertRejects(() => makeCase({ criteria: null, forbiddenToolCalls: [] }), NO_CHECKS);
    assertRejects(() => makeCase({ criteria: null, toolCallsMustSucceed: false }), NO_CHECKS);
    assert.equal(makeCase({ expectedToolCalls: ["a"], toolCallOrder: "exact" }).allowAdditionalToolCalls, false, "exact allows no other call");
  });

  test("a malformed matcher is a CaseValidationError naming the case, the field's path and the value", () => {
    assertRejects(() => makeCase({ expectedToolCalls: [{ name: "get_weather", args: { city: { $regex: "(" } } }] }), "case 'sample_case': expectedToolCalls.0.args.city.$regex is not a valid regex (Unterminated group), got '('");
    assertRejects(() => makeCase({ expectedToolCalls: ["ok", { name: "x", times: -1 }] }), "case 'sample_case': expectedToolCalls.1.times must be a whole number >= 0, got -1");
    assertRejects(() => makeCase({ expectedToolCalls: [{ name: "x", arg: { a: 1 } } as never] }), `case 'sample_case': expectedToolCalls.0 has an unknown key 'arg' (a matcher has: name, args, times, result), got {"name":"x","arg":{"a":1}}`);
    assertRejects(() => makeCase({ forbiddenToolCalls: [{ name: "rm", times: 1 }] }), "case 'sample_case': forbiddenToolCalls.0.times has no meaning for a forbidden call (any matching call fails the check), got 1");
    assertRejects(() => makeCase({ toolCallOrder: "sorted" as never, expectedToolCalls: ["a"] }), "case 'sample_case': toolCallOrder must be one of 'any', 'in_order', 'exact', got 'sorted'");
    assertRejects(() => makeCase({ maxToolCalls: 2.5 }), "case 'sample_case': maxToolCalls must be a whole number >= 0, got 2.5");
    assertRejects(() => makeCase({ maxToolCalls: -1 }), "case 'sample_case': maxToolCalls must be a whole number >= 0, got -1");
    assert.throws(() => makeCase({ expectedToolCalls: [{ name: "x", args: { d: new Date(0) } }] }), (err: unknown) => err instanceof CaseValidationError && (err.details as { field?: string }).field === "expectedToolCalls.0.args.d");
  });

  test("an order needs expected calls; exact contradicts allowAdditionalToolCalls true", () => {
    assertRejects(() => makeCase({ toolCallOrder: "in_order" }), "case 'sample_case': toolCallOrder 'in_order' needs expectedToolCalls (the calls to put in order)");
    assertRejects(() => makeCase({ toolCallOrder: "exact", expectedToolCalls: ["a"], allowAdditionalToolCalls: true }), "case 'sample_case': allowAdditionalToolCalls true contradicts toolCallOrder 'exact' (exactly these calls and nothing else)");
    assert.doesNotThrow(() => makeCase({ toolCallOrder: "any" }));
  });
});
