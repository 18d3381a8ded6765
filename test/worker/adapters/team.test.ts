// openAITeam: a leader that delegates to members through delegate_task_to_member, against the
// scripted server over real HTTP. Reliability must see the member's tool calls (spec H).
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Case, ConfigError, DELEGATE_TOOL_NAME, JudgeMode, defineTool, openAIAgent, openAITeam, runCases, type RunEvent, type RunOutput } from "../../../index.ts";
import { ScriptedJudge, StubAgent } from "../../support/doubles.ts";
import { useScriptedOpenAI, type RecordedRequest } from "../../support/openai-server.ts";

const server = useScriptedOpenAI();
beforeEach(() => {
  server.requests.length = 0;
});

const connection = () => ({ baseURL: server.url, apiKey: "sk-team-test-0123456789", baseDelayMs: 5 });
const multiply = defineTool({ name: "multiply", description: "a * b", parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a * b });

function buildTeam() {
  const calculator = openAIAgent({ id: "calculator", model: "calc-model", instructions: "You are the calculator. Use the calculator tools for every arithmetic operation.", tools: [multiply], ...connection() });
  const writer = openAIAgent({ id: "writer", model: "writer-model", instructions: "Answer in one clear paragraph.", ...connection() });
  return openAITeam({
    id: "assistant-team",
    model: "leader-model",
    instructions: "Delegate arithmetic to the calculator member and writing to the writer member.",
    members: [{ agent: calculator, description: "does arithmetic" }, writer],
    ...connection(),
  });
}

/** Routes by model: the leader delegates then answers; the calculator multiplies then answers. */
function teamModel(req: RecordedRequest) {
  const model = req.body?.model;
  if (model === "leader-model") {
    if (req.lastToolResult) return { content: `The product is ${Number(req.lastToolResult.content).toLocaleString("en-US")}.` };
    return { toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member_id: "calculator", task: "Multiply 4891 by 7238." } }] };
  }
  if (model === "calc-model") {
    if (req.lastToolResult) return { content: req.lastToolResult.content };
    return { toolCalls: [{ name: "multiply", arguments: { a: 4891, b: 7238 } }] };
  }
  return { content: "unexpected model" };
}

describe("openAITeam", () => {
  test("the seed's team case: the member's multiply counts for reliability and shows in tools_called", async () => {
    server.handle(teamModel);
    const events: RunEvent[] = [];
    const suite = await runCases(
      [
        new Case({
          name: "team_uses_calculator",
          team: buildTeam(),
          input: "What is 4891 multiplied by 7238?",
          criteria: "States that the product is 35,401,058.",
          judgeMode: JudgeMode.NUMERIC,
          judgeThreshold: 7,
          judgeModel: new ScriptedJudge({ answer: { score: 9, reason: "correct" } }),
          expectedToolCalls: ["multiply"],
        }),
      ],
      { onRunEvent: (_c, e) => void events.push(e) },
    );
    const result = suite.results[0]!;
    assert.equal(result.error, null);
    assert.equal(result.teamId, "assistant-team");
    assert.equal(result.output, "The product is 35,401,058.");
    assert.deepEqual(result.toolsCalled, [DELEGATE_TOOL_NAME, "multiply"]);
    assert.equal(result.reliabilityPassed, true);
    assert.deepEqual(result.reliability?.passedToolCalls, ["multiply"]);
    assert.deepEqual(result.reliability?.additionalToolCalls, [DELEGATE_TOOL_NAME]);
    assert.equal(result.judgeScore, 9);
    assert.equal(result.passed, true);

    const out = result.response as RunOutput;
    assert.deepEqual(out.tools, [{ toolName: DELEGATE_TOOL_NAME, toolArgs: { member_id: "calculator", task: "Multiply 4891 by 7238." }, result: "35401058" }]);
    assert.equal(out.memberResponses?.length, 1);
    const member = out.memberResponses![0]!;
    assert.equal(member.content, "35401058");
    assert.deepEqual(member.tools, [{ toolName: "multiply", toolArgs: { a: 4891, b: 7238 }, result: 35401058 }]);
    // Leader and member each made two calls of 11 + 7 tokens.
    assert.deepEqual(out.metrics, { inputTokens: 44, outputTokens: 28, totalTokens: 72 });

    const leaderTools = server.requests.find((r) => r.body?.model === "leader-model")!.body?.tools as Array<{ function: { name: string; description: string; parameters: { properties: { member_id: { enum: string[] } } } } }>;
    assert.equal(leaderTools.length, 1);
    assert.equal(leaderTools[0]!.function.name, DELEGATE_TOOL_NAME);
    assert.deepEqual(leaderTools[0]!.function.parameters.properties.member_id.enum, ["calculator", "writer"]);
    assert.match(leaderTools[0]!.function.description, /- calculator: does arithmetic\n- writer/);
    const memberReq = server.requests.find((r) => r.body?.model === "calc-model")!;
    assert.equal(memberReq.lastUserText, "Multiply 4891 by 7238.");

    const memberEvents = events.filter((e) => e.type === "member_event") as unknown as Array<{ memberId: string; event: RunEvent }>;
    assert.ok(memberEvents.some((e) => e.memberId === "calculator" && e.event.type === "tool_call_started"));
  });

  test("a delegation to a member that does not exist goes back to the leader as a tool error", async () => {
    server.reply(
      { toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member_id: "accountant", task: "sum" } }] },
      { content: "I cannot delegate that." },
    );
    const result = (await runCases([new Case({ name: "bad_member", team: buildTeam(), input: "x", expectedToolCalls: ["multiply"] })])).results[0]!;
    const out = result.response as RunOutput;
    assert.match(String(out.tools![0]!.toolCallError), /^invalid arguments for delegate_task_to_member: .*member_id/);
    assert.deepEqual(out.memberResponses, []);
    assert.equal(result.reliabilityPassed, false);
  });

  test("a member that fails is reported to the leader; its partial output is kept", async () => {
    const broken = new StubAgent({ id: "calculator", output: { content: "half done", status: "paused" } });
    const team = openAITeam({ id: "t", model: "leader-model", members: [broken], ...connection() });
    server.reply({ toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member_id: "calculator", task: "x" } }] }, { content: "The calculator failed." });
    const result = (await runCases([new Case({ name: "member_fails", team, input: "x", scorer: { score: () => ({ value: 1, passed: true }) } })])).results[0]!;
    const out = result.response as RunOutput;
    assert.equal(out.tools![0]!.toolCallError, "MemberFailed: member 'calculator' ended with status paused");
    assert.equal(out.memberResponses![0]!.content, "half done");
    assert.equal(server.requests[1]!.lastToolResult!.content, "Error: MemberFailed: member 'calculator' ended with status paused");
  });

  test("bad members are refused with the field named", () => {
    const bad = (members: unknown, pattern: RegExp) =>
      assert.throws(() => openAITeam({ model: "m", members: members as never, ...connection() }), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));
    bad([], /^openAITeam: members must be a non-empty list of agents, got \[\]$/);
    bad([{ run: () => ({}) }], /^openAITeam: members\[0\] needs an id \(the leader delegates by id\), got None$/);
    bad([new StubAgent({ id: "a" }), new StubAgent({ id: "a" })], /^openAITeam: member ids must be unique, got 'a' twice$/);
    bad(["calculator"], /^openAITeam: members\[0\] must be an agent/);
  });
});
