import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { ErrorCode, EvalfleetError } from "../../shared/errors.ts";
import type { ResultsStore } from "../history/store/store.ts";
import { isLoopbackHost } from "./access.ts";
import { createViewerApp } from "./app.ts";

/**
 * The viewer's HTTP server: the app (app.ts) on Node's http server through @hono/node-server,
 * listening on one host and port, and its shutdown (event streams ended, connections closed,
 * bounded).
 */

/** Options of {@link startViewer}. */
export interface StartViewerOptions {
  store: ResultsStore;
  /** Address to listen on. */
  host: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Every request needs a token; forced on for a host that is not a loopback address. */
  auth: boolean;
  /** Told of an unexpected error while serving. */
  onError?: (message: string) => void;
  /** Aborting it shuts the server down. */
  signal?: AbortSignal;
}

/** A running viewer. */
export interface RunningViewer {
  /** `http://HOST:PORT` (the port the system picked for port 0). */
  url: string;
  /** Whether tokens are required. */
  auth: boolean;
  /** Stops: ends the event streams, stops accepting, closes idle and then all connections; at most `graceMs` (default 2000). */
  close(graceMs?: number): Promise<void>;
}

/** Whether a host needs tokens: a non-loopback host always does. */
export function needsAuth(host: string, auth: boolean): boolean {
  return auth || !isLoopbackHost(host);
}

/** Starts the viewer; resolves once it listens. LISTEN_FAILED (e.g. the port is taken) when it cannot. */
export async function startViewer(options: StartViewerOptions): Promise<RunningViewer> {
  const auth = needsAuth(options.host, options.auth);
  const closing = new AbortController();
  const app = createViewerApp({ store: options.store, auth, closing: closing.signal, onError: options.onError });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: options.host, port: options.port }) as Server;
    s.once("listening", () => resolve(s));
    s.once("error", (err) => reject(new EvalfleetError(ErrorCode.Usage, `cannot listen on ${options.host}:${options.port}: ${err.message}`, { field: "port", value: options.port })));
  });
  // Bounded request parsing: headers within 10 s, the whole request within 30 s (SSE answers are long; requests are not).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closed: Promise<void> | null = null;
  const close = (graceMs = 2000): Promise<void> =>
    (closed ??= new Promise<void>((resolve) => {
      closing.abort();
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    }));
  options.signal?.addEventListener("abort", () => void close(), { once: true });
  return { url: `http://${shownHost}:${address.port}`, auth, close };
}
