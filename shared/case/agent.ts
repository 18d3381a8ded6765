// runs in: both
import type { LimitedFetch, ProviderLimiter } from "../providers/limiter.ts";

/**
 * The agent-under-test contract. An agent (or a team: the same contract used through a case's
 * `team` field) is any object with a `run` method. evalfleet never needs a framework: adapters
 * for popular agent frameworks map their outputs onto {@link RunOutput}.
 */

/**
 * A chat message given to the agent as input (multi-turn cases). `content` is always the
 * message's text, so an agent that reads text needs nothing else. A message with more than one
 * text (files, reasoning, tool calls and results: what AI SDK UI messages carry) also has
 * `parts`, its content as the AI SDK's model message content; the built-in agents and adapters
 * pass those on.
 */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  /**
   * The text: the text parts joined with a newline (a system message's joined as the AI SDK
   * joins them, with nothing between); a tool message's results one per line (`tool: value`).
   */
  content: string;
  /**
   * The content as AI SDK model message parts (`ModelMessage["content"]` of `ai`), in order:
   * text and reasoning as written, files, tool calls, tool results. Absent for a message that
   * is one plain text (a string and one text part mean the same to a model).
   */
  parts?: readonly MessagePart[];
  /** Provider-specific options of the message (a system message's, from its text parts' provider metadata). */
  providerOptions?: ProviderOptions;
  /** The id of the UI message it was converted from (one UI message may give several messages). */
  id?: string;
  /** The metadata of the UI message it was converted from, as given. */
  metadata?: unknown;
}

/** Provider-specific options or metadata, by provider name (the AI SDK's `ProviderOptions`). */
export type ProviderOptions = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/** The output of a tool, as a model sees it (the AI SDK's `ToolResultOutput`). */
export type ToolResultOutput =
  | { type: "text" | "error-text"; value: string; providerOptions?: ProviderOptions }
  | { type: "json" | "error-json"; value: unknown; providerOptions?: ProviderOptions }
  | { type: "execution-denied"; reason?: string; providerOptions?: ProviderOptions }
  | { type: "content"; value: readonly Readonly<Record<string, unknown>>[]; providerOptions?: ProviderOptions };

/**
 * One part of a message's content, as the AI SDK's model messages have them: a user message holds
 * text, images and files; an assistant message text, reasoning, files, tool calls (and the results
 * and approval requests of provider-executed tools); a tool message tool results and approval
 * responses.
 */
export type MessagePart =
  | { type: "text"; text: string; providerOptions?: ProviderOptions }
  | { type: "reasoning"; text: string; providerOptions?: ProviderOptions }
  | { type: "image"; image: string; mediaType?: string; providerOptions?: ProviderOptions }
  /** `data`: a URL (`https:`, or a `data:` URL holding the bytes) or base64 text. */
  | { type: "file"; data: string; mediaType: string; filename?: string; providerOptions?: ProviderOptions }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean; providerOptions?: ProviderOptions }
  | { type: "tool-result"; toolCallId: string; toolName: string; output: ToolResultOutput; providerOptions?: ProviderOptions }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string; signature?: string; inputSchemaInput?: unknown }
  | { type: "tool-approval-response"; approvalId: string; approved: boolean; reason?: string; providerExecuted?: boolean };

/** What a case sends to the agent: one prompt, or a conversation. */
export type CaseInput = string | readonly ChatMessage[];

/**
 * Run status values. A missing status means `completed`. Only `completed` runs are graded
 * (an allow-list: paused and cancelled content is placeholder text).
 */
export const RunStatus = {
  Pending: "pending",
  Running: "running",
  Completed: "completed",
  Paused: "paused",
  Cancelled: "cancelled",
  Error: "error",
  Regenerated: "regenerated",
} as const;
/** A {@link RunStatus} value, or another string a framework reports. */
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus] | (string & {});

/** One tool execution: what actually ran, which is what reliability grades. */
export interface ToolExecution {
  toolName?: string | null;
  toolArgs?: Record<string, unknown> | null;
  result?: unknown;
  /** Truthy when the call failed; `null`/`undefined`/`false` count as clean. */
  toolCallError?: unknown;
  /** The call waits for a human (confirmation, user input, external execution). */
  isPaused?: boolean;
}

