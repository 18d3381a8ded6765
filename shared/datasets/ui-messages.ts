// runs in: both
import * as z from "zod";
import type { ChatMessage, MessagePart, ProviderOptions, ToolResultOutput } from "../case/agent.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The messages of a dataset row's `inputs`, validated and converted for the agent. A row may hold
 * `{role, content}` chat messages (content: text, or AI SDK model message parts) or AI SDK UI
 * messages `{id, role, metadata, parts}` (what Exulu stores and `useChat` produces), in any mix.
 * UI messages are converted the way the AI SDK's `convertToModelMessages` converts them (ai 6, no
 * tools and no `convertDataPart` given): text and reasoning in order, files and tool calls as
 * structured parts, tool results in a tool message after the assistant's, a `step-start` part
 * closing a block; sources and `data-*` parts are dropped, as the AI SDK drops them. Written here
 * rather than imported, so loading data needs no optional package. Pure; no I/O.
 */

/** A problem of one message, with its path below the list (`[1].parts[2].toolCallId`). */
export interface MessageProblem {
  path: (string | number)[];
  message: string;
}

const TOOL_STATES = ["input-streaming", "input-available", "approval-requested", "approval-responded", "output-available", "output-error", "output-denied"] as const;
const UI_ROLES = ["system", "user", "assistant"] as const;
/** The UI part types, for messages (`tool-<name>` and `data-<name>` stand for their families). */
const UI_PART_TYPES = "text, reasoning, file, step-start, source-url, source-document, tool-<name>, dynamic-tool, data-<name>";
const MODEL_PART_TYPES = ["text", "reasoning", "image", "file", "tool-call", "tool-result", "tool-approval-request", "tool-approval-response"] as const;

const text = (what = "must be text") => z.string({ error: what });
const record = lazySchema(() => z.record(z.string(), z.unknown(), { error: "must be an object" }));
const providerMetadata = lazySchema(() => z.record(z.string(), record, { error: "must be an object of provider names to objects" }).optional());

const approval = lazySchema(() => z.looseObject({ id: text(), approved: z.boolean({ error: "must be true or false" }).optional(), reason: text().optional(), signature: text().optional() }));
const toolInvocation = lazySchema(() => ({
  toolCallId: text("must be the tool call's id (text)"),
  state: z.enum(TOOL_STATES, { error: `must be one of ${TOOL_STATES.join(", ")}` }),
  providerExecuted: z.boolean({ error: "must be true or false" }).optional(),
  errorText: text().optional(),
  callProviderMetadata: providerMetadata,
  resultProviderMetadata: providerMetadata,
  approval: approval.optional(),
  preliminary: z.boolean().optional(),
}));

/** zod schemas of the UI part types, by type (`tool-*` and `data-*` by prefix). */
const UI_PARTS = lazySchema(() => ({
  text: z.looseObject({ text: text(), providerMetadata }),
  reasoning: z.looseObject({ text: text(), providerMetadata }),
  file: z.looseObject({ mediaType: text("must be a media type (text)"), url: text("must be a URL (text; a data: URL holds the bytes)"), filename: text().optional(), providerMetadata }),
  "step-start": z.looseObject({}),
  "source-url": z.looseObject({ sourceId: text(), url: text() }),
  "source-document": z.looseObject({ sourceId: text(), mediaType: text(), title: text() }),
  "dynamic-tool": z.looseObject({ toolName: text("must be the tool's name (text)"), ...toolInvocation }),
  tool: z.looseObject(toolInvocation),
  data: z.looseObject({ data: z.unknown() }),
}) as const);

const MODEL_PARTS = lazySchema((): Record<(typeof MODEL_PART_TYPES)[number], z.ZodType> => ({
  text: z.looseObject({ text: text(), providerOptions: providerMetadata }),
  reasoning: z.looseObject({ text: text(), providerOptions: providerMetadata }),
  image: z.looseObject({ image: text("must be a URL or base64 text"), mediaType: text().optional() }),
  file: z.looseObject({ data: text("must be a URL or base64 text"), mediaType: text("must be a media type (text)"), filename: text().optional() }),
  "tool-call": z.looseObject({ toolCallId: text(), toolName: text() }),
  "tool-result": z.looseObject({ toolCallId: text(), toolName: text(), output: z.looseObject({ type: z.enum(["text", "json", "execution-denied", "error-text", "error-json", "content"], { error: "must be a tool result output type" }) }) }),
  "tool-approval-request": z.looseObject({ approvalId: text(), toolCallId: text() }),
  "tool-approval-response": z.looseObject({ approvalId: text(), approved: z.boolean({ error: "must be true or false" }) }),
}));

