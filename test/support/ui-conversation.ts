import type { ChatMessage } from "../../shared/case/agent.ts";
import { toChatMessages } from "../../shared/datasets/ui-messages.ts";

/**
 * A conversation saved as AI SDK UI messages (what Exulu stores): a user sends a receipt image, the
 * assistant reasons, looks the order up (a tool call with its result) and answers, and the user asks
 * again. As a case input it is what a dataset row's `inputs` becomes.
 */
export const UI_CONVERSATION = [
  {
    id: "u1",
    role: "user",
    parts: [
      { type: "text", text: "Where is order A-1001?" },
      { type: "file", mediaType: "image/png", filename: "receipt.png", url: "data:image/png;base64,iVBORw0KGgo=" },
    ],
  },
  {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "reasoning", text: "Look the order up." },
      { type: "tool-lookup_order", toolCallId: "call_1", state: "output-available", input: { order: "A-1001" }, output: { status: "delivered" } },
      { type: "step-start" },
      { type: "text", text: "It was delivered." },
    ],
  },
  { id: "u2", role: "user", parts: [{ type: "text", text: "Can I return it?" }] },
];

/** {@link UI_CONVERSATION} as the case input a dataset row gives. */
export function uiConversationInput(): readonly ChatMessage[] {
  return toChatMessages(UI_CONVERSATION);
}

/** Checks, on a chat completions request's messages, that the conversation kept its structure. */
export function structuredChatMessages(messages: ReadonlyArray<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>): {
  image: boolean;
  call: { id: string; name: string; arguments: unknown } | null;
  result: { toolCallId: string; content: unknown } | null;
  roles: string[];
} {
  const user = messages.find((m) => m.role === "user" && Array.isArray(m.content));
  const assistant = messages.find((m) => m.role === "assistant" && m.tool_calls?.length);
  const tool = messages.find((m) => m.role === "tool");
  const call = assistant?.tool_calls?.[0];
  return {
    image: Boolean((user?.content as Array<{ type: string }> | undefined)?.some((p) => p.type === "image_url")),
    call: call ? { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) } : null,
    result: tool ? { toolCallId: tool.tool_call_id!, content: tool.content } : null,
    roles: messages.map((m) => m.role),
  };
}
