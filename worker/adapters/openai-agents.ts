import type { Agent as SdkAgent, AgentInputItem, Runner, RunItem, RunStreamEvent } from "@openai/agents";
import type { Agent, CaseInput, RunContext, RunEvent, RunMessage, RunMetrics, RunOutput, ToolExecution } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { outputText } from "../../shared/datasets/ui-messages.ts";
import { importOptional } from "../../shared/runtime/optional-package.ts";

/**
 * An OpenAI Agents SDK (`@openai/agents`) agent as an agent under test. Tool calls and their
 * outputs become `tools`; a handoff is a delegation: the leader's `transfer_to_<agent>` call is a
 * tool of the leader, and every agent handed to is a team member whose own tool calls and answer
 * go in `memberResponses` (so reliability sees them, as it sees an Agno team's members). Streamed
 * events go to `onRunEvent` as small plain objects.
 *
 * ```ts
 * const tutor = wrapOpenAIAgent(new Agent({ name: "math-tutor", tools: [factorial] }));
 * ```
 * Use `team` rather than `agent` in the case when the SDK agent hands off to others.
 */

/** Options of {@link wrapOpenAIAgent}. */
export interface WrapOpenAIAgentOptions {
  /** The id in reports. Default: the SDK agent's `name`. */
  id?: string | null;
  /** The `Runner` to run with (model provider, tracing, ...). Default: the SDK's default runner (`run()`). */
  runner?: Runner | null;
  /** Stream the run and pass its events to `onRunEvent`. Default true. */
  stream?: boolean;
  /** The SDK's turn limit. Default: the SDK's (10). */
  maxTurns?: number | null;
  /** The run context handed to tools. */
  context?: unknown;
}

/** The wrapped agent; see {@link wrapOpenAIAgent}. */
export class OpenAIAgentsAdapter implements Agent {
  readonly id: string | null;
  readonly #agent: SdkAgent<any, any>;
  readonly #options: WrapOpenAIAgentOptions;

  constructor(agent: SdkAgent<any, any>, options: WrapOpenAIAgentOptions = {}) {
    if (!agent || typeof agent !== "object" || typeof (agent as { name?: unknown }).name !== "string") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `wrapOpenAIAgent: agent must be an @openai/agents Agent, got ${pyRepr(agent)}`, { field: "agent" });
    }
    if (options.runner !== undefined && options.runner !== null && typeof (options.runner as { run?: unknown }).run !== "function") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `wrapOpenAIAgent: runner must be an @openai/agents Runner, got ${pyRepr(options.runner)}`, { field: "runner" });
    }
    if (options.maxTurns !== undefined && options.maxTurns !== null && !(Number.isInteger(options.maxTurns) && options.maxTurns >= 1)) {
      throw new ConfigError(ErrorCode.ConfigInvalid, `wrapOpenAIAgent: maxTurns must be a whole number >= 1, got ${pyRepr(options.maxTurns)}`, { field: "maxTurns" });
    }
    this.#agent = agent;
    this.#options = options;
    this.id = options.id ?? agent.name;
  }

  run(input: CaseInput, context: RunContext): AsyncIterable<RunEvent> {
    const agent = this.#agent;
    const options = this.#options;
    return (async function* (): AsyncGenerator<RunEvent> {
      const stream = options.stream ?? true;
      const runOptions = {
        signal: context.signal,
        ...(options.maxTurns ? { maxTurns: options.maxTurns } : {}),
        ...(options.context !== undefined ? { context: options.context } : {}),
      };
      const sdkInput = toAgentInput(input);
      // Loaded on first use: the SDK takes ~0.6 s to import, which a suite without it should not pay per thread.
      const runWith = options.runner
        ? (opts: object) => options.runner!.run(agent, sdkInput, opts as never)
        : async (opts: object) => (await importOptional("@openai/agents", "wrapOpenAIAgent", () => import("@openai/agents"))).run(agent, sdkInput, opts as never);
      if (stream) {
        const result = (await runWith({ ...runOptions, stream: true })) as unknown as AsyncIterable<RunStreamEvent> & { completed: Promise<void>; error: unknown };
        for await (const event of result) yield toPlainEvent(event);
        await result.completed;
        if (result.error) throw result.error;
        yield { type: "run_output", output: toRunOutput(result as never, agent) };
      } else {
        const result = await runWith(runOptions);
        yield { type: "run_output", output: toRunOutput(result as never, agent) };
      }
    })();
  }
}

