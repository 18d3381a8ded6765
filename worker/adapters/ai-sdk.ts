import type { ModelMessage } from "ai";
import type { Agent, CaseInput, RunContext, RunEvent, RunMessage, RunMetrics, RunOutput, ToolExecution } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode, errorMessage, errorName } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { EventChannel } from "../runtime/event-channel.ts";

/**
 * The Vercel AI SDK as an agent under test. Wrap a `generateText`/`streamText` call, or an AI SDK
 * `Agent` (such as `ToolLoopAgent`): tool results and tool errors become `tools` (what reliability
 * grades), the requested calls go in `messages`, each step streams as an event, and the total
 * usage becomes `metrics`.
 *
 * ```ts
 * const tutor = wrapAiSdk((call) => generateText({ model, tools: { factorial }, stopWhen: stepCountIs(5), ...call }), { id: "math-tutor" });
 * ```
 * `call` holds `messages` (the case input), `abortSignal` (the case's) and `onStepFinish` (so
 * steps stream while `generateText` runs): spread it last.
 */

/** What the wrapped function receives: spread it into `generateText`/`streamText`. */
export interface AiSdkCall {
  messages: ModelMessage[];
  abortSignal: AbortSignal;
  onStepFinish: (step: AiSdkStep) => void;
}

/** The parts of an AI SDK step this adapter reads. */
export interface AiSdkStep {
  stepNumber?: number;
  text: string;
  content: ReadonlyArray<{ type: string; toolCallId?: string; toolName?: string; input?: unknown; output?: unknown; error?: unknown }>;
  finishReason?: string;
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
}

/** The parts of a `generateText` result (or an awaited `streamText` result) this adapter reads. */
export interface AiSdkResult {
  text: string;
  steps: readonly AiSdkStep[];
  totalUsage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
  response?: { modelId?: string };
}

/** The parts of a `streamText` result this adapter reads. */
export interface AiSdkStreamResult {
  fullStream: AsyncIterable<{ type: string; [key: string]: unknown }>;
  text: PromiseLike<string>;
  steps: PromiseLike<readonly AiSdkStep[]>;
  totalUsage: PromiseLike<AiSdkResult["totalUsage"]>;
  response: PromiseLike<{ modelId?: string }>;
}

/** A function that runs one AI SDK call. */
export type AiSdkRunFunction = (call: AiSdkCall) => PromiseLike<unknown> | AiSdkStreamResult;

/** An AI SDK `Agent` (`version: "agent-v1"`, e.g. `ToolLoopAgent`). */
export interface AiSdkAgentLike {
  readonly version: "agent-v1";
  readonly id?: string | undefined;
  generate(options: never): PromiseLike<unknown>;
  stream(options: never): PromiseLike<unknown>;
}

/** Options of {@link wrapAiSdk}. */
export interface WrapAiSdkOptions {
  /** The id in reports. Default: the AI SDK agent's id, else none (the case name). */
  id?: string | null;
  /** For an AI SDK `Agent`: call `stream()` rather than `generate()`. Default false. */
  stream?: boolean;
}

/** An AI SDK call or agent as an evalfleet {@link Agent}; see {@link wrapAiSdk}. */
export class AiSdkAgent implements Agent {
  readonly id: string | null;
  readonly #invoke: (call: AiSdkCall) => PromiseLike<unknown> | unknown;

  constructor(source: AiSdkRunFunction | AiSdkAgentLike, options: WrapAiSdkOptions = {}) {
    if (typeof source === "function") {
      this.#invoke = source;
    } else if (source && typeof source === "object" && typeof source.generate === "function" && typeof source.stream === "function") {
      const agent = source;
      this.#invoke = options.stream ? (call) => agent.stream(call as never) : (call) => agent.generate(call as never);
    } else {
      throw new ConfigError(
        ErrorCode.ConfigInvalid,
        `wrapAiSdk: source must be a function (call) => generateText({...call}) or an AI SDK Agent with generate() and stream(), got ${pyRepr(source)}`,
        { field: "source" },
      );
    }
    if (options.id !== undefined && options.id !== null && typeof options.id !== "string") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `wrapAiSdk: id must be a string, got ${pyRepr(options.id)}`, { field: "id" });
    }
    this.id = options.id ?? (typeof source === "object" && typeof source.id === "string" ? source.id : null);
  }

  run(input: CaseInput, context: RunContext): AsyncIterable<RunEvent> {
    const invoke = this.#invoke;
    return (async function* (): AsyncGenerator<RunEvent> {
      const channel = new EventChannel<RunEvent>();
      let streaming = false;
      const call: AiSdkCall = {
        messages: toModelMessages(input),
        abortSignal: context.signal,
        // generateText calls this as each step ends, so steps stream while it runs. streamText's
        // own parts are richer; its step callbacks are ignored to avoid duplicates.
        onStepFinish: (step) => {
          if (!streaming) channel.push(stepEvent(step));
        },
      };
      const resolved = yield* channel.until(Promise.resolve(invoke(call)));
      if (isStreamResult(resolved)) {
        streaming = true;
        let failure: unknown;
        for await (const part of resolved.fullStream) {
          if (part.type === "error") {
            failure = part.error;
            continue;
          }
          yield streamPartEvent(part);
        }
        if (context.signal.aborted) throw context.signal.reason;
        if (failure !== undefined) {
          yield { type: "run_error", errorType: errorName(failure), error: errorMessage(failure) };
          return;
        }
        const [text, steps, totalUsage, response] = await Promise.all([resolved.text, resolved.steps, resolved.totalUsage, resolved.response]);
        yield { type: "run_output", output: toRunOutput({ text, steps, totalUsage, response }) };
        return;
      }
      if (!isGenerateResult(resolved)) {
        throw new TypeError(`wrapAiSdk: the wrapped call returned ${pyRepr(resolved)}, not a generateText or streamText result`);
      }
      yield { type: "run_output", output: toRunOutput(resolved) };
    })();
  }
}