type UiPart = Record<string, unknown> & { type: string };
type UiMessage = { id?: string; role: (typeof UI_ROLES)[number]; metadata?: unknown; parts: UiPart[] };

/**
 * Validates a list of messages. Returns every problem (each with its path in the list), or none.
 * A message with `parts` is a UI message; one with `content` a chat message (text, or model parts).
 */
export function messageProblems(list: readonly unknown[]): MessageProblem[] {
  const problems: MessageProblem[] = [];
  list.forEach((m, i) => {
    const add = (path: (string | number)[], message: string): void => void problems.push({ path: [i, ...path], message });
    if (m === null || typeof m !== "object" || Array.isArray(m)) return add([], "must be a {role, content} message or a UI message {role, parts}");
    const msg = m as Record<string, unknown>;
    if (typeof msg.role !== "string" || msg.role === "") add(["role"], "must be a role (text)");
    if (msg.id !== undefined && msg.id !== null && typeof msg.id !== "string") add(["id"], "must be text");
    if (msg.parts !== undefined && msg.parts !== null) {
      if (typeof msg.role === "string" && msg.role && !(UI_ROLES as readonly string[]).includes(msg.role)) add(["role"], `a UI message's role is ${UI_ROLES.join(", ")}`);
      if (!Array.isArray(msg.parts)) return add(["parts"], "must be a list of UI message parts");
      msg.parts.forEach((p, j) => {
        for (const pr of uiPartProblems(p)) add(["parts", j, ...pr.path], pr.message);
      });
      return;
    }
    if (typeof msg.content === "string") return;
    if (!Array.isArray(msg.content)) return add([], "must be a {role, content} message");
    msg.content.forEach((p, j) => {
      const type = (p as { type?: unknown } | null)?.type;
      const schema = typeof type === "string" ? MODEL_PARTS[type as keyof typeof MODEL_PARTS] : undefined;
      if (!schema) return add(["content", j, "type"], `must be one of ${MODEL_PART_TYPES.join(", ")}`);
      for (const issue of schema.safeParse(p).error?.issues ?? []) add(["content", j, ...issue.path.map(pathKey)], issue.message);
    });
  });
  return problems;
}

function uiPartProblems(p: unknown): MessageProblem[] {
  if (p === null || typeof p !== "object" || Array.isArray(p)) return [{ path: [], message: "must be a UI message part {type, ...}" }];
  const type = (p as { type?: unknown }).type;
  if (typeof type !== "string") return [{ path: ["type"], message: `must be a part type (${UI_PART_TYPES})` }];
  if (type === "tool-invocation" && "toolInvocation" in p) {
    return [{ path: ["type"], message: "is an AI SDK 4 part: save the messages with AI SDK 5 or later (tool-<name> parts)" }];
  }
  const schema =
    type in UI_PARTS && type !== "tool" && type !== "data"
      ? UI_PARTS[type as keyof typeof UI_PARTS]
      : type.startsWith("tool-") && type.length > 5
        ? UI_PARTS.tool
        : type.startsWith("data-") && type.length > 5
          ? UI_PARTS.data
          : null;
  if (!schema) return [{ path: ["type"], message: `must be a UI part type (${UI_PART_TYPES})` }];
  return (schema.safeParse(p).error?.issues ?? []).map((issue) => ({ path: issue.path.map(pathKey), message: issue.message }));
}

const pathKey = (k: PropertyKey): string | number => (typeof k === "number" ? k : String(k));

/**
 * Converts a validated list (see {@link messageProblems}) into the messages the agent receives,
 * frozen. Chat messages keep their role, text and parts; UI messages become model messages as the
 * AI SDK converts them, each keeping the UI message's `id` and `metadata`.
 */
