// The OpenAI Agents SDK adapter against the scripted server over real HTTP (the SDK's chat
// completions model, on Node 20 with the SDK's own openai@7): tools, handoffs as team members,
// streamed events, usage, the case's signal.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { Agent, OpenAIProvider, Runner, setOpenAIAPI, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";
import { Case, ConfigError, runCase, runCases, wrapOpenAIAgent, type RunEvent, type RunOutput } from "../../../index.ts";
import { useScriptedOpenAI, type RecordedRequest } from "../../support/openai-server.ts";
import { structuredChatMessages, uiConversationInput } from "../../support/ui-conversation.ts";

let runner: Runner;
const server = useScriptedOpenAI((started) => {
  setTracingDisabled(true);
  runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: started.url, apiKey: "sk-agents-0123456789", useResponses: false }), tracingDisabled: true });
});
beforeEach(() => server.reset());

function factorialOf(n: number): number {
  return n <= 1 ? 1 : n * factorialOf(n - 1);
}
const factorial = tool({ name: "factorial", description: "n!", parameters: z.object({ n: z.number().int() }), execute: async ({ n }) => String(factorialOf(n)) });
const multiply = tool({ name: "multiply", description: "a * b", parameters: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => String(a * b) });

function tutorModel(req: RecordedRequest) {
  if (req.lastToolResult) return { content: `10! = ${req.lastToolResult.content}` };
  return { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] };
}

/** The leader hands off to the calculator, which multiplies and answers. */
function handoffModel(req: RecordedRequest) {
  if (req.toolNames.includes("transfer_to_calculator")) return { toolCalls: [{ name: "transfer_to_calculator", arguments: {} }] };
  if (req.toolNames.includes("multiply")) {
    if (req.lastToolResult && req.messages.filter((m) => m.role === "tool").length >= 2) return { content: `The product is ${req.lastToolResult.content}.` };
    return { toolCalls: [{ name: "multiply", arguments: { a: 4891, b: 7238 } }] };
  }
  return { content: "unexpected" };
}

