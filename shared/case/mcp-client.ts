// runs in: both
/**
 * The MCP-client contract a suite declares (`defineSuite({ mcpClients })`,
 * `cli(cases, { mcpClients })`): what evalfleet needs to connect a client before the cases that
 * use it and close it afterwards. The lifecycle itself is in shared/suite/mcp-session.ts.
 */

/**
 * An MCP client: `connect()` and `close()`. evalfleet's `mcpToolkit` fits, and so does an
 * `@openai/agents` `MCPServerStdio` or your own wrapper. Whether it is already connected is read
 * from `connected`, `isConnected` (a boolean or a method) or `initialized`; a client that exposes
 * none of them counts as not connected.
 */
export interface McpClientLike {
  /** Names the client in warnings. */
  readonly name?: string;
  /** May take `{ signal }` (evalfleet passes one, bounded by the connect timeout). */
  connect(options?: { signal?: AbortSignal }): unknown;
  close(): unknown;
  readonly connected?: boolean;
  readonly isConnected?: boolean | (() => boolean);
  readonly initialized?: boolean;
}

/** True for an object with `connect()` and `close()`. */
export function isMcpClientLike(value: unknown): value is McpClientLike {
  return value !== null && typeof value === "object" && typeof (value as McpClientLike).connect === "function" && typeof (value as McpClientLike).close === "function";
}

/** Whether the client says it is connected (a client that says nothing is not). */
export function isConnected(client: McpClientLike): boolean {
  const flag = client.isConnected;
  if (typeof flag === "function") {
    try {
      return Boolean(flag.call(client));
    } catch {
      return false;
    }
  }
  return Boolean(flag ?? client.connected ?? client.initialized ?? false);
}