export function toChatMessages(list: readonly unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const raw of list) {
    const m = raw as Record<string, unknown>;
    const origin: Pick<ChatMessage, "id" | "metadata"> = {};
    if (typeof m.id === "string") origin.id = m.id;
    if (m.metadata !== undefined && m.metadata !== null) origin.metadata = m.metadata;
    if (Array.isArray(m.parts)) {
      for (const converted of convertUiMessage(m as unknown as UiMessage)) out.push(deepFreeze({ ...converted, ...origin }));
      continue;
    }
    const role = m.role as string;
    const providerOptions = isObject(m.providerOptions) ? { providerOptions: m.providerOptions as ProviderOptions } : {};
    if (typeof m.content === "string") out.push(deepFreeze({ role, content: m.content, ...providerOptions, ...origin }));
    else out.push(deepFreeze(withParts(role, m.content as MessagePart[], { ...providerOptions, ...origin })));
  }
  return out;
}

/** A message from its parts: `content` their text; `parts` left out when they are one plain text. */
function withParts(role: string, parts: MessagePart[], extra: Partial<ChatMessage> = {}): ChatMessage {
  const only = parts.length === 1 ? parts[0]! : null;
  if (only && only.type === "text" && only.providerOptions === undefined) return { role, content: only.text, ...extra };
  return { role, content: partsText(role, parts), parts, ...extra };
}

/** The text of a message's parts (see `ChatMessage.content`). */
export function partsText(role: string, parts: readonly MessagePart[]): string {
  if (role === "tool") {
    return parts
      .map((p) => (p.type === "tool-result" ? `${p.toolName}: ${outputText(p.output)}` : p.type === "tool-approval-response" ? `approval ${p.approvalId}: ${p.approved ? "approved" : "denied"}${p.reason ? ` (${p.reason})` : ""}` : ""))
      .filter(Boolean)
      .join("\n");
  }
  return parts
    .filter((p): p is Extract<MessagePart, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}

/** A tool result's output as text: text as is, JSON serialised, a denial as `execution denied: reason`. */
export function outputText(output: ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value) ?? "null";
    case "execution-denied":
      return `execution denied${output.reason ? `: ${output.reason}` : ""}`;
    case "content":
      return output.value.map((v) => (typeof v.text === "string" ? v.text : `[${String(v.type)}]`)).join("\n");
  }
}

// ---------------------------------------------------------------------------------------------
// convertToModelMessages, for one UI message (ai 6's packages/ai/src/ui/convert-to-model-messages.ts).

const isToolPart = (p: UiPart): boolean => p.type.startsWith("tool-") || p.type === "dynamic-tool";
const toolName = (p: UiPart): string => (p.type === "dynamic-tool" ? (p.toolName as string) : p.type.split("-").slice(1).join("-"));
const meta = (v: unknown): { providerOptions?: ProviderOptions } => (v !== undefined && v !== null ? { providerOptions: v as ProviderOptions } : {});

/** One UI message as model messages: none, one, or (an assistant's, with tools) several. */
function convertUiMessage(message: UiMessage): ChatMessage[] {
  const parts = message.parts;
  if (message.role === "system") {
    const texts = parts.filter((p) => p.type === "text");
    const providerOptions = texts.reduce<Record<string, unknown>>((acc, p) => (p.providerMetadata != null ? { ...acc, ...(p.providerMetadata as object) } : acc), {});
    return [{ role: "system", content: texts.map((p) => p.text as string).join(""), ...(Object.keys(providerOptions).length > 0 ? { providerOptions: providerOptions as ProviderOptions } : {}) }];
  }
  if (message.role === "user") {
    const content: MessagePart[] = [];
    for (const p of parts) {
      if (p.type === "text") content.push({ type: "text", text: p.text as string, ...meta(p.providerMetadata) });
      else if (p.type === "file") content.push(filePart(p));
      // data-* parts need the AI SDK's convertDataPart, which a dataset cannot give: dropped, as there.
    }
    return [withParts("user", content)];
  }
  const out: ChatMessage[] = [];
  let block: UiPart[] = [];
  const flush = (): void => {
    if (block.length > 0) out.push(...convertBlock(block));
    block = [];
  };
  for (const p of parts) {
    if (p.type === "text" || p.type === "reasoning" || p.type === "file" || isToolPart(p) || p.type.startsWith("data-")) block.push(p);
    else if (p.type === "step-start") flush();
  }
  flush();
  return out;
}

function filePart(p: UiPart): MessagePart {
  return { type: "file", mediaType: p.mediaType as string, ...(p.filename !== undefined ? { filename: p.filename as string } : {}), data: p.url as string, ...meta(p.providerMetadata) };
}

