import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ConfigError, ErrorCode, EvalfleetError, describeError } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import type { McpClientLike } from "../../shared/case/mcp-client.ts";
import { mcpConnectTimeoutMs } from "../../shared/suite/mcp-config.ts";
import type { Tool, Toolkit } from "../models/tool.ts";
import { scopedSignal } from "../runtime/scoped-signal.ts";
import { importOptional } from "../../shared/runtime/optional-package.ts";

/**
 * An MCP server's tools for the built-in agent, over the stdio transport of the official SDK
 * (`@modelcontextprotocol/sdk`). Declare it in the suite (`defineSuite({ mcpClients: [calc] })`)
 * so evalfleet connects it in each worker thread before the first case and closes it at the end,
 * and give it to the agent (`openAIAgent({ tools: [calc] })`), which lists its tools per run.
 */

/** Options of {@link mcpToolkit}. */
export interface McpToolkitOptions {
  /** Names the client in warnings and logs. */
  name: string;
  /** The server's executable (e.g. `node`, `npx`, `uvx`). */
  command: string;
  args?: readonly string[];
  /**
   * Extra environment of the server process. The SDK passes only a safe default set of the
   * parent's variables (HOME, PATH, ...) plus these.
   */
  env?: Record<string, string>;
  cwd?: string;
  /** The server's stderr: `"ignore"` (default), `"inherit"` or `"pipe"`. */
  stderr?: "ignore" | "inherit" | "pipe";
  /** Only these of the server's tools are offered to the model. Default: all. */
  allowTools?: readonly string[];
  /** Bound on connecting (spawn and MCP handshake), in milliseconds. Default 30000. */
  connectTimeoutMs?: number;
}

/** A connectable MCP toolkit; see {@link mcpToolkit}. */
export class McpToolkit implements Toolkit, McpClientLike {
  readonly name: string;
  readonly #options: McpToolkitOptions;
  #client: Client | undefined;
  #transport: StdioClientTransport | undefined;
  #tools: Promise<Tool[]> | undefined;
  #lastError: string | undefined;

  constructor(options: McpToolkitOptions) {
    const bad = (field: string, rule: string, value: unknown): never => {
      throw new ConfigError(ErrorCode.ConfigInvalid, `mcpToolkit: ${field} ${rule}, got ${pyRepr(value)}`, { field });
    };
    if (options === null || typeof options !== "object") bad("options", "must be an object", options);
    if (typeof options.name !== "string" || !options.name.trim()) bad("name", "must be a non-empty string", options.name);
    if (typeof options.command !== "string" || !options.command.trim()) bad("command", "must be a non-empty string", options.command);
    if (options.args !== undefined && !(Array.isArray(options.args) && options.args.every((a) => typeof a === "string"))) bad("args", "must be a list of strings", options.args);
    if (options.env !== undefined && (typeof options.env !== "object" || options.env === null || Object.values(options.env).some((v) => typeof v !== "string"))) {
      bad("env", "must be an object of string values", options.env);
    }
    if (options.stderr !== undefined && !["ignore", "inherit", "pipe"].includes(options.stderr)) bad("stderr", 'must be "ignore", "inherit" or "pipe"', options.stderr);
    if (options.connectTimeoutMs !== undefined && !(typeof options.connectTimeoutMs === "number" && options.connectTimeoutMs > 0)) {
      bad("connectTimeoutMs", "must be a number of milliseconds > 0", options.connectTimeoutMs);
    }
    this.name = options.name;
    this.#options = options;
  }

  /** True between a successful `connect()` and `close()`. */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** The server process id while connected (for diagnostics). */
  get pid(): number | null {
    return this.#transport?.pid ?? null;
  }

  /** Starts the server and performs the MCP handshake. Throws when it cannot. */
  async connect(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (this.#client) return;
    const [{ Client }, { StdioClientTransport }] = await importOptional("@modelcontextprotocol/sdk", "mcpToolkit", () =>
      Promise.all([import("@modelcontextprotocol/sdk/client/index.js"), import("@modelcontextprotocol/sdk/client/stdio.js")]),
    );
    const o = this.#options;
    const transport = new StdioClientTransport({
      command: o.command,
      args: [...(o.args ?? [])],
      ...(o.env ? { env: { ...o.env } } : {}),
      ...(o.cwd ? { cwd: o.cwd } : {}),
      stderr: o.stderr ?? "ignore",
    });
    const client = new Client({ name: "evalfleet", version: "0.1.0" });
    try {
      await client.connect(transport, { signal: options.signal, timeout: mcpConnectTimeoutMs(o.connectTimeoutMs) });
    } catch (err) {
      this.#lastError = describeError(err);
      await transport.close().catch(() => undefined);
      throw err;
    }
    this.#client = client;
    this.#transport = transport;
    this.#lastError = undefined;
  }

  /** Ends the session and the server process. */
  async close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    this.#tools = undefined;
    await client?.close();
  }

  /**
   * The server's tools as built-in agent tools. Connected: listed once per connection. A
   * connection that failed: none (the run goes on without them; checks decide). Never tried:
   * throws, saying how to declare the client.
   */
  async tools(signal: AbortSignal): Promise<readonly Tool[]> {
    const client = this.#client;
    if (!client) {
      if (this.#lastError !== undefined) return [];
      throw new EvalfleetError(
        ErrorCode.McpNotConnected,
        `MCP client '${this.name}' is not connected: declare it in defineSuite({ mcpClients }) or cli(cases, { mcpClients }), or connect() it yourself`,
        { client: this.name },
      );
    }
    // A fresh signal: the listing is shared by every later run, and must not die with this one.
    this.#tools ??= client.listTools(undefined, { signal: new AbortController().signal }).then(({ tools }) =>
      tools
        .filter((t) => !this.#options.allowTools || this.#options.allowTools.includes(t.name))
        .map(
          (t): Tool => ({
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            parameters: t.inputSchema as Record<string, unknown>,
            execute: (args, context) => this.callTool(t.name, args, context.signal),
          }),
        ),
    );
    const listing = this.#tools;
    listing.catch(() => {
      if (this.#tools === listing) this.#tools = undefined;
    });
    // The caller stops waiting at its own deadline; the shared listing carries on for the others.
    return await new Promise<readonly Tool[]>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      listing.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /** Calls one tool; returns its text (or structured) content. A tool-level error throws with its text. */
  async callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const client = this.#client;
    if (!client) throw new EvalfleetError(ErrorCode.McpNotConnected, `MCP client '${this.name}' is not connected`, { client: this.name });
    const scope = scopedSignal(signal);
    let result: { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown; isError?: boolean };
    try {
      result = (await client.callTool({ name, arguments: args }, undefined, { signal: scope.signal })) as typeof result;
    } finally {
      scope.release();
    }
    const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
    if (result.isError) throw new Error(text || `MCP tool ${name} failed`);
    return result.structuredContent ?? text;
  }
}

/**
 * An MCP server (stdio) as a toolkit and a suite-managed client:
 * `mcpToolkit({ name: "calculator", command: "npx", args: ["-y", "some-mcp-server"] })`.
 * Bad options throw a `ConfigError` naming the field.
 */
export function mcpToolkit(options: McpToolkitOptions): McpToolkit {
  return new McpToolkit(options);
}