/** A tool call the model requested (it may have been refused, so it may never have run). */
export interface RequestedToolCall {
  id?: string;
  function: { name: string; arguments?: string };
}

/** A message of the run's transcript. */
export interface RunMessage {
  role: string;
  content?: unknown;
  toolCalls?: readonly RequestedToolCall[] | null;
  /** The message was replayed from an earlier session; its requests are not evidence. */
  fromHistory?: boolean;
}

/** Usage figures an agent may report. */
export interface RunMetrics {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Cost in US dollars. */
  costUsd?: number;
  [key: string]: unknown;
}

/** The final output of an agent or team run. */
export interface RunOutput {
  content?: unknown;
  /** Missing means `completed`. */
  status?: RunStatus | null;
  tools?: readonly ToolExecution[] | null;
  /** Nested outputs of team members (any depth). */
  memberResponses?: readonly RunOutput[] | null;
  messages?: readonly RunMessage[] | null;
  metrics?: RunMetrics | null;
  /** Which model produced it (free text, for reports). */
  model?: string | null;
  /**
   * Which agent produced it: a team sets it on each member's output, so `expected_agent_tools`
   * entries written `member/tool` can name the member. Optional.
   */
  agentId?: string | null;
  /**
   * The knowledge sources (ids or names of the collections, indexes or documents) the agent
   * retrieved from during this run; a team's members' sources count too. Graded by a case's
   * `expectedKnowledgeSources` (`expected_knowledge_sources` in datasets). Optional.
   */
  knowledgeSources?: readonly string[] | null;
}

/** An event streamed by the agent. `run_output` carries the final output and is never forwarded to hooks. */
export type RunEvent =
  | { type: "run_output"; output: RunOutput }
  | { type: "run_error"; error?: string | null; content?: string | null; errorType?: string | null }
  | { type: string; [key: string]: unknown };

/** What `run` receives besides the input. */
export interface RunContext {
  /** Fires at the case deadline or on suite cancellation: pass it to fetch and model clients. */
  signal: AbortSignal;
  /** `eval-<case name>-<8 hex>`: a fresh session per case keeps eval traffic out of real history. */
  sessionId: string;
  /**
   * The case deadline (epoch milliseconds), when the runner knows it: a client that retries can
   * give up at once when a server's Retry-After would end past it. `signal` fires at it anyway.
   */
  deadline?: number;
  /**
   * The provider limiter of the run (docs/providers.md): `await ctx.limiter.acquire("my-key",
   * { tokens: 800 })` waits for a permit under the key's shared limits; release it with what the
   * provider said (`permit.release({ status, tokens })`). One per process, fleet-wide in
   * distributed mode. Set by the runner for every case (optional only for contexts built by hand).
   */
  limiter?: ProviderLimiter;
  /**
   * A `fetch` that waits for a permit of the URL's host (or `init.limitKey`) and tells the limiter
   * the answer's status and `x-ratelimit-*` / `Retry-After` headers. Set by the runner for every case.
   */
  fetch?: LimitedFetch;
  /**
   * The W3C `traceparent` of the case's run span, when tracing is on (OTEL_* variables): an agent
   * that calls another service passes it on, so that service's spans join the case's trace. In
   * the same process the span is also active: `trace.getActiveSpan()` of `@opentelemetry/api`
   * returns it and an agent's own spans nest under it. Absent when tracing is off.
   */
  traceparent?: string;
  /**
   * `fn` as a recorded tool: `const getWeather = ctx.tool("get_weather", (args) => api(args))`.
   * Under `--record` each call's argument and result (or thrown message) go into the case's
   * cassette; under `--replay` a call with the same name and argument is answered from it without
   * calling `fn` (a call it lacks fails the case). Otherwise `fn` as is. Set by the runner for every case.
   */
  tool?: <A, R>(name: string, fn: (args: A) => R | Promise<R>) => (args: A) => Promise<R>;
}

/** The agent under test. */
export interface Agent {
  /** Used as the case's `agent_id`; a falsy id falls back to the case name. */
  id?: string | null;
  run(input: CaseInput, context: RunContext): Promise<RunOutput> | AsyncIterable<RunEvent>;
}

/** A team is the same contract; its member outputs go in `memberResponses`. */
export type Team = Agent;

/** True when `value` is an async iterable (a stream of events). */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === "function";
}
