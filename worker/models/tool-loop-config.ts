import { ConfigError, ErrorCode } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { optionKeys } from "../../shared/option-keys.ts";
import { ChatCompletionsClient, resolveConnection, type OpenAIConnectionOptions } from "./openai-chat.ts";
import { isToolkit, validateTool, type Tool, type Toolkit } from "./tool.ts";

/**
 * The options of the built-in agent (`openAIAgent`) and team (`openAITeam`), and their one compile
 * step: {@link toolLoopConfig} checks every option (a bad one is a ConfigError naming it), applies
 * the defaults and builds the model client, so the tool loop (openai-agent.ts) reads a complete
 * {@link ToolLoopConfig}. The config module of these agents.
 */

/** Default cap on model turns per run. */
export const DEFAULT_MAX_TURNS = 10;

/** Options of {@link openAIAgent}. */
export interface OpenAIAgentOptions extends OpenAIConnectionOptions {
  /** The agent's id in reports (`agent_id`). Default: none (the case name is used). */
  id?: string | null;
  /** The system prompt. */
  instructions?: string | null;
  /** Tools (see `defineTool`) and toolkits (an MCP client's tools). */
  tools?: ReadonlyArray<Tool<never> | Tool | Toolkit> | null;
  /** Model turns before the run gives up with `MaxTurnsExceeded`. Default 10. */
  maxTurns?: number;
  /** Stream the model's answer (server-sent events) and emit `content_delta` events. Default false. */
  stream?: boolean;
  /** Sampling temperature. Default: not sent. */
  temperature?: number | null;
  /** `reasoning_effort` for reasoning models. Default: not sent. */
  reasoningEffort?: string | null;
  /** `parallel_tool_calls`. Default: not sent (the server's default). */
  parallelToolCalls?: boolean | null;
  /** Extra fields merged into every request body. */
  extraBody?: Record<string, unknown> | null;
}

/** The known keys of {@link openAIAgent}'s options. */
export const AGENT_OPTION_KEYS: ReadonlySet<string> = optionKeys<OpenAIAgentOptions>({
  model: true, baseURL: true, apiKey: true, organization: true, project: true, headers: true, requestTimeoutMs: true, logger: true,
  limitKey: true, maxRetries: true, baseDelayMs: true, maxDelayMs: true, maxRetryAfterMs: true,
  id: true, instructions: true, tools: true, maxTurns: true, stream: true, temperature: true, reasoningEffort: true, parallelToolCalls: true, extraBody: true,
});

/** Settings of one tool loop, after validation. */
export interface ToolLoopConfig {
  client: ChatCompletionsClient;
  instructions: string | null;
  tools: ReadonlyArray<Tool | Toolkit>;
  maxTurns: number;
  stream: boolean;
  extra: Record<string, unknown>;
}

/** Validates agent options into a {@link ToolLoopConfig}; `who` prefixes every error. */
export function toolLoopConfig(who: string, options: OpenAIAgentOptions): ToolLoopConfig {
  const config = resolveConnection(who, options);
  const bad = (field: string, rule: string, value: unknown): never => {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} ${rule}, got ${pyRepr(value)}`, { field });
  };
  if (options.instructions !== undefined && options.instructions !== null && typeof options.instructions !== "string") bad("instructions", "must be a string", options.instructions);
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) bad("maxTurns", "must be a whole number >= 1", options.maxTurns);
  if (options.tools !== undefined && options.tools !== null && !Array.isArray(options.tools)) bad("tools", "must be a list of tools or toolkits", options.tools);
  const tools = (options.tools ?? []).map((t, i) => {
    if (isToolkit(t)) return t;
    if (t === null || typeof t !== "object") bad(`tools[${i}]`, "must be a tool (defineTool) or a toolkit", t);
    return validateTool(t as Tool, `${who}: tools[${i}]`);
  });
  const names = new Set<string>();
  for (const t of tools) {
    if (isToolkit(t)) continue;
    if (names.has((t as Tool).name)) bad("tools", "must have unique names", (t as Tool).name);
    names.add((t as Tool).name);
  }
  const extra: Record<string, unknown> = {};
  if (options.temperature !== undefined && options.temperature !== null) {
    if (typeof options.temperature !== "number" || !(options.temperature >= 0 && options.temperature <= 2)) bad("temperature", "must be a number from 0 to 2", options.temperature);
    extra.temperature = options.temperature;
  }
  if (options.reasoningEffort !== undefined && options.reasoningEffort !== null) {
    if (typeof options.reasoningEffort !== "string" || !options.reasoningEffort) bad("reasoningEffort", "must be a non-empty string", options.reasoningEffort);
    extra.reasoning_effort = options.reasoningEffort;
  }
  if (options.parallelToolCalls !== undefined && options.parallelToolCalls !== null) {
    if (typeof options.parallelToolCalls !== "boolean") bad("parallelToolCalls", "must be a boolean", options.parallelToolCalls);
    extra.parallel_tool_calls = options.parallelToolCalls;
  }
  if (options.extraBody !== undefined && options.extraBody !== null) {
    if (typeof options.extraBody !== "object" || Array.isArray(options.extraBody)) bad("extraBody", "must be an object", options.extraBody);
    Object.assign(extra, options.extraBody);
  }
  if (options.stream !== undefined && typeof options.stream !== "boolean") bad("stream", "must be a boolean", options.stream);
  return { client: new ChatCompletionsClient(config), instructions: options.instructions ?? null, tools, maxTurns, stream: options.stream ?? false, extra };
}
