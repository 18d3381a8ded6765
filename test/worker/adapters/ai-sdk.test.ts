// The Vercel AI SDK integrations against the scripted OpenAI-compatible server over real HTTP
// (through @ai-sdk/openai-compatible): aiSdkJudge, and wrapAiSdk around generateText,
// streamText and a ToolLoopAgent.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { generateText, stepCountIs, streamText, tool, ToolLoopAgent } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { Case, ConfigError, aiSdkJudge, buildJudgeRequest, runCase, runCases, wrapAiSdk, type RunEvent, type RunOutput } from "../../../index.ts";
import { runJudge } from "../../../worker/runtime/checks/judge.ts";
import { StubAgent } from "../../support/doubles.ts";
import { useScriptedOpenAI, type RecordedRequest } from "../../support/openai-server.ts";
import { structuredChatMessages, uiConversationInput } from "../../support/ui-conversation.ts";

let provider: ReturnType<typeof createOpenAICompatible>;
const server = useScriptedOpenAI((started) => {
  provider = createOpenAICompatible({ name: "scripted", baseURL: started.url, apiKey: "sk-ai-sdk-0123456789", includeUsage: true, supportsStructuredOutputs: true });
});
beforeEach(() => server.reset());

function factorialOf(n: number): number {
  return n <= 1 ? 1 : n * factorialOf(n - 1);
}
const factorial = tool({ description: "n!", inputSchema: z.object({ n: z.number().int() }), execute: async ({ n }) => factorialOf(n) });
const failing = tool({
  description: "always fails",
  inputSchema: z.object({ x: z.number().optional() }),
  execute: async (): Promise<string> => {
    throw new Error("calculator offline");
  },
});

function tutorModel(req: RecordedRequest) {
  if (req.lastToolResult) return { content: `10! = ${req.lastToolResult.content}` };
  return { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] };
}

describe("aiSdkJudge", () => {
  test("binary and numeric verdicts through the SDK's structured output", async () => {
    server.reply({ content: '{"passed": true, "reason": "names Paris"}' }, { content: '{"score": 7, "reason": "fine"}' });
    const judge = aiSdkJudge(provider.chatModel("judge-model"));
    assert.equal(judge.id, "scripted.chat:judge-model");
    const binary = await runCase(new Case({ name: "b", input: "Capital of France?", agent: new StubAgent({ output: { content: "Paris" } }), criteria: "Names Paris.", judgeModel: judge }));
    assert.equal(binary.judgePassed, true, binary.error ?? "");
    assert.equal(binary.judgeReason, "names Paris");
    const format = server.requests[0]!.body?.response_format as { type: string; json_schema: { name: string; schema: Record<string, unknown> } };
    assert.equal(format.type, "json_schema");
    assert.equal(format.json_schema.name, "binary_judge_response");
    assert.match(String(server.requests[0]!.messages[0]!.content), /^You are an expert evaluator\./);

    const numeric = await runCase(new Case({ name: "n", input: "q", agent: new StubAgent(), criteria: "c", judgeMode: "numeric", judgeThreshold: 7, judgeModel: judge }));
    assert.equal(numeric.judgeScore, 7);
    assert.equal(numeric.judgePassed, true, "a score equal to the threshold passes");
  });

  test("with the response cache on, the same judgement is answered from the cache: one request for two cases", async () => {
    server.handle(() => ({ content: '{"passed": true, "reason": "names Paris"}' }));
    const { FileResponseStore } = await import("../../../worker/models/file-cache.ts");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const cache = { store: new FileResponseStore(mkdtempSync(join(tmpdir(), "evalfleet-ai-sdk-cache-"))), ttlSeconds: 60 };
    const c = new Case({ name: "b", input: "Capital of France?", agent: new StubAgent({ output: { content: "Paris" } }), criteria: "Names Paris.", judgeModel: aiSdkJudge(provider.chatModel("judge-model")) });
    const first = await runCase(c, { cache });
    const second = await runCase(c, { cache });
    assert.deepEqual([first.judgePassed, first.modelCache], [true, { hits: 0, misses: 1 }]);
    assert.deepEqual([second.judgePassed, second.judgeReason, second.modelCache], [true, "names Paris", { hits: 1, misses: 0 }]);
    assert.equal(server.requests.length, 1);
  });

  test("an answer that is not the schema's JSON reaches the judge check, which decides", async () => {
    server.reply({ content: 'My verdict: {"passed": false, "reason": "says Lyon"}' }, { content: "no JSON at all" });
    const judge = aiSdkJudge(provider.chatModel("judge-model"));
    const request = buildJudgeRequest({ criteria: "c", mode: "binary", input: "q", output: "a" });
    assert.deepEqual(await runJudge(judge, request, "binary", 7, new AbortController().signal), { verdict: { passed: false, reason: "says Lyon", score: null } });
    const second = await runJudge(judge, request, "binary", 7, new AbortController().signal);
    assert.ok("problem" in second && /answer is not JSON/.test(second.problem));
  });

  test("429 then success: the SDK's own retry honours Retry-After; usage is reported", async () => {
    server.reply({ status: 429, headers: { "retry-after-ms": "200" } }, { content: '{"passed": true, "reason": "ok"}', usage: { prompt_tokens: 30, completion_tokens: 4 } });
    const usage: unknown[] = [];
    const request = buildJudgeRequest({ criteria: "c", mode: "binary", input: "q", output: "a" });
    const started = Date.now();
    const outcome = await runJudge(aiSdkJudge(provider.chatModel("judge-model"), { maxRetries: 2 }), request, "binary", 7, new AbortController().signal, { onUsage: (u) => usage.push(u) });
    assert.deepEqual(outcome, { verdict: { passed: true, reason: "ok", score: null } });
    assert.equal(server.requests.length, 2);
    assert.ok(Date.now() - started >= 200);
    assert.deepEqual(usage, [{ inputTokens: 30, outputTokens: 4, totalTokens: 34 }]);
  });

  test("a hung reply is cut by the case timeout", async () => {
    server.reply({ hang: "after-headers" });
    const result = await runCase(new Case({ name: "hung", input: "q", agent: new StubAgent(), criteria: "c", judgeModel: aiSdkJudge(provider.chatModel("judge-model")), timeoutSeconds: 0.5 }));
    assert.equal(result.timedOut, true);
    await server.waitForAborts(1);
  });

  test("a model that is not an AI SDK model is refused, naming the field", () => {
    assert.throws(() => aiSdkJudge({} as never), (e: unknown) => e instanceof ConfigError && /^aiSdkJudge: model must be an AI SDK language model .*, got an object \(Object\) without doGenerate\(\)$/.test(e.message));
    assert.throws(() => aiSdkJudge(provider.chatModel("m"), { maxRetries: -2 }), /maxRetries must be a whole number >= 0, got -2/);
  });
});

