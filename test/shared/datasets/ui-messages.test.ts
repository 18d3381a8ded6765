// Dataset inputs as UI messages (shared/datasets/ui-messages.ts): every AI SDK part type, converted
// as the AI SDK's own convertToModelMessages converts them. The reference is the installed `ai`
// package itself (imported by the test only; the dataset code has its own conversion).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { messageProblems, toChatMessages } from "../../../shared/datasets/ui-messages.ts";
import type { ChatMessage } from "../../../shared/case/agent.ts";

const { convertToModelMessages } = await import("ai");

const png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** Every part type the AI SDK's UIMessage defines, in every tool state, across the three UI roles. */
const CONVERSATION = [
  {
    id: "m-system",
    role: "system",
    parts: [
      { type: "text", text: "You are a support agent. ", providerMetadata: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      { type: "text", text: "Be brief." },
    ],
  },
  {
    id: "m-user-1",
    role: "user",
    metadata: { channel: "web", at: "2026-01-05T10:00:00Z" },
    parts: [
      { type: "text", text: "Here is my receipt and the manual." },
      { type: "file", mediaType: "image/png", filename: "receipt.png", url: png },
      { type: "file", mediaType: "application/pdf", url: "https://example.com/manual.pdf", providerMetadata: { openai: { fileId: "file-1" } } },
      { type: "data-ticket", id: "d1", data: { ticket: 42 } },
      { type: "step-start" },
    ],
  },
  {
    id: "m-assistant-1",
    role: "assistant",
    metadata: { model: "gpt-5-mini" },
    parts: [
      { type: "step-start" },
      { type: "reasoning", text: "The user wants a refund; look up the order.", providerMetadata: { openai: { itemId: "rs_1" } } },
      { type: "tool-lookup_order", toolCallId: "call-1", state: "output-available", input: { order: "A-1001" }, output: { status: "delivered", total: 42.5 }, callProviderMetadata: { openai: { itemId: "fc_1" } } },
      { type: "text", text: "I found the order." },
      { type: "source-url", sourceId: "s1", url: "https://example.com/policy", title: "Refund policy" },
      { type: "step-start" },
      { type: "tool-check_stock", toolCallId: "call-2", state: "output-error", input: { sku: "X" }, errorText: "inventory service unavailable" },
      { type: "dynamic-tool", toolName: "calculator", toolCallId: "call-3", state: "output-available", input: { expr: "42.5*0.1" }, output: "4.25" },
      { type: "tool-refund", toolCallId: "call-4", state: "output-denied", input: { amount: 42.5 }, approval: { id: "ap-1", approved: false, reason: "over the limit" } },
      { type: "tool-notify", toolCallId: "call-5", state: "approval-responded", input: { to: "ops" }, approval: { id: "ap-2", approved: true } },
      { type: "tool-draft", toolCallId: "call-6", state: "input-streaming", input: { partial: true } },
      { type: "tool-web_search", toolCallId: "call-7", state: "output-available", providerExecuted: true, input: { q: "refund law" }, output: [{ url: "https://law.example" }] },
      { type: "dynamic-tool", dynamic: false, toolName: "legacy_lookup", toolCallId: "call-8", state: "output-available", input: {}, output: { secret: "raw" } },
      { type: "source-document", sourceId: "s2", mediaType: "text/plain", title: "FAQ" },
      { type: "data-progress", data: { done: 1 } },
      { type: "file", mediaType: "image/png", url: png },
      { type: "text", text: "You get 4.25 back." },
      { type: "step-start" },
      { type: "tool-escalate", toolCallId: "call-9", state: "input-available", input: { level: 2 } },
      { type: "tool-ask", toolCallId: "call-10", state: "approval-requested", input: { q: "ok?" }, approval: { id: "ap-3" } },
    ],
  },
  { id: "m-user-2", role: "user", parts: [{ type: "text", text: "Thanks! | answer=ok" }] },
];

/** A model message's content as parts, JSON-normalised (undefined keys dropped, as on the wire). */
function contentOf(m: { content: unknown }): unknown {
  return JSON.parse(JSON.stringify(typeof m.content === "string" ? m.content : m.content));
}

function ourContent(m: ChatMessage): unknown {
  if (m.role === "system") return m.content;
  return JSON.parse(JSON.stringify(m.parts ?? [{ type: "text", text: m.content }]));
}

describe("UI messages are converted as the AI SDK converts them", () => {
  test("every part type and tool state gives the messages convertToModelMessages gives, in order", async () => {
    assert.deepEqual(messageProblems(CONVERSATION), []);
    const ours = toChatMessages(CONVERSATION);
    const sdk = await convertToModelMessages(CONVERSATION as never);
    assert.deepEqual(
      ours.map((m) => m.role),
      sdk.map((m) => m.role),
    );
    ours.forEach((m, i) => {
      assert.deepEqual(ourContent(m), contentOf(sdk[i]!), `message ${i} (${m.role})`);
      assert.deepEqual(m.providerOptions ?? null, (sdk[i] as { providerOptions?: unknown }).providerOptions ?? null, `message ${i}: provider options`);
    });
    // What the conversion had to decide, spelled out (the SDK agreeing is checked above).
    assert.equal(ours.length, 8, "system, user, three assistant steps with their tool messages, user");
    assert.equal(ours[0]!.content, "You are a support agent. Be brief.", "system text joined as the AI SDK joins it");
    assert.equal(ours[1]!.content, "Here is my receipt and the manual.", "content is the text; the files are parts");
    assert.deepEqual(
      ours[1]!.parts!.map((p) => p.type),
      ["text", "file", "file"],
      "the data part is dropped without convertDataPart",
    );
    assert.deepEqual(
      ours[2]!.parts!.map((p) => p.type),
      ["reasoning", "tool-call", "text"],
      "reasoning and text in order, the tool call between",
    );
    assert.equal(ours[3]!.role, "tool");
    assert.equal(ours[3]!.content, 'lookup_order: {"status":"delivered","total":42.5}');
    const step2 = ours[4]!.parts!.map((p) => `${p.type}${"toolName" in p ? `:${p.toolName}` : ""}`);
    assert.deepEqual(step2, [
      "tool-call:check_stock",
      "tool-call:calculator",
      "tool-call:refund",
      "tool-approval-request",
      "tool-call:notify",
      "tool-approval-request",
      "tool-call:web_search",
      "tool-result:web_search",
      "tool-call:legacy_lookup",
      "file",
      "text",
    ]);
    assert.deepEqual(
      ours[5]!.content.split("\n"),
      [
        "check_stock: inventory service unavailable",
        "calculator: 4.25",
        "approval ap-1: denied (over the limit)",
        "refund: over the limit",
        "approval ap-2: approved",
        "legacy_lookup: Tool output omitted because the tool is no longer available.",
      ],
      "tool results and approval responses, one per line; a gone tool's raw output is not shown",
    );
    assert.equal(ours.at(-1)!.content, "Thanks! | answer=ok");
    assert.equal(ours.at(-1)!.parts, undefined, "one plain text part is a plain message");
  });

  test("each converted message keeps its UI message's id and metadata; a null metadata is none", () => {
    const ours = toChatMessages(CONVERSATION);
    assert.deepEqual(
      ours.map((m) => m.id),
      ["m-system", "m-user-1", "m-assistant-1", "m-assistant-1", "m-assistant-1", "m-assistant-1", "m-assistant-1", "m-user-2"],
    );
    assert.deepEqual(ours[1]!.metadata, { channel: "web", at: "2026-01-05T10:00:00Z" });
    assert.deepEqual(ours[3]!.metadata, { model: "gpt-5-mini" });
    assert.equal("metadata" in toChatMessages([{ role: "user", metadata: null, parts: [{ type: "text", text: "hi" }] }])[0]!, false);
    assert.ok(Object.isFrozen(ours[2]!.parts), "messages are frozen, parts included");
  });

  test("{role, content} messages stay as they are; content may be AI SDK model parts", () => {
    const ours = toChatMessages([
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "text", text: "Let me check." }, { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { id: 1 } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "lookup", output: { type: "text", value: "found" } }] },
    ]);
    assert.deepEqual(ours[0], { role: "user", content: "Hi" });
    assert.equal(ours[1]!.content, "Let me check.");
    assert.equal(ours[1]!.parts!.length, 2);
    assert.deepEqual(ours[2]!.content, "lookup: found");
  });

  test("a bad part is reported at its path, with what is expected", () => {
    const problems = messageProblems([
      { role: "user", parts: [{ type: "text" }, { type: "file", url: "x" }, { type: "picture" }] },
      { role: "assistant", parts: [{ type: "tool-lookup", state: "done" }, { type: "dynamic-tool", toolCallId: "c", state: "output-available" }] },
      { role: "tool", parts: [{ type: "text", text: "x" }] },
      { role: "assistant", parts: [{ type: "tool-invocation", toolInvocation: { state: "result" } }] },
      { role: "user", content: [{ type: "video" }] },
      "hello",
    ]);
    const lines = problems.map((p) => `${p.path.join(".")}: ${p.message}`);
    assert.deepEqual(lines, [
      "0.parts.0.text: must be text",
      "0.parts.1.mediaType: must be a media type (text)",
      "0.parts.2.type: must be a UI part type (text, reasoning, file, step-start, source-url, source-document, tool-<name>, dynamic-tool, data-<name>)",
      "1.parts.0.toolCallId: must be the tool call's id (text)",
      "1.parts.0.state: must be one of input-streaming, input-available, approval-requested, approval-responded, output-available, output-error, output-denied",
      "1.parts.1.toolName: must be the tool's name (text)",
      "2.role: a UI message's role is system, user, assistant",
      "3.parts.0.type: is an AI SDK 4 part: save the messages with AI SDK 5 or later (tool-<name> parts)",
      "4.content.0.type: must be one of text, reasoning, image, file, tool-call, tool-result, tool-approval-request, tool-approval-response",
      "5: must be a {role, content} message or a UI message {role, parts}",
    ]);
  });
});
