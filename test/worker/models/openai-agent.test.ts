// The built-in tool-calling agent against the scripted OpenAI-compatible server over real HTTP:
// the tool loop, streaming, bad tool calls, limits, retries, the case's signal, bad options.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { Case, ConfigError, defineTool, openAIAgent, runCase, runCases, type RunEvent, type RunOutput } from "../../../index.ts";
import { latch } from "../../support/doubles.ts";
import { useScriptedOpenAI, type RecordedRequest } from "../../support/openai-server.ts";
import { structuredChatMessages, uiConversationInput } from "../../support/ui-conversation.ts";

const server = useScriptedOpenAI();
beforeEach(() => server.reset());

function factorialOf(n: number): number {
  return n <= 1 ? 1 : n * factorialOf(n - 1);
}

const factorial = defineTool({
  name: "factorial",
  description: "Compute n! for a whole number n.",
  parameters: z.object({ n: z.number().int().min(0) }),
  execute: ({ n }) => factorialOf(n),
});

/** The model of the seed's math tutor: calls factorial, then states the result. */
function tutorModel(req: RecordedRequest) {
  if (req.lastToolResult) return { content: `10! = ${req.lastToolResult.content}` };
  return { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] };
}

// Each agent its own provider key: a 429 with a Retry-After scripted for one test pauses its key in
// this process's limiter, and must not hold up the next test's calls.
let keys = 0;
const tutor = (overrides: Record<string, unknown> = {}) =>
  openAIAgent({
    limitKey: `tutor-test-${++keys}`,
    id: "math-tutor",
    model: "tutor-model",
    baseURL: server.url,
    apiKey: "sk-agent-test-0123456789",
    instructions: "Use the calculator tools for any arithmetic.",
    tools: [factorial],
    baseDelayMs: 5,
    maxDelayMs: 20,
    ...overrides,
  });

