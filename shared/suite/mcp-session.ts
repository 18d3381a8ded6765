// runs in: both
import { describeError } from "../errors.ts";
import { silentLogger, type Logger } from "../logger.ts";
import { isConnected, type McpClientLike } from "../case/mcp-client.ts";
import { mcpConnectTimeoutMs } from "./mcp-config.ts";

/**
 * The lifecycle of the MCP clients a suite declares (`defineSuite({ mcpClients })`,
 * `cli(cases, { mcpClients })`), after Agno's `mcp_tools=`: connected once per worker thread (or
 * once per inline run) before the first case runs, closed when the thread or run ends. A client
 * that is already connected when evalfleet first looks stays its owner's: evalfleet neither
 * connects nor closes it. A failed connection is a warning; the cases still run and their checks
 * decide. Shared: a worker thread runs it, and so does the inline runner in the caller's thread.
 */

/** Options of {@link McpSession}. */
export interface McpSessionOptions {
  /** Bound on each client's connection, in milliseconds. Default 30 s (mcp-config.ts). */
  connectTimeoutMs?: number;
  /** Told each warning (a failed connection or close), as one line. Default: logged at warn. */
  onWarning?: ((message: string) => void) | null;
  logger?: Logger | null;
}

/** The clients one thread (or one inline run) connected, and how to close them. */
export class McpSession {
  readonly #clients: readonly McpClientLike[];
  readonly #options: McpSessionOptions;
  readonly #opened: McpClientLike[] = [];
  #connecting: Promise<void> | undefined;
  #closed = false;

  constructor(clients: readonly McpClientLike[], options: McpSessionOptions = {}) {
    this.#clients = clients;
    this.#options = options;
  }

  /** How many clients this session connected (and so will close). */
  get opened(): number {
    return this.#opened.length;
  }

  /**
   * Connects, once, every client that is not connected yet. Never throws: a failure (or a
   * connection slower than the timeout) is a warning, and the client stays unconnected.
   */
  ensureConnected(signal?: AbortSignal): Promise<void> {
    this.#connecting ??= this.#connectAll(signal);
    return this.#connecting;
  }

  /** Closes, in reverse order, every client this session connected. Never throws. */
  async close(): Promise<{ closed: number; errors: string[] }> {
    if (this.#closed) return { closed: 0, errors: [] };
    this.#closed = true;
    // A connection still in progress finishes first, so what it opens is closed too.
    await this.#connecting?.catch(() => undefined);
    const errors: string[] = [];
    let closed = 0;
    for (const client of [...this.#opened].reverse()) {
      try {
        await client.close();
        closed++;
      } catch (err) {
        errors.push(`MCP client '${nameOf(client, this.#clients)}' failed to close: ${describeError(err)}`);
      }
    }
    this.#opened.length = 0;
    for (const e of errors) this.#warn(e);
    return { closed, errors };
  }

  async #connectAll(signal?: AbortSignal): Promise<void> {
    const timeoutMs = mcpConnectTimeoutMs(this.#options.connectTimeoutMs);
    await Promise.all(
      this.#clients.map(async (client) => {
        if (isConnected(client)) return; // the caller's: never connected or closed by evalfleet
        const name = nameOf(client, this.#clients);
        const bound = new AbortController();
        const timer = setTimeout(() => bound.abort(new Error(`did not connect within ${timeoutMs / 1000}s`)), timeoutMs);
        const onAbort = (): void => bound.abort(signal?.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
        try {
          await Promise.race([
            Promise.resolve(client.connect({ signal: bound.signal })),
            new Promise((_, reject) => {
              if (bound.signal.aborted) reject(bound.signal.reason);
              bound.signal.addEventListener("abort", () => reject(bound.signal.reason), { once: true });
            }),
          ]);
          if (this.#closed) {
            await Promise.resolve(client.close()).catch(() => undefined);
            return;
          }
          this.#opened.push(client);
        } catch (err) {
          this.#warn(`MCP client '${name}' failed to connect: ${describeError(err)}; its cases run without it`);
          // Whatever it started (a child process) must not outlive the run.
          await Promise.resolve()
            .then(() => client.close())
            .catch(() => undefined);
        } finally {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
        }
      }),
    );
  }

  #warn(message: string): void {
    if (this.#options.onWarning) this.#options.onWarning(message);
    else (this.#options.logger ?? silentLogger()).warn(message);
  }
}

function nameOf(client: McpClientLike, all: readonly McpClientLike[]): string {
  return typeof client.name === "string" && client.name ? client.name : `mcpClients[${all.indexOf(client)}]`;
}