/** One step of an assistant message: its assistant message, then a tool message with the results. */
function convertBlock(block: UiPart[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const content: MessagePart[] = [];
  for (const p of block) {
    if (p.type === "text") content.push({ type: "text", text: p.text as string, ...meta(p.providerMetadata) });
    else if (p.type === "file") content.push(filePart(p));
    else if (p.type === "reasoning") content.push({ type: "reasoning", text: p.text as string, ...meta(p.providerMetadata) });
    else if (isToolPart(p) && p.state !== "input-streaming") {
      const name = toolName(p);
      const callMeta = p.callProviderMetadata ?? (p.state === "output-error" ? p.resultProviderMetadata : undefined);
      const input = p.state === "output-error" ? (p.input ?? p.rawInput) : p.input;
      content.push({ type: "tool-call", toolCallId: p.toolCallId as string, toolName: name, input, ...(p.providerExecuted !== undefined ? { providerExecuted: p.providerExecuted as boolean } : {}), ...meta(callMeta) });
      const approval = p.approval as { id: string; approved?: boolean; reason?: string; signature?: string; inputSchemaInput?: unknown } | undefined;
      if (approval != null) {
        content.push({
          type: "tool-approval-request",
          approvalId: approval.id,
          toolCallId: p.toolCallId as string,
          ...(Object.prototype.hasOwnProperty.call(approval, "inputSchemaInput") ? { inputSchemaInput: approval.inputSchemaInput } : {}),
          ...(approval.signature != null ? { signature: approval.signature } : {}),
        });
      }
      // A provider-executed tool's result belongs to the assistant's own content.
      if (p.providerExecuted === true && p.state !== "approval-responded" && (p.state === "output-available" || p.state === "output-error")) {
        content.push({
          type: "tool-result",
          toolCallId: p.toolCallId as string,
          toolName: name,
          output: modelOutput(p, p.state === "output-error" ? p.errorText : p.output, p.state === "output-error" ? "json" : "none"),
          ...meta(p.resultProviderMetadata ?? p.callProviderMetadata),
        });
      }
    }
    // data-* parts: dropped without convertDataPart, as in the AI SDK.
  }
  if (content.length > 0) out.push(withParts("assistant", content));

  const results: MessagePart[] = [];
  for (const p of block) {
    if (!isToolPart(p)) continue;
    const approval = p.approval as { id: string; approved?: boolean; reason?: string } | undefined;
    if (p.providerExecuted === true && approval?.approved == null) continue;
    if (approval?.approved != null) {
      results.push({ type: "tool-approval-response", approvalId: approval.id, approved: approval.approved, ...(approval.reason !== undefined ? { reason: approval.reason } : {}), ...(p.providerExecuted !== undefined ? { providerExecuted: p.providerExecuted as boolean } : {}) });
    }
    if (p.providerExecuted === true) continue;
    if (p.state === "output-denied") {
      results.push({ type: "tool-result", toolCallId: p.toolCallId as string, toolName: toolName(p), output: { type: "error-text", value: approval?.reason ?? "Tool call execution denied." }, ...meta(p.callProviderMetadata) });
    } else if (p.state === "output-error" || p.state === "output-available") {
      const output = modelOutput(p, p.state === "output-error" ? p.errorText : p.output, p.state === "output-error" ? "text" : "none");
      results.push({ type: "tool-result", toolCallId: p.toolCallId as string, toolName: toolName(p), output, ...meta(p.callProviderMetadata) });
    }
  }
  if (results.length > 0) out.push({ role: "tool", content: partsText("tool", results), parts: results });
  return out;
}

/** The AI SDK's `createToolModelOutput` with no tool definitions at hand. */
function modelOutput(p: UiPart, output: unknown, errorMode: "none" | "text" | "json"): ToolResultOutput {
  if (errorMode === "text") return { type: "error-text", value: errorMessage(output) };
  if (errorMode === "json") return { type: "error-json", value: output === undefined ? null : output };
  // A static tool saved as dynamic because it is gone from the app (`dynamic: false`): its raw output is not shown.
  if (p.type === "dynamic-tool" && p.dynamic === false) return { type: "text", value: "Tool output omitted because the tool is no longer available." };
  return typeof output === "string" ? { type: "text", value: output } : { type: "json", value: output === undefined ? null : output };
}

/** The AI SDK's `getErrorMessage`. */
function errorMessage(error: unknown): string {
  if (error == null) return "unknown error";
  if (typeof error === "string") return error;
  if (error instanceof Error) return error.message;
  return JSON.stringify(error);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