describe("openAIAgent: the tool loop", () => {
  test("the seed's math tutor: the model calls factorial, gets the result, answers; reliability sees the execution", async () => {
    server.handle(tutorModel);
    const events: RunEvent[] = [];
    const suite = await runCases(
      [new Case({ name: "factorial_uses_calculator", agent: tutor(), input: "What is 10! (ten factorial)?", expectedToolCalls: ["factorial"] })],
      { onRunEvent: (_c, e) => void events.push(e) },
    );
    const result = suite.results[0]!;
    assert.equal(result.error, null);
    assert.equal(result.passed, true);
    assert.equal(result.agentId, "math-tutor");
    assert.equal(result.output, "10! = 3628800");
    assert.deepEqual(result.toolsCalled, ["factorial"]);
    assert.equal(result.reliabilityPassed, true);
    const response = result.response as RunOutput;
    assert.deepEqual(response.tools, [{ toolName: "factorial", toolArgs: { n: 10 }, result: 3628800 }]);
    assert.deepEqual(response.metrics, { inputTokens: 22, outputTokens: 14, totalTokens: 36 });
    assert.equal(response.model, "tutor-model");
    assert.equal(response.messages?.[0]?.toolCalls?.[0]?.function.name, "factorial");

    assert.equal(server.requests.length, 2);
    const [first, second] = server.requests as [RecordedRequest, RecordedRequest];
    assert.equal(first.body?.model, "tutor-model");
    assert.deepEqual(first.messages.slice(0, 2), [
      { role: "system", content: "Use the calculator tools for any arithmetic." },
      { role: "user", content: "What is 10! (ten factorial)?" },
    ]);
    const tools = first.body?.tools as Array<{ type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
    assert.equal(tools[0]!.type, "function");
    assert.equal(tools[0]!.function.name, "factorial");
    assert.equal(tools[0]!.function.description, "Compute n! for a whole number n.");
    assert.equal((tools[0]!.function.parameters.properties as Record<string, { type: string }>).n!.type, "integer");
    // The second request carries the model's tool call and the tool's answer, linked by id.
    const assistant = second.messages[2]!;
    assert.equal(assistant.role, "assistant");
    const callId = assistant.tool_calls![0]!.id;
    assert.equal(assistant.tool_calls![0]!.function.name, "factorial");
    assert.deepEqual(second.messages[3], { role: "tool", tool_call_id: callId, content: "3628800" });

    assert.deepEqual(
      events.map((e) => e.type),
      ["run_started", "model_response", "tool_call_started", "tool_call_completed", "model_response"],
    );
    assert.deepEqual((events[2] as unknown as { tool: unknown }).tool, { toolName: "factorial", toolArgs: { n: 10 } });
  });

  test("streaming: content arrives as deltas, tool-call arguments are reassembled, usage comes from the last chunk", async () => {
    server.handle(tutorModel);
    const events: RunEvent[] = [];
    const result = await runCases([new Case({ name: "streamed", agent: tutor({ stream: true }), input: "What is 10!?", expectedToolCalls: ["factorial"] })], {
      onRunEvent: (_c, e) => void events.push(e),
    }).then((s) => s.results[0]!);
    assert.equal(result.error, null);
    assert.equal(result.output, "10! = 3628800");
    assert.deepEqual((result.response as RunOutput).tools, [{ toolName: "factorial", toolArgs: { n: 10 }, result: 3628800 }]);
    assert.deepEqual((result.response as RunOutput).metrics, { inputTokens: 22, outputTokens: 14, totalTokens: 36 });
    const deltas = events.filter((e) => e.type === "content_delta").map((e) => (e as unknown as { delta: string }).delta);
    assert.ok(deltas.length >= 3, "the answer came in several chunks");
    assert.equal(deltas.join(""), "10! = 3628800");
    for (const req of server.requests) {
      assert.equal(req.stream, true);
      assert.deepEqual(req.body?.stream_options, { include_usage: true });
    }
  });

  test("a conversation from UI messages keeps its structure: the image as a content part, the tool call and its result", async () => {
    server.reply({ content: "Yes, within 30 days." });
    const suite = await runCases([new Case({ name: "ui", agent: tutor({ instructions: null }), input: uiConversationInput(), expectedOutput: "30 days", outputScoring: "contains" })]);
    assert.equal(suite.results[0]!.passed, true, suite.results[0]!.error ?? "");
    assert.deepEqual(structuredChatMessages(server.requests[0]!.messages), {
      image: true,
      call: { id: "call_1", name: "lookup_order", arguments: { order: "A-1001" } },
      result: { toolCallId: "call_1", content: '{"status":"delivered"}' },
      roles: ["user", "assistant", "tool", "assistant", "user"],
    });
  });

  test("a conversation input keeps its roles", async () => {
    server.reply({ content: "120" });
    await runCase(
      new Case({
        name: "multi_turn",
        agent: tutor({ instructions: null }),
        input: [
          { role: "user", content: "I need a factorial." },
          { role: "assistant", content: "Which number?" },
          { role: "user", content: "5, please." },
        ],
        scorer: { score: () => ({ value: 1, passed: true }) },
      }),
    );
    assert.deepEqual(server.requests[0]!.messages, [
      { role: "user", content: "I need a factorial." },
      { role: "assistant", content: "Which number?" },
      { role: "user", content: "5, please." },
    ]);
  });
});

describe("openAIAgent: bad tool calls go back to the model", () => {
  test("invalid arguments are a failed execution the model can recover from", async () => {
    server.reply(
      { toolCalls: [{ name: "factorial", arguments: { n: "ten" } }] },
      { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] },
      { content: "3628800" },
    );
    const result = await runCase(new Case({ name: "recovers", agent: tutor(), input: "10!", expectedToolCalls: ["factorial"] }));
    const tools = (result.response as RunOutput).tools!;
    assert.equal(tools.length, 2);
    assert.match(String(tools[0]!.toolCallError), /^invalid arguments for factorial: .*n/);
    assert.deepEqual(tools[1], { toolName: "factorial", toolArgs: { n: 10 }, result: 3628800 });
    assert.equal(result.reliabilityPassed, true, "a clean retry passes");
    assert.match(server.requests[1]!.lastToolResult!.content, /^Error: invalid arguments for factorial/);
  });

  test("an unknown tool, arguments that are not JSON, and a tool that throws", async () => {
    const boom = defineTool({ name: "explode", parameters: z.object({}), execute: () => { throw new RangeError("boom"); } });
    server.reply(
      { toolCalls: [{ name: "divide", arguments: { a: 1, b: 0 } }, { name: "factorial", arguments: "{not json" }, { name: "explode", arguments: {} }] },
      { content: "I could not compute it." },
    );
    const result = await runCase(new Case({ name: "failures", agent: tutor({ tools: [factorial, boom] }), input: "x", expectedToolCalls: ["factorial"] }));
    const tools = (result.response as RunOutput).tools!;
    assert.equal(tools[0]!.toolCallError, "unknown tool 'divide'; available: factorial, explode");
    assert.match(String(tools[1]!.toolCallError), /^arguments of factorial are not JSON: SyntaxError/);
    assert.equal(tools[2]!.toolCallError, "RangeError: boom");
    assert.equal(result.reliabilityPassed, false);
    assert.match(result.reliability!.missingToolCalls[0]!, /^factorial \(requested but refused\/errored/);
    const replies = server.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    assert.deepEqual(replies.map((r) => r.slice(0, 6)), ["Error:", "Error:", "Error:"]);
  });

  test("a run that never settles on an answer stops at maxTurns with MaxTurnsExceeded; its evidence is kept", async () => {
    server.handle(() => ({ toolCalls: [{ name: "factorial", arguments: { n: 3 } }] }));
    const result = await runCase(new Case({ name: "loops", agent: tutor({ maxTurns: 3 }), input: "x", expectedToolCalls: ["factorial"] }));
    assert.equal(result.error, "agent: MaxTurnsExceeded: no final answer after 3 model turns");
    assert.deepEqual(result.toolsCalled, ["factorial", "factorial", "factorial"]);
    assert.equal(result.reliabilityPassed, null, "a failed run is not graded");
    assert.equal(server.requests.length, 3);
  });
});

describe("openAIAgent: long runs", () => {
  test("a dozen model turns on one case signal leave no abort listeners behind (no leak warning)", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    try {
      let turns = 0;
      server.handle((req) => (++turns < 12 ? { toolCalls: [{ name: "factorial", arguments: { n: turns } }] } : { content: `done after ${req.messages.length} messages` }));
      const controller = new AbortController();
      const ctx = { signal: controller.signal, sessionId: "s" };
      for (const stream of [false, true]) {
        turns = 0;
        let output: RunOutput | undefined;
        for await (const e of tutor({ maxTurns: 20, stream }).run("x", ctx)) if (e.type === "run_output") output = (e as unknown as { output: RunOutput }).output;
        assert.equal(output?.tools?.length, 11);
      }
      // Node reports a listener leak asynchronously, on the next tick at the latest.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message), []);
    } finally {
      process.off("warning", onWarning);
    }
  });
});