describe("wrapOpenAIAgent", () => {
  test("a streamed run: tool calls and outputs become tools, events reach onRunEvent, usage becomes metrics", async () => {
    server.handle(tutorModel);
    const agent = wrapOpenAIAgent(new Agent({ name: "math-tutor", instructions: "Use the tools.", tools: [factorial] }), { runner });
    assert.equal(agent.id, "math-tutor");
    const events: RunEvent[] = [];
    const result = (await runCases([new Case({ name: "factorial", agent, input: "What is 10!?", expectedToolCalls: ["factorial"] })], { onRunEvent: (_c, e) => void events.push(e) })).results[0]!;
    assert.equal(result.error, null);
    assert.equal(result.output, "10! = 3628800");
    assert.deepEqual(result.toolsCalled, ["factorial"]);
    assert.equal(result.reliabilityPassed, true);
    const out = result.response as RunOutput;
    assert.deepEqual(out.tools, [{ toolName: "factorial", toolArgs: { n: 10 }, result: "3628800" }]);
    assert.deepEqual(out.memberResponses, []);
    assert.equal(out.metrics?.totalTokens, 36);
    assert.equal(out.metrics?.requests, 2);

    const itemEvents = events.filter((e) => e.type === "run_item_stream_event") as unknown as Array<{ name: string; item: { toolName?: string; agent: string } }>;
    assert.deepEqual(itemEvents.map((e) => e.name), ["tool_called", "tool_output", "message_output_created"]);
    assert.equal(itemEvents[0]!.item.toolName, "factorial");
    assert.equal(itemEvents[0]!.item.agent, "math-tutor");
    const deltas = events.filter((e) => e.type === "raw_model_stream_event" && (e as unknown as { data: { delta?: string } }).data.delta).map((e) => (e as unknown as { data: { delta: string } }).data.delta);
    assert.equal(deltas.join(""), "10! = 3628800");
    assert.ok(server.requests.every((r) => r.stream), "the SDK streamed from the server");
    assert.equal(server.requests[0]!.system, "Use the tools.");
  });

  test("a conversation from UI messages keeps its structure: the image, the function call and its result", async () => {
    server.handle(() => ({ content: "Yes, within 30 days." }));
    const agent = wrapOpenAIAgent(new Agent({ name: "support" }), { runner });
    const result = (await runCases([new Case({ name: "ui", agent, input: uiConversationInput(), expectedOutput: "30 days", outputScoring: "contains" })])).results[0]!;
    assert.equal(result.passed, true, result.error ?? "");
    assert.deepEqual(structuredChatMessages(server.requests[0]!.messages), {
      image: true,
      call: { id: "call_1", name: "lookup_order", arguments: { order: "A-1001" } },
      result: { toolCallId: "call_1", content: '{"status":"delivered"}' },
      roles: ["user", "assistant", "tool", "assistant", "user"],
    });
  });

  test("a handoff makes the target a team member: its multiply counts for reliability and shows in tools_called", async () => {
    server.handle(handoffModel);
    const calculator = new Agent({ name: "calculator", instructions: "Multiply.", tools: [multiply] });
    const leader = new Agent({ name: "assistant-team", instructions: "Delegate arithmetic.", handoffs: [calculator] });
    const result = await runCase(new Case({ name: "team_uses_calculator", team: wrapOpenAIAgent(leader, { runner }), input: "What is 4891 multiplied by 7238?", expectedToolCalls: ["multiply"] }));
    assert.equal(result.error, null);
    assert.equal(result.teamId, "assistant-team");
    assert.equal(result.output, "The product is 35401058.");
    assert.deepEqual(result.toolsCalled, ["transfer_to_calculator", "multiply"]);
    assert.equal(result.reliabilityPassed, true);
    const out = result.response as RunOutput;
    assert.deepEqual(out.tools, [{ toolName: "transfer_to_calculator", toolArgs: {}, result: "handed off to calculator" }]);
    assert.equal(out.memberResponses?.length, 1);
    assert.deepEqual(out.memberResponses![0]!.tools, [{ toolName: "multiply", toolArgs: { a: 4891, b: 7238 }, result: "35401058" }]);
    assert.equal(out.memberResponses![0]!.content, "The product is 35401058.");
    assert.equal(out.metrics?.requests, 3);
  });

  test("stream: false runs without streaming and maps the same way", async () => {
    server.handle(tutorModel);
    const agent = wrapOpenAIAgent(new Agent({ name: "math-tutor", tools: [factorial] }), { runner, stream: false });
    const events: RunEvent[] = [];
    const result = (await runCases([new Case({ name: "plain", agent, input: "10!", expectedToolCalls: ["factorial"] })], { onRunEvent: (_c, e) => void events.push(e) })).results[0]!;
    assert.equal(result.reliabilityPassed, true);
    assert.equal(result.output, "10! = 3628800");
    assert.deepEqual(events, []);
    assert.ok(server.requests.every((r) => !r.stream));
  });

  test("a conversation input becomes SDK message items", async () => {
    server.reply({ content: "120" });
    const agent = wrapOpenAIAgent(new Agent({ name: "chat" }), { runner });
    await runCase(
      new Case({
        name: "multi_turn",
        agent,
        input: [
          { role: "user", content: "I need a factorial." },
          { role: "assistant", content: "Which number?" },
          { role: "user", content: "5, please." },
        ],
        scorer: { score: () => ({ value: 1, passed: true }) },
      }),
    );
    const msgs = server.requests[0]!.messages.filter((m) => m.role !== "system").map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)]);
    assert.deepEqual(msgs.map((m) => m[0]), ["user", "assistant", "user"]);
    assert.equal(msgs[0]![1], "I need a factorial.");
    assert.match(msgs[1]![1]!, /Which number\?/);
  });

  test("the case's signal reaches the SDK: a hung reply is cut at the deadline", async () => {
    server.reply({ hang: "after-headers" });
    const agent = wrapOpenAIAgent(new Agent({ name: "slow" }), { runner });
    const result = await runCase(new Case({ name: "hung", agent, input: "x", scorer: { score: () => ({ value: 1, passed: true }) }, timeoutSeconds: 0.5 }));
    assert.equal(result.timedOut, true);
    await server.waitForAborts(1);
  });

  test("without a runner, the SDK's default run() is used (its client configured from the environment)", async () => {
    server.handle(tutorModel);
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "sk-agents-env-0123456789";
    process.env.OPENAI_BASE_URL = server.url;
    setOpenAIAPI("chat_completions");
    try {
      const result = await runCase(new Case({ name: "default_runner", agent: wrapOpenAIAgent(new Agent({ name: "t", model: "gpt-test", tools: [factorial] })), input: "10!", expectedToolCalls: ["factorial"] }));
      assert.equal(result.error, null);
      assert.equal(result.reliabilityPassed, true);
      assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-agents-env-0123456789");
      assert.equal(server.requests[0]!.body?.model, "gpt-test");
    } finally {
      for (const [k, v] of [["OPENAI_API_KEY", saved.key], ["OPENAI_BASE_URL", saved.url]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test("bad input is refused, naming the field", () => {
    assert.throws(() => wrapOpenAIAgent({} as never), (e: unknown) => e instanceof ConfigError && /^wrapOpenAIAgent: agent must be an @openai\/agents Agent, got /.test(e.message));
    assert.throws(() => wrapOpenAIAgent(new Agent({ name: "x" }), { runner: {} as never }), /runner must be an @openai\/agents Runner/);
    assert.throws(() => wrapOpenAIAgent(new Agent({ name: "x" }), { maxTurns: 0 }), /maxTurns must be a whole number >= 1, got 0/);
  });
});
