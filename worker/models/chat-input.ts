import type { ChatCompletionContentPart, ChatCompletionMessageParam, ChatCompletionMessageToolCall } from "openai/resources/chat/completions";
import type { CaseInput, ChatMessage, MessagePart } from "../../shared/case/agent.ts";
import { outputText } from "../../shared/datasets/ui-messages.ts";

/**
 * A case input as OpenAI chat completions messages (the built-in agent's). Structured messages
 * (`ChatMessage.parts`, from AI SDK UI messages) keep their structure where the chat API has one:
 * a user's images and files as content parts, an assistant's tool calls as `tool_calls`, each tool
 * result as a `tool` message answering its call. Reasoning has no place in the chat API's input and
 * is left out; provider-executed tool calls and approval requests too (the chat API runs neither).
 * Pure; type imports only.
 */

/** System, developer, user and assistant turns keep their role; other roles are shown to the model as user text. */
export function toChatMessages(input: CaseInput): ChatCompletionMessageParam[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  return input.flatMap((m): ChatCompletionMessageParam[] => {
    if (m.parts && (m.role === "user" || m.role === "assistant" || m.role === "tool")) return structured(m, m.parts);
    if (m.role === "system" || m.role === "developer" || m.role === "user") return [{ role: m.role as "system" | "developer" | "user", content: m.content }];
    if (m.role === "assistant") return [{ role: "assistant", content: m.content }];
    return [{ role: "user", content: `[${m.role}] ${m.content}` }];
  });
}

function structured(m: ChatMessage, parts: readonly MessagePart[]): ChatCompletionMessageParam[] {
  if (m.role === "tool") {
    return parts.flatMap((p): ChatCompletionMessageParam[] => (p.type === "tool-result" ? [{ role: "tool", tool_call_id: p.toolCallId, content: outputText(p.output) }] : []));
  }
  if (m.role === "assistant") {
    const calls: ChatCompletionMessageToolCall[] = parts.flatMap((p): ChatCompletionMessageToolCall[] =>
      p.type === "tool-call" && p.providerExecuted !== true ? [{ id: p.toolCallId, type: "function", function: { name: p.toolName, arguments: JSON.stringify(p.input ?? {}) } }] : [],
    );
    return [{ role: "assistant", content: m.content || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
  }
  const content: ChatCompletionContentPart[] = [];
  for (const p of parts) {
    if (p.type === "text") content.push({ type: "text", text: p.text });
    else if (p.type === "image") content.push({ type: "image_url", image_url: { url: asUrl(p.image, p.mediaType ?? "image/*") } });
    else if (p.type === "file" && p.mediaType.startsWith("image/")) content.push({ type: "image_url", image_url: { url: asUrl(p.data, p.mediaType) } });
    else if (p.type === "file" && !/^https?:/i.test(p.data)) content.push({ type: "file", file: { file_data: asUrl(p.data, p.mediaType), ...(p.filename ? { filename: p.filename } : {}) } });
    // A file behind a web URL: the chat API takes no file URL, so the model is told where it is.
    else if (p.type === "file") content.push({ type: "text", text: `[file${p.filename ? ` ${p.filename}` : ""} (${p.mediaType}): ${p.data}]` });
  }
  return [{ role: "user", content }];
}

/** A URL as is (`https:`, `data:`), base64 bytes as a `data:` URL. */
function asUrl(data: string, mediaType: string): string {
  return /^[a-z][a-z0-9+.-]*:/i.test(data) ? data : `data:${mediaType};base64,${data}`;
}
