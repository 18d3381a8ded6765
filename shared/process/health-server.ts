// runs in: main
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EvalfleetError, ErrorCode, errorMessage } from "../errors.ts";
import { silentLogger, type Logger } from "../logger.ts";

/**
 * A small HTTP endpoint for probes and scrapes (node:http, no framework): `/healthz` (liveness),
 * `/readyz` (readiness), `/metrics` (Prometheus), plus any extra JSON routes. Only GET and HEAD.
 * It never serves anything secret: checks report states and reasons, not settings.
 */

/** The answer of a liveness or readiness check. */
export interface HealthCheck {
  ok: boolean;
  /** Why, in a few words (`running`, `draining`, `disconnected from NATS`). */
  detail: string;
}

/** An extra route's answer: a status and a JSON body. */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

/** Options of {@link HealthServer}. */
export interface HealthServerOptions {
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /**
   * Interface to bind, from the caller's config (`--http-host`; worker/config.ts and the flags
   * default it to `0.0.0.0`: a pod's probes come from the kubelet over the pod IP).
   */
  host: string;
  /** Liveness: false only when restarting the process would help. */
  live: () => HealthCheck;
  /** Readiness. */
  ready: () => HealthCheck;
  /** Prometheus exposition for `/metrics`; absent: 404. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Extra GET routes answering JSON, by exact path (e.g. `/queue`). */
  routes?: Readonly<Record<string, () => Promise<JsonAnswer>>>;
  logger?: Logger;
}

/** A running health endpoint. */
export class HealthServer {
  readonly #o: HealthServerOptions;
  readonly #log: Logger;
  #server: Server | null = null;
  #port = 0;

  constructor(options: HealthServerOptions) {
    this.#o = options;
    this.#log = options.logger ?? silentLogger();
  }

  /** The bound port (after {@link HealthServer.start}). */
  get port(): number {
    return this.#port;
  }

  /** Binds the port. A port in use is an {@link EvalfleetError} (USAGE) naming it. */
  async start(): Promise<{ host: string; port: number }> {
    const host = this.#o.host;
    const server = createServer((req, res) => void this.#handle(req, res));
    // Probes are short; a stuck client must not hold a socket for long.
    server.requestTimeout = 10_000;
    server.headersTimeout = 10_000;
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(
          new EvalfleetError(ErrorCode.Usage, `cannot serve health and metrics on ${host}:${this.#o.port}: ${err.code === "EADDRINUSE" ? "the port is in use" : errorMessage(err)}`, {
            field: "httpPort",
            value: this.#o.port,
          }),
        );
      };
      server.once("error", onError);
      server.listen(this.#o.port, host, () => {
        server.off("error", onError);
        resolve();
      });
    });
    // The process lives for its own work; an open probe socket must never keep it alive.
    server.unref();
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
    this.#log.info({ host, port: this.#port }, "serving /healthz, /readyz and /metrics");
    return { host, port: this.#port };
  }

  /** Stops listening and closes open connections. */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    try {
      if (req.method !== "GET" && req.method !== "HEAD") {
        send(res, req, 405, "application/json", JSON.stringify({ error: "only GET and HEAD" }), { allow: "GET, HEAD" });
        return;
      }
      if (path === "/healthz" || path === "/readyz") {
        const check = path === "/healthz" ? this.#o.live() : this.#o.ready();
        send(res, req, check.ok ? 200 : 503, "application/json", JSON.stringify({ status: check.ok ? "ok" : "unavailable", detail: check.detail }));
        return;
      }
      if (path === "/metrics" && this.#o.metrics) {
        const m = await this.#o.metrics();
        send(res, req, 200, m.contentType, m.body);
        return;
      }
      const route = this.#o.routes?.[path];
      if (route) {
        const answer = await route();
        send(res, req, answer.status, "application/json", JSON.stringify(answer.body));
        return;
      }
      send(res, req, 404, "application/json", JSON.stringify({ error: `no route ${path}` }));
    } catch (err) {
      this.#log.warn({ path, err: errorMessage(err) }, "health endpoint failed");
      send(res, req, 500, "application/json", JSON.stringify({ error: errorMessage(err) }));
    }
  }
}

function send(res: ServerResponse, req: IncomingMessage, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store", "content-length": Buffer.byteLength(body), ...headers });
  res.end(req.method === "HEAD" ? undefined : body);
}
