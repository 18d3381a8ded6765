/**
 * The agent-under-test contract. An agent (or a team: the same contract used through a case's
 * `team` field) is any object with a `run` method. evalfleet never needs a framework: adapters
 * for popular agent frameworks map their outputs onto {@link RunOutput}.
 */

/** A chat message given to the agent as input (multi-turn cases). */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  content: string;
}

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