/** Maps an AI SDK result to a {@link RunOutput}. Pure. */
export function toRunOutput(result: AiSdkResult): RunOutput {
  const tools: ToolExecution[] = [];
  const messages: RunMessage[] = [];
  let paused = false;
  const steps = result.steps ?? [];
  steps.forEach((step, i) => {
    const calls = step.content.filter((p) => p.type === "tool-call");
    messages.push({
      role: "assistant",
      content: step.text,
      ...(calls.length > 0 ? { toolCalls: calls.map((c) => ({ id: c.toolCallId, function: { name: String(c.toolName), arguments: JSON.stringify(c.input ?? {}) } })) } : {}),
    });
    for (const part of step.content) {
      if (part.type === "tool-result") tools.push({ toolName: part.toolName ?? null, toolArgs: asArgs(part.input), result: part.output });
      else if (part.type === "tool-error") tools.push({ toolName: part.toolName ?? null, toolArgs: asArgs(part.input), toolCallError: errorText(part.error) });
      else if (part.type === "tool-approval-request" && i === steps.length - 1) paused = true;
    }
  });
  const usage = result.totalUsage;
  const metrics: RunMetrics = {};
  if (usage?.inputTokens !== undefined) metrics.inputTokens = usage.inputTokens;
  if (usage?.outputTokens !== undefined) metrics.outputTokens = usage.outputTokens;
  if (usage?.totalTokens !== undefined) metrics.totalTokens = usage.totalTokens;
  return { content: result.text, status: paused ? "paused" : "completed", tools, messages, metrics, model: result.response?.modelId ?? null };
}

/**
 * A case input as AI SDK model messages. A structured message (`parts`, from AI SDK UI messages)
 * is given as it was converted: its parts are the model message's content.
 */
export function toModelMessages(input: CaseInput): ModelMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  return input.map((m): ModelMessage => {
    const options = m.providerOptions ? { providerOptions: m.providerOptions } : {};
    if (m.parts && (m.role === "user" || m.role === "assistant" || m.role === "tool")) return { role: m.role, content: m.parts, ...options } as unknown as ModelMessage;
    if (m.role === "system") return { role: "system", content: m.content, ...options } as ModelMessage;
    if (m.role === "assistant") return { role: "assistant", content: m.content, ...options } as ModelMessage;
    if (m.role === "user") return { role: "user", content: m.content, ...options } as ModelMessage;
    return { role: "user", content: `[${m.role}] ${m.content}` };
  });
}

/** The event for a finished step of a non-streaming call. */
function stepEvent(step: AiSdkStep): RunEvent {
  return {
    type: "finish-step",
    stepNumber: step.stepNumber ?? null,
    finishReason: step.finishReason ?? null,
    usage: step.usage ? { inputTokens: step.usage.inputTokens, outputTokens: step.usage.outputTokens, totalTokens: step.usage.totalTokens } : null,
    toolCalls: step.content.filter((p) => p.type === "tool-call").map((p) => p.toolName),
  };
}

const PART_FIELDS = ["id", "text", "delta", "toolCallId", "toolName", "input", "output", "finishReason", "usage", "totalUsage"] as const;

/** A `fullStream` part as a small, plain event (no request bodies or provider metadata). */
function streamPartEvent(part: { type: string; [key: string]: unknown }): RunEvent {
  const event: Record<string, unknown> = { type: part.type };
  for (const field of PART_FIELDS) if (part[field] !== undefined) event[field] = part[field];
  if (part.type === "tool-error") event.error = errorText(part.error);
  return event as RunEvent;
}

function isStreamResult(value: unknown): value is AiSdkStreamResult {
  return value !== null && typeof value === "object" && "fullStream" in value;
}

function isGenerateResult(value: unknown): value is AiSdkResult {
  return value !== null && typeof value === "object" && Array.isArray((value as AiSdkResult).steps) && typeof (value as AiSdkResult).text === "string";
}

function asArgs(input: unknown): Record<string, unknown> | null {
  if (input === undefined || input === null) return null;
  return typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : { value: input };
}

function errorText(error: unknown): string {
  return error instanceof Error || (error && typeof error === "object" && "message" in error) ? `${errorName(error)}: ${errorMessage(error)}` : String(error ?? "tool error");
}

/**
 * Wraps a Vercel AI SDK call or `Agent` as an agent under test:
 * `wrapAiSdk((call) => generateText({ model, tools, ...call }), { id })`,
 * `wrapAiSdk((call) => streamText({ model, tools, ...call }))`, or `wrapAiSdk(new ToolLoopAgent({...}), { stream: true })`.
 */
export function wrapAiSdk(source: AiSdkRunFunction | AiSdkAgentLike, options: WrapAiSdkOptions = {}): AiSdkAgent {
  return new AiSdkAgent(source, options);
}