describe("wrapAiSdk", () => {
  test("generateText: tool results become tools, steps stream as events, usage becomes metrics", async () => {
    server.handle(tutorModel);
    const agent = wrapAiSdk((call) => generateText({ model: provider.chatModel("tutor"), tools: { factorial }, stopWhen: stepCountIs(5), ...call }), { id: "math-tutor" });
    const events: RunEvent[] = [];
    const suite = await runCases([new Case({ name: "factorial", agent, input: "What is 10!?", expectedToolCalls: ["factorial"] })], { onRunEvent: (_c, e) => void events.push(e) });
    const result = suite.results[0]!;
    assert.equal(result.error, null);
    assert.equal(result.agentId, "math-tutor");
    assert.equal(result.output, "10! = 3628800");
    assert.deepEqual(result.toolsCalled, ["factorial"]);
    assert.equal(result.reliabilityPassed, true);
    const out = result.response as RunOutput;
    assert.deepEqual(out.tools, [{ toolName: "factorial", toolArgs: { n: 10 }, result: 3628800 }]);
    assert.deepEqual(out.metrics, { inputTokens: 22, outputTokens: 14, totalTokens: 36 });
    assert.equal(out.messages?.[0]?.toolCalls?.[0]?.function.name, "factorial");
    assert.deepEqual(
      events.map((e) => [e.type, (e as unknown as { finishReason?: string }).finishReason]),
      [
        ["finish-step", "tool-calls"],
        ["finish-step", "stop"],
      ],
    );
    assert.deepEqual((events[0] as unknown as { toolCalls: string[] }).toolCalls, ["factorial"]);
    assert.equal(server.requests[0]!.lastUserText, "What is 10!?");
  });

  test("a conversation from UI messages reaches the model with its structure: the image, the tool call and its result", async () => {
    server.handle(() => ({ content: "Yes, within 30 days." }));
    const agent = wrapAiSdk((call) => generateText({ model: provider.chatModel("support"), ...call }), { id: "support" });
    const suite = await runCases([new Case({ name: "ui", agent, input: uiConversationInput(), expectedOutput: "30 days", outputScoring: "contains" })]);
    assert.equal(suite.results[0]!.error, null);
    assert.equal(suite.results[0]!.passed, true);
    const sent = structuredChatMessages(server.requests[0]!.messages);
    assert.deepEqual(sent, {
      image: true,
      call: { id: "call_1", name: "lookup_order", arguments: { order: "A-1001" } },
      result: { toolCallId: "call_1", content: '{"status":"delivered"}' },
      roles: ["user", "assistant", "tool", "assistant", "user"],
    });
  });

  test("streamText: every stream part passes to onRunEvent as a small plain event", async () => {
    server.handle(tutorModel);
    const agent = wrapAiSdk((call) => streamText({ model: provider.chatModel("tutor"), tools: { factorial }, stopWhen: stepCountIs(5), ...call }));
    const events: RunEvent[] = [];
    const result = (await runCases([new Case({ name: "streamed", agent, input: "10!", expectedToolCalls: ["factorial"] })], { onRunEvent: (_c, e) => void events.push(e) })).results[0]!;
    assert.equal(result.error, null);
    assert.equal(result.output, "10! = 3628800");
    assert.equal(result.reliabilityPassed, true);
    assert.deepEqual((result.response as RunOutput).metrics, { inputTokens: 22, outputTokens: 14, totalTokens: 36 });
    const types = events.map((e) => e.type);
    for (const t of ["start", "start-step", "tool-call", "tool-result", "finish-step", "text-delta", "finish"]) assert.ok(types.includes(t), `${t} in ${types.join(",")}`);
    const call = events.find((e) => e.type === "tool-call") as unknown as { toolName: string; input: unknown };
    assert.deepEqual([call.toolName, call.input], ["factorial", { n: 10 }]);
    assert.equal(events.filter((e) => e.type === "text-delta").map((e) => (e as unknown as { text: string }).text).join(""), "10! = 3628800");
    const startStep = events.find((e) => e.type === "start-step")!;
    assert.deepEqual(Object.keys(startStep), ["type"], "request bodies are not forwarded");
    assert.ok(server.requests.every((r) => r.stream));
  });

  test("a ToolLoopAgent, with generate() and with stream()", async () => {
    server.handle(tutorModel);
    const loop = new ToolLoopAgent({ id: "loop-tutor", model: provider.chatModel("tutor"), tools: { factorial }, instructions: "Use the tools." });
    for (const stream of [false, true]) {
      const result = await runCase(new Case({ name: `loop_${stream}`, agent: wrapAiSdk(loop, { stream }), input: "10!", expectedToolCalls: ["factorial"] }));
      assert.equal(result.error, null, `stream=${stream}`);
      assert.equal(result.agentId, "loop-tutor");
      assert.equal(result.output, "10! = 3628800");
      assert.equal(result.reliabilityPassed, true);
    }
    assert.equal(server.requests[0]!.system, "Use the tools.");
  });

  test("a tool that throws is a failed execution: reliability does not count it", async () => {
    server.reply({ toolCalls: [{ name: "failing", arguments: {} }] }, { content: "sorry" });
    const agent = wrapAiSdk((call) => generateText({ model: provider.chatModel("m"), tools: { failing }, stopWhen: stepCountIs(3), ...call }));
    const result = await runCase(new Case({ name: "tool_error", agent, input: "x", expectedToolCalls: ["failing"] }));
    const tools = (result.response as RunOutput).tools!;
    assert.equal(tools.length, 1);
    assert.equal(tools[0]!.toolName, "failing");
    assert.match(String(tools[0]!.toolCallError), /calculator offline/);
    assert.equal(result.reliabilityPassed, false);
  });

  test("the case's signal reaches the SDK call: a hung reply is cut at the deadline", async () => {
    server.reply({ hang: "after-headers" });
    const agent = wrapAiSdk((call) => generateText({ model: provider.chatModel("m"), maxRetries: 0, ...call }));
    const result = await runCase(new Case({ name: "hung", agent, input: "x", scorer: { score: () => ({ value: 1, passed: true }) }, timeoutSeconds: 0.5 }));
    assert.equal(result.timedOut, true);
    await server.waitForAborts(1);
  });

  test("a model error surfaces as the agent's error", async () => {
    server.handle(() => ({ status: 400, errorMessage: "bad request: unknown model" }));
    const agent = wrapAiSdk((call) => generateText({ model: provider.chatModel("m"), maxRetries: 0, ...call }));
    const result = await runCase(new Case({ name: "bad", agent, input: "x", scorer: { score: () => ({ value: 1, passed: true }) } }));
    assert.match(result.error!, /^agent: AI_APICallError: bad request: unknown model/);
  });

  test("a source that is neither a function nor an AI SDK Agent is refused", () => {
    assert.throws(() => wrapAiSdk(42 as never), (e: unknown) => e instanceof ConfigError && /^wrapAiSdk: source must be a function .*, got 42$/.test(e.message));
  });
});