/** The parts of an SDK run result this adapter reads. */
export interface AgentsRunResultLike {
  newItems: readonly RunItem[];
  finalOutput?: unknown;
  interruptions?: readonly unknown[];
  state?: { usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number; requests?: number } };
}

interface Bucket {
  tools: ToolExecution[];
  messages: RunMessage[];
  content: string;
  pending: Map<string, { toolName: string; toolArgs: Record<string, unknown> | null }>;
}

/**
 * Maps an SDK run result onto a {@link RunOutput}: the starting agent's items are the output's
 * own; every other agent that ran (after a handoff) is a member. Pure.
 */
export function toRunOutput(result: AgentsRunResultLike, startingAgent: { name: string; model?: unknown }): RunOutput {
  const buckets = new Map<string, Bucket>();
  const bucket = (name: string): Bucket => {
    let b = buckets.get(name);
    if (!b) buckets.set(name, (b = { tools: [], messages: [], content: "", pending: new Map() }));
    return b;
  };
  bucket(startingAgent.name);
  for (const item of result.newItems) {
    const it = item as unknown as {
      type: string;
      agent?: { name: string };
      sourceAgent?: { name: string };
      targetAgent?: { name: string };
      rawItem?: Record<string, unknown>;
      output?: unknown;
    };
    const raw = it.rawItem ?? {};
    const owner = it.agent?.name ?? it.sourceAgent?.name ?? startingAgent.name;
    switch (it.type) {
      case "tool_call_item":
      case "handoff_call_item": {
        const name = String(raw.name ?? raw.type ?? "?");
        const callId = String(raw.callId ?? raw.id ?? "");
        const args = typeof raw.arguments === "string" ? raw.arguments : JSON.stringify(raw.arguments ?? {});
        const b = bucket(owner);
        b.pending.set(callId, { toolName: name, toolArgs: parseArgs(args) });
        b.messages.push({ role: "assistant", content: null, toolCalls: [{ id: callId, function: { name, arguments: args } }] });
        break;
      }
      case "tool_call_output_item":
      case "handoff_output_item": {
        const callId = String(raw.callId ?? "");
        const b = bucket(owner);
        const call = b.pending.get(callId);
        b.pending.delete(callId);
        const result = it.type === "handoff_output_item" ? `handed off to ${it.targetAgent?.name ?? "?"}` : (it.output ?? raw.output);
        b.tools.push({ toolName: call?.toolName ?? String(raw.name ?? "?"), toolArgs: call?.toolArgs ?? null, result });
        b.messages.push({ role: "tool", content: typeof result === "string" ? result : JSON.stringify(result) });
        if (it.targetAgent) bucket(it.targetAgent.name);
        break;
      }
      case "message_output_item": {
        const content = Array.isArray(raw.content) ? (raw.content as Array<{ type?: string; text?: string; refusal?: string }>) : [];
        const text = content.map((c) => c.text ?? c.refusal ?? "").join("");
        const b = bucket(owner);
        b.content = text;
        b.messages.push({ role: "assistant", content: text });
        break;
      }
      case "tool_approval_item": {
        const b = bucket(owner);
        b.tools.push({ toolName: String(raw.name ?? (it as { toolName?: string }).toolName ?? "?"), toolArgs: parseArgs(String(raw.arguments ?? "")), isPaused: true });
        break;
      }
      default:
        break;
    }
  }
  const leader = bucket(startingAgent.name);
  const memberResponses: RunOutput[] = [...buckets.entries()]
    .filter(([name]) => name !== startingAgent.name)
    .map(([name, b]) => ({ content: b.content, status: "completed", tools: b.tools, messages: b.messages, model: name, agentId: name }));
  const usage = result.state?.usage;
  const metrics: RunMetrics = {};
  if (usage) {
    metrics.inputTokens = usage.inputTokens;
    metrics.outputTokens = usage.outputTokens;
    metrics.totalTokens = usage.totalTokens;
    if (usage.requests !== undefined) metrics.requests = usage.requests;
  }
  const paused = (result.interruptions?.length ?? 0) > 0;
  return {
    content: result.finalOutput ?? leader.content,
    status: paused ? "paused" : "completed",
    tools: leader.tools,
    messages: leader.messages,
    memberResponses,
    metrics,
    model: typeof startingAgent.model === "string" ? startingAgent.model : null,
  };
}

