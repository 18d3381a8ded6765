// The data-driven checks (issue 8, worker/runtime/checks/expectations.ts): expected_agent_tools and
// expected_knowledge_sources alone (pure functions), and every data-driven check through a case's
// lifecycle (runCase), the judge method with a scripted judge model. expected_output's scoring
// methods alone: expected-output.test.ts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Case, CaseValidationError, checkAgentTools, checkKnowledgeSources, runCase, suiteFingerprint, type RunOutput } from "../../../../index.ts";
import { NO_OUTPUT_JUDGE_ERROR, factualAgreementCriteria } from "../../../../worker/runtime/checks/expectations.ts";
import { ScriptedJudge, StubAgent } from "../../../support/doubles.ts";

describe("expected_agent_tools and expected_knowledge_sources (pure)", () => {
  const team: RunOutput = {
    content: "42",
    tools: [{ toolName: "delegate_task_to_member" }, { toolName: "lookup" }],
    memberResponses: [
      { agentId: "calculator", tools: [{ toolName: "multiply" }, { toolName: "divide", toolCallError: "by zero" }] },
      { agentId: "research", tools: [], memberResponses: [{ agentId: "web", tools: [{ toolName: "search" }] }], knowledgeSources: ["kb-web"] },
    ],
    knowledgeSources: ["kb-pricing"],
  };

  test("a member's clean call passes, plain or qualified by member id, at any depth", () => {
    assert.deepEqual(checkAgentTools(team, ["multiply", "calculator/multiply", "web/search"]), { passed: true, reason: "members ran: calculator/multiply, web/search" });
  });

  test("the leader's own calls, errored calls and calls by another member do not count; the reason says what members ran", () => {
    const r = checkAgentTools(team, ["lookup", "divide", "research/multiply"]);
    assert.equal(r.passed, false);
    assert.equal(r.reason, "missing member tool calls: lookup, divide, research/multiply (members ran: calculator/multiply, web/search)");
    assert.deepEqual(checkAgentTools({ content: "x" }, ["multiply"]), {
      passed: false,
      reason: "missing member tool calls: multiply (the run has no team member outputs (memberResponses): is it a team?)",
    });
  });

  test("knowledge sources: the run's and its members' count; a missing one fails naming what was retrieved", () => {
    assert.deepEqual(checkKnowledgeSources(team, ["kb-pricing", "kb-web"]), { passed: true, reason: "retrieved: kb-pricing, kb-web" });
    assert.deepEqual(checkKnowledgeSources(team, ["kb-refunds"]), { passed: false, reason: "missing knowledge sources: kb-refunds (retrieved: kb-pricing, kb-web)" });
    assert.deepEqual(checkKnowledgeSources({ content: "x" }, ["kb"]), {
      passed: false,
      reason: "missing knowledge sources: kb (the run reported no knowledge sources (RunOutput.knowledgeSources))",
    });
  });
});