describe("openAIAgent: failures of the model server", () => {
  test("429 then success is retried within the run", async () => {
    server.reply({ status: 429, headers: { "retry-after-ms": "50" } }, { content: "done" });
    const result = await runCase(new Case({ name: "retry", agent: tutor(), input: "x", scorer: { score: () => ({ value: 1, passed: true }) } }));
    assert.equal(result.error, null);
    assert.equal(result.output, "done");
    assert.equal(server.requests.length, 2);
  });

  test("retries exhausted: the case records a ModelCallError", async () => {
    server.handle(() => ({ status: 500, errorMessage: "upstream down" }));
    const result = await runCase(new Case({ name: "down", agent: tutor({ maxRetries: 1 }), input: "x", expectedToolCalls: ["factorial"] }));
    assert.match(result.error!, /^agent: ModelCallError: http:\/\/127\.0\.0\.1:\d+\/v1 answered 500 upstream down \(gave up after 2 attempts\)$/);
  });

  test("a Retry-After past the case deadline fails the run at once (the agent gets the deadline)", async () => {
    server.reply({ status: 429, headers: { "retry-after": "60" } });
    const started = Date.now();
    const result = await runCase(new Case({ name: "too_late", agent: tutor(), input: "x", expectedToolCalls: ["factorial"], timeoutSeconds: 10 }));
    assert.equal(result.timedOut, false);
    assert.match(result.error!, /^agent: ModelCallError: .*answered 429 .*the next attempt would start in 60s \(Retry-After\), past the case deadline [\d.]+s away \(attempt 1\)$/);
    assert.ok(Date.now() - started < 5000);
    assert.equal(server.requests.length, 1);
  });

  test("a hung model reply is cut by the case timeout, and the connection closed", async () => {
    server.reply({ hang: "after-headers" });
    const result = await runCase(new Case({ name: "hung", agent: tutor(), input: "x", expectedToolCalls: ["factorial"], timeoutSeconds: 0.5 }));
    assert.equal(result.timedOut, true);
    assert.equal(result.error, "timeout: exceeded 0.5s");
    await server.waitForAborts(1);
  });

  test("a tool receives the case's signal and is aborted at the deadline", async () => {
    const started = latch();
    const aborted = latch<unknown>();
    const slow = defineTool({
      name: "slow",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((_, reject) => {
          started.open();
          signal.addEventListener("abort", () => (aborted.open(signal.reason), reject(signal.reason)), { once: true });
        }),
    });
    server.reply({ toolCalls: [{ name: "slow", arguments: {} }] });
    const result = await runCase(new Case({ name: "slow_tool", agent: tutor({ tools: [slow] }), input: "x", expectedToolCalls: ["slow"], timeoutSeconds: 0.5 }));
    await started.promise;
    const reason = await aborted.promise;
    assert.equal(result.timedOut, true);
    assert.equal((reason as DOMException).name, "TimeoutError");
  });
});