/** A streamed SDK event as a small plain object (agents become names; raw chunks keep type and delta). */
export function toPlainEvent(event: RunStreamEvent): RunEvent {
  const e = event as unknown as { type: string; name?: string; item?: Record<string, unknown>; agent?: { name: string }; data?: Record<string, unknown> };
  if (e.type === "raw_model_stream_event") {
    const data = e.data ?? {};
    return { type: e.type, data: { type: data.type, ...(typeof data.delta === "string" ? { delta: data.delta } : {}) } };
  }
  if (e.type === "agent_updated_stream_event") return { type: e.type, agent: e.agent?.name ?? null };
  if (e.type === "run_item_stream_event") {
    const item = e.item ?? {};
    const raw = (item.rawItem ?? {}) as Record<string, unknown>;
    return {
      type: e.type,
      name: e.name ?? null,
      item: {
        type: item.type,
        agent: (item.agent as { name?: string } | undefined)?.name ?? null,
        ...(raw.name !== undefined ? { toolName: raw.name } : {}),
        ...(raw.arguments !== undefined ? { arguments: raw.arguments } : {}),
        ...(item.output !== undefined ? { output: item.output } : {}),
        ...(item.targetAgent ? { targetAgent: (item.targetAgent as { name?: string }).name } : {}),
      },
    };
  }
  return { type: String(e.type) };
}

/**
 * A case input as SDK input: a string as is, a conversation as message items. Structured messages
 * (`parts`, from AI SDK UI messages) keep their structure: a user's images and files as input
 * parts, an assistant's tool calls as `function_call` items and each tool result as the
 * `function_call_result` answering it (reasoning and provider-executed calls are left out).
 */
export function toAgentInput(input: CaseInput): string | AgentInputItem[] {
  if (typeof input === "string") return input;
  return input.flatMap((m): AgentInputItem[] => {
    if (m.parts && m.role === "tool") {
      return m.parts.flatMap((p) => (p.type === "tool-result" ? [{ type: "function_call_result", callId: p.toolCallId, name: p.toolName, status: "completed", output: outputText(p.output) } as AgentInputItem] : []));
    }
    if (m.parts && m.role === "assistant") {
      const items: AgentInputItem[] = m.content ? [{ role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] } as AgentInputItem] : [];
      for (const p of m.parts) {
        if (p.type === "tool-call" && p.providerExecuted !== true) items.push({ type: "function_call", callId: p.toolCallId, name: p.toolName, status: "completed", arguments: JSON.stringify(p.input ?? {}) } as AgentInputItem);
      }
      return items;
    }
    if (m.parts && m.role === "user") {
      const content = m.parts.flatMap((p): object[] => {
        if (p.type === "text") return [{ type: "input_text", text: p.text }];
        if (p.type === "image") return [{ type: "input_image", image: p.image }];
        if (p.type === "file" && p.mediaType.startsWith("image/")) return [{ type: "input_image", image: p.data }];
        if (p.type === "file") return [{ type: "input_file", file: /^https?:/i.test(p.data) ? { url: p.data } : p.data, ...(p.filename ? { filename: p.filename } : {}) }];
        return [];
      });
      return [{ role: "user", content } as AgentInputItem];
    }
    if (m.role === "assistant") return [{ role: "assistant", status: "completed", content: [{ type: "output_text", text: m.content }] } as AgentInputItem];
    if (m.role === "system") return [{ role: "system", content: m.content } as AgentInputItem];
    return [{ role: "user", content: m.role === "user" ? m.content : `[${m.role}] ${m.content}` } as AgentInputItem];
  });
}

function parseArgs(raw: string): Record<string, unknown> | null {
  try {
    const v: unknown = raw.trim() ? JSON.parse(raw) : {};
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return null;
  }
}

/**
 * Wraps an `@openai/agents` Agent as an agent (or, with handoffs, a team) under test:
 * `wrapOpenAIAgent(agent, { runner, stream, maxTurns })`. Bad input throws a `ConfigError`.
 */
export function wrapOpenAIAgent(agent: SdkAgent<any, any>, options: WrapOpenAIAgentOptions = {}): OpenAIAgentsAdapter {
  return new OpenAIAgentsAdapter(agent as SdkAgent<any, any>, options);
}
