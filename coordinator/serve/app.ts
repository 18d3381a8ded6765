import { Hono } from "hono";
import { ErrorCode, EvalfleetError, errorMessage } from "../../shared/errors.ts";
import type { ResultsStore } from "../history/store/store.ts";
import { accessMiddleware, jsonError, type ViewerEnv } from "./access.ts";
import { addApiRoutes } from "./api.ts";
import { addEventRoutes } from "./events.ts";
import { addPageRoutes } from "./pages.ts";
import { ParamError } from "./params.ts";

/**
 * The viewer's app (Hono): security headers on every answer, GET only, bounded URLs, access
 * (access.ts), then `/healthz`, the API (api.ts, events.ts) and the pages (pages.ts). Errors are
 * JSON: 400 for a bad parameter, 503 when the store cannot answer, 500 otherwise (its message is
 * not shown: it could carry a detail of the database).
 */

/** Longest request URL accepted, in characters. */
export const MAX_URL_CHARS = 4096;

/** The policy of every answer: scripts and styles from this origin only, no inline script, no framing. */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Options of {@link createViewerApp}. */
export interface ViewerAppOptions {
  store: ResultsStore;
  /** Every request needs a token. */
  auth: boolean;
  /** Aborted when the server shuts down: open event streams end. */
  closing: AbortSignal;
  /** Told of an unexpected error (the CLI prints it on stderr). Default: ignored. */
  onError?: (message: string) => void;
}

/** The viewer's Hono app. */
export function createViewerApp(options: ViewerAppOptions): Hono<ViewerEnv> {
  const app = new Hono<ViewerEnv>();
  app.use("*", async (c, next) => {
    c.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("Cache-Control", "no-store");
    if (c.req.method !== "GET" && c.req.method !== "HEAD") return jsonError(c, 405, `method ${c.req.method} is not allowed: the viewer only reads`);
    if (c.req.url.length > MAX_URL_CHARS) return jsonError(c, 414, `the request URL is longer than ${MAX_URL_CHARS} characters`);
    return next();
  });
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.use("*", accessMiddleware(options.store, options.auth));
  addApiRoutes(app, options.store);
  addEventRoutes(app, options.store, options.closing);
  addPageRoutes(app);
  app.notFound((c) => jsonError(c, 404, `no such page or endpoint: ${c.req.path.slice(0, 200)}`));
  app.onError((err, c) => {
    if (err instanceof ParamError) return jsonError(c, 400, err.message);
    if (err instanceof EvalfleetError && (err.code === ErrorCode.StoreUnavailable || err.code === ErrorCode.StoreSchema)) {
      options.onError?.(errorMessage(err));
      return jsonError(c, 503, "the results store did not answer; try again");
    }
    options.onError?.(`${c.req.method} ${c.req.path}: ${errorMessage(err)}`);
    return jsonError(c, 500, "internal error (the server's log says what)");
  });
  return app;
}
