// runs in: both
import { DEFAULT_MCP_CONNECT_TIMEOUT_MS } from "../defaults.ts";

/**
 * The config module of MCP connections: how long connecting one client may take (spawning its
 * server and the MCP handshake), for the clients a suite declares (mcp-session.ts) and for an
 * `mcpToolkit` (its `connectTimeoutMs` option). The default is read from shared/defaults.ts here,
 * once, so that neither the session nor the toolkit has a fallback of its own.
 */

/** Bound on connecting one MCP client, in milliseconds: the caller's, else 30 s. */
export function mcpConnectTimeoutMs(given: number | undefined): number {
  return given ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
}