describe("openAIAgent and defineTool: bad options name the field", () => {
  const configError = (fn: () => unknown, pattern: RegExp): void => {
    assert.throws(fn, (err: unknown) => err instanceof ConfigError && pattern.test(err.message));
  };
  test("tools, maxTurns, id, stream, instructions", () => {
    configError(() => tutor({ maxTurns: 0 }), /^openAIAgent: maxTurns must be a whole number >= 1, got 0$/);
    configError(() => tutor({ tools: "factorial" }), /^openAIAgent: tools must be a list of tools or toolkits, got 'factorial'$/);
    configError(() => tutor({ tools: [factorial, factorial] }), /^openAIAgent: tools must have unique names, got 'factorial'$/);
    configError(() => tutor({ tools: [42] }), /^openAIAgent: tools\[0\] must be a tool \(defineTool\) or a toolkit, got 42$/);
    configError(() => tutor({ id: 7 }), /^openAIAgent: id must be a string, got 7$/);
    configError(() => tutor({ stream: "yes" }), /^openAIAgent: stream must be a boolean, got 'yes'$/);
    configError(() => tutor({ instructions: ["be nice"] }), /^openAIAgent: instructions must be a string/);
    configError(() => tutor({ model: "" }), /^openAIAgent: model must be a non-empty string, got ''$/);
  });
  test("defineTool", () => {
    configError(() => defineTool({ name: "has space", parameters: z.object({}), execute: () => 1 }), /^defineTool: tool name must be 1-64 letters, digits, '_' or '-', got 'has space'$/);
    configError(() => defineTool({ name: "ok", parameters: "n: number" as never, execute: () => 1 }), /^defineTool: tool 'ok': parameters must be a zod schema or a JSON Schema object, got 'n: number'$/);
    configError(() => defineTool({ name: "ok", parameters: z.object({}), execute: 1 as never }), /^defineTool: tool 'ok': execute must be a function, got 1$/);
  });
});
