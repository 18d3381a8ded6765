import * as z from "zod";
import type { RunEvent, ToolExecution } from "../../shared/case/agent.ts";
import { ConfigError, ErrorCode, describeError } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";

/**
 * Tools of the built-in agent: a name, a description, parameters declared with zod (validated
 * before `execute` runs) or as a raw JSON Schema (MCP tools, validated by their server), and an
 * `execute` function. Toolkits supply tools at run time (an MCP server's tools once connected).
 */

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Fires at the case deadline or on cancellation. */
  signal: AbortSignal;
  /** The run's session id. */
  sessionId: string;
  /** The case deadline (epoch ms), when known. */
  deadline?: number;
  /** Streams an event to the run's observers (`onRunEvent`) while the tool runs. */
  emit(event: RunEvent): void;
}

/** A tool the model may call. */
export interface Tool<Args = Record<string, unknown>> {
  /** 1-64 characters of letters, digits, `_` and `-` (the chat API's rule). */
  readonly name: string;
  readonly description?: string;
  /** A zod schema (arguments are validated before `execute`) or a JSON Schema object (not validated here). */
  readonly parameters: z.ZodType<Args> | Record<string, unknown>;
  /** Its return value goes back to the model (a string as is, anything else as JSON); a throw is a failed call. */
  execute(args: Args, context: ToolContext): unknown;
}

/** Supplies tools when a run starts (for example an MCP client's tools). */
export interface Toolkit {
  readonly name?: string;
  /** The tools available now. */
  tools(signal: AbortSignal): Promise<readonly Tool[]>;
}

/** Options of {@link defineTool}. */
export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  description?: string;
  parameters: S;
  execute(args: z.infer<S>, context: ToolContext): unknown;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Declares a tool with zod parameters:
 * `defineTool({ name: "factorial", description: "n!", parameters: z.object({ n: z.number().int() }), execute: ({ n }) => ... })`.
 * Throws a `ConfigError` naming the field when the definition is malformed.
 */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): Tool<z.infer<S>> {
  return validateTool(definition as unknown as Tool, "defineTool") as unknown as Tool<z.infer<S>>;
}

/** Checks a tool's shape; `who` prefixes the error. */
export function validateTool(tool: Tool, who: string): Tool {
  if (tool === null || typeof tool !== "object") throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: a tool must be an object, got ${pyRepr(tool)}`, { field: "tool" });
  const t = tool as Tool;
  if (typeof t.name !== "string" || !TOOL_NAME.test(t.name)) {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: tool name must be 1-64 letters, digits, '_' or '-', got ${pyRepr(t.name)}`, { field: "name" });
  }
  if (t.description !== undefined && typeof t.description !== "string") {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: tool '${t.name}': description must be a string, got ${pyRepr(t.description)}`, { field: "description" });
  }
  if (!isZodSchema(t.parameters) && !(t.parameters !== null && typeof t.parameters === "object" && !Array.isArray(t.parameters))) {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: tool '${t.name}': parameters must be a zod schema or a JSON Schema object, got ${pyRepr(t.parameters)}`, { field: "parameters" });
  }
  if (typeof t.execute !== "function") {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: tool '${t.name}': execute must be a function, got ${pyRepr(t.execute)}`, { field: "execute" });
  }
  return t;
}

/** True for a zod (v4) schema. */
export function isZodSchema(value: unknown): value is z.ZodType {
  return value !== null && typeof value === "object" && "_zod" in value && typeof (value as { safeParse?: unknown }).safeParse === "function";
}

/** True for a {@link Toolkit}. */
export function isToolkit(value: unknown): value is Toolkit {
  return value !== null && typeof value === "object" && typeof (value as { tools?: unknown }).tools === "function" && typeof (value as { execute?: unknown }).execute !== "function";
}

/** The tool's parameters as JSON Schema (for the chat API's function definition). */
export function parametersSchema(tool: Tool): Record<string, unknown> {
  const schema = isZodSchema(tool.parameters) ? (z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>) : { ...(tool.parameters as Record<string, unknown>) };
  delete schema.$schema;
  if (schema.type === undefined) schema.type = "object";
  return schema;
}

/** The chat API's function-tool definition of a tool. */
export function functionDefinition(tool: Tool): { type: "function"; function: { name: string; description?: string; parameters: Record<string, unknown> } } {
  return { type: "function", function: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: parametersSchema(tool) } };
}

/** The outcome of one tool call: what reliability sees, and the text the model gets back. */
export interface ToolCallOutcome {
  execution: ToolExecution;
  /** The tool message content sent back to the model. */
  reply: string;
}

/**
 * Runs one requested call: parses and validates the arguments, executes, and records the
 * execution. A bad argument, an unknown tool or a throw becomes a failed execution
 * (`toolCallError`) whose text also goes back to the model, so it can recover.
 */
export async function executeToolCall(tools: ReadonlyMap<string, Tool>, name: string, rawArguments: string | undefined, context: ToolContext): Promise<ToolCallOutcome> {
  let args: unknown;
  try {
    args = rawArguments && rawArguments.trim() !== "" ? JSON.parse(rawArguments) : {};
  } catch (err) {
    const error = `arguments of ${name} are not JSON: ${describeError(err)}`;
    return { execution: { toolName: name, toolArgs: null, toolCallError: error }, reply: `Error: ${error}` };
  }
  const toolArgs = args !== null && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };
  const tool = tools.get(name);
  if (!tool) {
    const error = `unknown tool '${name}'; available: ${[...tools.keys()].join(", ") || "none"}`;
    return { execution: { toolName: name, toolArgs, toolCallError: error }, reply: `Error: ${error}` };
  }
  let validated: unknown = args;
  if (isZodSchema(tool.parameters)) {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      const error = `invalid arguments for ${name}: ${z.prettifyError(parsed.error).replace(/\n/g, "; ")}`;
      return { execution: { toolName: name, toolArgs, toolCallError: error }, reply: `Error: ${error}` };
    }
    validated = parsed.data;
  }
  try {
    const result = await tool.execute(validated as never, context);
    return { execution: { toolName: name, toolArgs, result }, reply: resultText(result) };
  } catch (err) {
    if (context.signal.aborted) throw context.signal.reason;
    const error = describeError(err);
    return { execution: { toolName: name, toolArgs, toolCallError: error }, reply: `Error: ${error}` };
  }
}

/** A tool result as the text the model reads. */
export function resultText(result: unknown): string {
  if (result === undefined || result === null) return "";
  if (typeof result === "string") return result;
  try {
    return JSON.stringify(result) ?? String(result);
  } catch {
    return String(result);
  }
}
