import type { ChatCompletionChunk, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Agent, CaseInput, RunContext, RunEvent, RunMessage, RunMetrics, RunOutput, ToolExecution } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { EventChannel } from "../runtime/event-channel.ts";
import { ChatCompletionsClient, usageOf, type ChatBody } from "./openai-chat.ts";
import { executeToolCall, functionDefinition, isToolkit, type Tool, type Toolkit } from "./tool.ts";
import { toChatMessages } from "./chat-input.ts";
import { rejectUnknownOptions } from "../../shared/option-keys.ts";
import { AGENT_OPTION_KEYS, toolLoopConfig, type OpenAIAgentOptions, type ToolLoopConfig } from "./tool-loop-config.ts";

/**
 * A small tool-calling agent over the OpenAI-compatible chat API, for people with no agent
 * framework: a prompt (instructions) plus tools declared with zod. It runs the usual loop (model
 * -> tool calls -> tool results -> model) and reports what ran, so reliability can grade it.
 *
 * Events it streams: `run_started`, `content_delta` (with `stream: true`), `model_response` (one
 * per model turn, with its usage), `tool_call_started`, `tool_call_completed`, events its tools
 * emit, then the final output.
 */

// The agent's options and their compile step (validation, defaults) live in tool-loop-config.ts.
export { AGENT_OPTION_KEYS, DEFAULT_MAX_TURNS, toolLoopConfig, type OpenAIAgentOptions, type ToolLoopConfig } from "./tool-loop-config.ts";

/** The built-in agent; see {@link openAIAgent}. */
export class OpenAIAgent implements Agent {
  readonly id: string | null;
  readonly #config: ToolLoopConfig;

  constructor(options: OpenAIAgentOptions) {
    rejectUnknownOptions("openAIAgent", options, AGENT_OPTION_KEYS);
    if (options?.id !== undefined && options.id !== null && typeof options.id !== "string") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `openAIAgent: id must be a string, got ${pyRepr(options.id)}`, { field: "id" });
    }
    this.#config = toolLoopConfig("openAIAgent", options);
    this.id = options.id ?? null;
  }

  /** The model name. */
  get model(): string {
    return this.#config.client.model;
  }

  run(input: CaseInput, context: RunContext): AsyncIterable<RunEvent> {
    const config = this.#config;
    return (async function* () {
      const output = yield* runToolLoop(config, input, context);
      yield { type: "run_output", output };
    })();
  }
}

/**
 * Runs the model/tool loop once and returns the final output (the caller yields it). `extraTools`
 * join the configured ones for this run only (a team's delegation tool).
 */
export async function* runToolLoop(config: ToolLoopConfig, input: CaseInput, context: RunContext, extraTools: readonly Tool[] = []): AsyncGenerator<RunEvent, RunOutput> {
  const { client } = config;
  const channel = new EventChannel<RunEvent>();
  const tools = new Map<string, Tool>();
  for (const t of [...extraTools, ...(yield* channel.until(expandTools(config.tools, context.signal)))]) tools.set(t.name, t);
  const definitions = [...tools.values()].map(functionDefinition);

  const messages: ChatCompletionMessageParam[] = [];
  if (config.instructions) messages.push({ role: "system", content: config.instructions });
  messages.push(...toChatMessages(input));
  const transcript: RunMessage[] = [];
  const executions: ToolExecution[] = [];
  const metrics: RunMetrics = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const toolContext = { signal: context.signal, sessionId: context.sessionId, deadline: context.deadline, emit: (event: RunEvent) => channel.push(event) };
  const call = { signal: context.signal, deadline: context.deadline };
  let lastContent = "";

  yield { type: "run_started", model: client.model };
  for (let turn = 1; turn <= config.maxTurns; turn++) {
    const body: ChatBody = { messages, ...(definitions.length > 0 ? { tools: definitions } : {}), ...config.extra };
    let turnResult: AssistantTurn;
    if (config.stream) {
      turnResult = yield* streamTurn(client, body, call);
    } else {
      const completion = await client.create(body, call);
      const message = completion.choices[0]?.message;
      turnResult = {
        content: message?.content ?? message?.refusal ?? "",
        toolCalls: (message?.tool_calls ?? []).filter((c) => c.type === "function").map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
        usage: usageOf(completion.usage),
        finishReason: completion.choices[0]?.finish_reason ?? null,
      };
    }
    addUsage(metrics, turnResult.usage);
    lastContent = turnResult.content;
    yield { type: "model_response", turn, finishReason: turnResult.finishReason, usage: turnResult.usage, toolCalls: turnResult.toolCalls.map((c) => c.name) };
    const requested = turnResult.toolCalls.map((c) => ({ id: c.id, function: { name: c.name, arguments: c.arguments } }));
    messages.push({
      role: "assistant",
      content: turnResult.content || null,
      ...(requested.length > 0 ? { tool_calls: requested.map((r) => ({ id: r.id, type: "function" as const, function: r.function })) } : {}),
    } as ChatCompletionMessageParam);
    transcript.push({ role: "assistant", content: turnResult.content, ...(requested.length > 0 ? { toolCalls: requested } : {}) });
    if (turnResult.toolCalls.length === 0) {
      return { content: turnResult.content, status: "completed", tools: executions, messages: transcript, metrics, model: client.model };
    }
    for (const requestedCall of turnResult.toolCalls) {
      const toolArgs = safeParseArgs(requestedCall.arguments);
      yield { type: "tool_call_started", tool: { toolName: requestedCall.name, toolArgs } };
      const outcome = yield* channel.until(executeToolCall(tools, requestedCall.name, requestedCall.arguments, toolContext));
      executions.push(outcome.execution);
      messages.push({ role: "tool", tool_call_id: requestedCall.id, content: outcome.reply });
      transcript.push({ role: "tool", content: outcome.reply });
      yield { type: "tool_call_completed", tool: { ...outcome.execution } };
    }
  }
  yield { type: "run_error", errorType: "MaxTurnsExceeded", error: `no final answer after ${config.maxTurns} model turns` };
  return { content: lastContent, status: "error", tools: executions, messages: transcript, metrics, model: client.model };
}