describe("data-driven checks through a case's lifecycle", () => {
  const agent = (output: RunOutput) => new StubAgent({ output: { status: "completed", ...output }, promise: true });

  test("every check passing makes the case pass; the verdicts are on the result and in its JSON", async () => {
    const c = new Case({
      name: "all_checks",
      agent: agent({ content: "The capital is Paris.", knowledgeSources: ["kb-geo"], memberResponses: [{ agentId: "geo", tools: [{ toolName: "atlas" }] }] }),
      input: [
        { role: "user", content: "Hi" },
        { role: "user", content: "Capital of France?" },
      ],
      expectedOutput: "paris",
      outputScoring: { method: "contains", ignoreCase: true },
      expectedAgentTools: ["geo/atlas"],
      expectedKnowledgeSources: ["kb-geo"],
    });
    const r = await runCase(c);
    assert.equal(r.passed, true, r.error ?? "");
    assert.deepEqual(r.toJSON().expectations, {
      expected_output: { method: "contains", passed: true, reason: 'the answer contains "paris"' },
      expected_agent_tools: { passed: true, reason: "members ran: geo/atlas" },
      expected_knowledge_sources: { passed: true, reason: "retrieved: kb-geo" },
    });
    assert.equal(r.error, null);
  });

  test("one failing check fails the case without an error: a verdict, with its reason", async () => {
    const c = new Case({ name: "wrong", agent: agent({ content: "Lyon" }), input: "Capital?", expectedOutput: "Paris", expectedToolCalls: [] });
    const r = await runCase(c);
    assert.equal(r.passed, false);
    assert.equal(r.error, null);
    assert.deepEqual(r.expectations, { expectedOutput: { method: "exact", passed: false, reason: 'the answer "Lyon" is not exactly the expected "Paris"' } });
  });

  test("the data-driven checks run after the judge, reliability and scorer, and all verdicts count", async () => {
    const c = new Case({
      name: "mixed",
      agent: agent({ content: "42", tools: [{ toolName: "multiply" }] }),
      input: "6 x 7?",
      criteria: "Says 42",
      judgeModel: new ScriptedJudge(),
      expectedToolCalls: ["multiply"],
      expectedOutput: 42,
      outputScoring: "numeric",
    });
    const r = await runCase(c);
    assert.equal(r.judgePassed, true);
    assert.equal(r.reliabilityPassed, true);
    assert.equal(r.expectations?.expectedOutput?.passed, true);
    assert.equal(r.passed, true);
  });

  test("judge scoring: the judge is asked whether the answer agrees with the expected answer; its verdict and reason are recorded", async () => {
    const judge = new ScriptedJudge({ answer: { passed: false, reason: "states 68F, expected 70F" } });
    const c = new Case({ name: "weather", agent: agent({ content: "It is 68F and sunny." }), input: "Weather?", expectedOutput: "It is 70F and sunny.", outputScoring: "judge", judgeModel: judge });
    const r = await runCase(c);
    assert.equal(judge.requests.length, 1);
    assert.ok(judge.requests[0]!.system.includes(factualAgreementCriteria("It is 70F and sunny.")));
    assert.ok(judge.requests[0]!.user.includes("It is 68F and sunny."));
    assert.deepEqual(r.expectations?.expectedOutput, { method: "judge", passed: false, reason: "judge: states 68F, expected 70F" });
    assert.equal(r.passed, false);

    const numeric = new ScriptedJudge({ answer: { score: 8, reason: "same facts" } });
    const ok = await runCase(
      new Case({ name: "weather_numeric", agent: agent({ content: "70F, sunny" }), input: "Weather?", expectedOutput: "It is 70F and sunny.", outputScoring: "judge", judgeMode: "numeric", judgeThreshold: 7, judgeModel: numeric }),
    );
    assert.deepEqual(ok.expectations?.expectedOutput, { method: "judge", passed: true, reason: "judge (score 8, passes at 7): same facts" });
    assert.equal(ok.passed, true);
  });

  test("judge scoring without a model, or with an unusable answer, is an error under expected_output:", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const none = await runCase(new Case({ name: "no_judge", agent: agent({ content: "x" }), input: "q", expectedOutput: "x", outputScoring: "judge" }));
      assert.equal(none.error, NO_OUTPUT_JUDGE_ERROR);
      assert.equal(none.passed, false);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
    const garbled = await runCase(new Case({ name: "garbled", agent: agent({ content: "x" }), input: "q", expectedOutput: "x", outputScoring: "judge", judgeModel: new ScriptedJudge({ answer: "no json here" }) }));
    assert.equal(garbled.error, "expected_output: judge returned no result");
  });

  test("a run that is not gradable skips the data-driven checks, as every other check", async () => {
    const r = await runCase(new Case({ name: "paused", agent: agent({ content: "wait", status: "paused" }), input: "q", expectedOutput: "wait" }));
    assert.equal(r.expectations, null);
    assert.equal(r.error, "agent: run paused awaiting user input");
  });
});

describe("Case options of the data-driven checks", () => {
  test("expectedOutput, expectedAgentTools or expectedKnowledgeSources alone are checks enough", () => {
    assert.doesNotThrow(() => new Case({ name: "a", agent: new StubAgent(), input: "q", expectedOutput: "x" }));
    assert.doesNotThrow(() => new Case({ name: "b", agent: new StubAgent(), input: "q", expectedAgentTools: ["t"] }));
    assert.doesNotThrow(() => new Case({ name: "c", agent: new StubAgent(), input: "q", expectedKnowledgeSources: ["kb"] }));
    assert.throws(() => new Case({ name: "d", agent: new StubAgent(), input: "q", expectedAgentTools: [] }), /case 'd' has no checks/);
  });

  test("the suite fingerprint covers the data-driven checks of code cases, and is unchanged for cases without them", () => {
    const agent = new StubAgent();
    const fp = (options: Partial<ConstructorParameters<typeof Case>[0]>) => suiteFingerprint([new Case({ name: "a", agent, input: "q", criteria: "c", ...options })]);
    assert.notEqual(fp({ expectedOutput: "x" }), fp({ expectedOutput: "y" }));
    assert.notEqual(fp({ expectedOutput: "x" }), fp({ expectedOutput: "x", outputScoring: "contains" }));
    assert.notEqual(fp({ expectedAgentTools: ["t"] }), fp({ expectedAgentTools: ["u"] }));
    assert.notEqual(fp({ id: "one" }), fp({ id: "two" }));
    // A case with none of them hashes exactly as before they existed.
    const legacy = createHash("sha256")
      .update(JSON.stringify(["a", "agent", "stub-agent", [], null, "c", "binary", 7, null, true, false, "q"]))
      .update("\n")
      .digest("hex");
    assert.equal(fp({}), legacy);
  });

  test("an expected output the scoring method cannot use is refused when the case is built, naming the field", () => {
    const build = (expectedOutput: unknown, outputScoring: unknown) => () =>
      new Case({ name: "x", agent: new StubAgent(), input: "q", expectedOutput: expectedOutput as string, outputScoring: outputScoring as "exact" });
    assert.throws(build("(", "regex"), (err: unknown) => err instanceof CaseValidationError && /^case 'x': expectedOutput is not a valid regular expression: .*, got '\('$/.test(err.message));
    assert.throws(build("{not json", "json"), /case 'x': expectedOutput must be JSON for scoring method 'json'/);
    assert.throws(build("about seven", "numeric"), /case 'x': expectedOutput must be a number \(or text holding one\) for scoring method 'numeric', got 'about seven'/);
    assert.throws(build({ a: 1 }, "exact"), /expectedOutput must be text or a number for scoring method 'exact' \(use 'json' for structured data\)/);
    assert.throws(build("x", "fuzzy"), /case 'x': outputScoring/);
  });
});