/** One assistant turn, however it arrived. */
interface AssistantTurn {
  content: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  usage: RunMetrics;
  finishReason: string | null;
}

async function* streamTurn(client: ChatCompletionsClient, body: ChatBody, call: { signal: AbortSignal; deadline?: number }): AsyncGenerator<RunEvent, AssistantTurn> {
  const stream = await client.stream({ ...body, stream_options: { include_usage: true } }, call);
  let content = "";
  let refusal = "";
  let usage: RunMetrics = {};
  let finishReason: string | null = null;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
    if (chunk.usage) usage = usageOf(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (delta.content) {
        content += delta.content;
        yield { type: "content_delta", delta: delta.content };
      }
      if (delta.refusal) refusal += delta.refusal;
      for (const tc of delta.tool_calls ?? []) {
        const entry = calls.get(tc.index) ?? { id: "", name: "", arguments: "" };
        if (tc.id) entry.id = tc.id;
        if (tc.function?.name) entry.name += tc.function.name;
        if (tc.function?.arguments) entry.arguments += tc.function.arguments;
        calls.set(tc.index, entry);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
  return { content: content || refusal, toolCalls, usage, finishReason };
}

async function expandTools(entries: ReadonlyArray<Tool | Toolkit>, signal: AbortSignal): Promise<Tool[]> {
  const out: Tool[] = [];
  for (const entry of entries) {
    if (isToolkit(entry)) out.push(...(await entry.tools(signal)));
    else out.push(entry as Tool);
  }
  return out;
}

function safeParseArgs(raw: string): Record<string, unknown> | null {
  try {
    const v: unknown = raw && raw.trim() ? JSON.parse(raw) : {};
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return null;
  }
}

/** Adds `usage` into `total` (input, output, total tokens). */
export function addUsage(total: RunMetrics, usage: RunMetrics | null | undefined): void {
  if (!usage) return;
  total.inputTokens = (total.inputTokens ?? 0) + (usage.inputTokens ?? 0);
  total.outputTokens = (total.outputTokens ?? 0) + (usage.outputTokens ?? 0);
  total.totalTokens = (total.totalTokens ?? 0) + (usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0));
}

/**
 * The built-in tool-calling agent:
 * `openAIAgent({ id: "math-tutor", model: "gpt-5-mini", instructions: "Use the calculator.", tools: [factorial] })`.
 * Connection options as for `openAIJudge` (baseURL, apiKey, retries); `maxTurns` default 10;
 * `stream` default false. Bad options throw a `ConfigError` naming the field.
 */
export function openAIAgent(options: OpenAIAgentOptions): OpenAIAgent {
  return new OpenAIAgent(options);
}
