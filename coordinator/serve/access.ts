import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { verifyToken } from "../history/store/access-tokens.ts";
import type { SuiteScope } from "../history/store/viewer-store.ts";
import type { ResultsStore } from "../history/store/store.ts";

/**
 * Who may read what (`evalfleet serve`). Without `--auth` (only allowed on a loopback host) every
 * request is let in, but only under a loopback Host header: a web page elsewhere cannot rebind a
 * DNS name to 127.0.0.1 and read the store through the visitor's browser. With `--auth` every
 * request carries a token: `Authorization: Bearer TOKEN`, or, for a browser, `?token=` once,
 * which becomes an HttpOnly cookie and is taken out of the address bar.
 */

/** What a request may see. */
export interface Access {
  /** The suites whose runs it sees (`null`: all). */
  scope: SuiteScope;
  /** May list the tokens. */
  admin: boolean;
  /** The token's id, or null without `--auth`. */
  tokenId: string | null;
}

/** The Hono environment of the viewer's app. */
export interface ViewerEnv {
  Variables: { access: Access };
}

/** The cookie a browser keeps its token in. */
export const TOKEN_COOKIE = "evalfleet_token";

/** Whether a host name (or address) is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The host of a Host header (`name:port`, `[v6]:port`). */
function hostOfHeader(header: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(header);
  if (v6) return v6[1]!;
  return header.split(":")[0] ?? "";
}

/**
 * A URL's path and query as a redirect target that stays on this origin: a path that starts with
 * `//` (or `/\\`, which browsers read the same) would be taken as another host
 * (`http://viewer//evil.example/?token=...` must not send the browser to evil.example).
 */
export function sameOriginPath(url: URL): string {
  return `/${url.pathname.replace(/^[/\\]+/, "")}${url.search}`;
}

/** A JSON error answer, as every error of the API is. */
export function jsonError(c: Context, status: 400 | 401 | 403 | 404 | 405 | 413 | 414 | 500 | 503, error: string): Response {
  return c.json({ error }, status);
}

/** The access middleware; see the module comment. `/healthz` is open to all. */
export function accessMiddleware(store: ResultsStore, auth: boolean): MiddlewareHandler<ViewerEnv> {
  return async (c, next) => {
    if (c.req.path === "/healthz") return next();
    if (!auth) {
      const host = c.req.header("host") ?? "";
      if (!isLoopbackHost(hostOfHeader(host))) return jsonError(c, 403, `host ${JSON.stringify(host.slice(0, 100))} is not this machine's loopback; a viewer served without --auth answers only http://127.0.0.1 or localhost`);
      c.set("access", { scope: null, admin: true, tokenId: null });
      return next();
    }
    const header = c.req.header("authorization");
    const fromQuery = c.req.query("token");
    let presented: string | undefined;
    if (header) {
      const m = /^Bearer\s+(\S+)$/i.exec(header);
      if (!m) return jsonError(c, 401, "the Authorization header is not 'Bearer TOKEN'");
      presented = m[1];
    } else presented = fromQuery ?? getCookie(c, TOKEN_COOKIE);
    if (!presented) return jsonError(c, 401, "this viewer needs a token: Authorization: Bearer TOKEN, or ?token=TOKEN once in a browser (evalfleet token create makes one)");
    const token = await verifyToken(store, presented);
    if (!token) return jsonError(c, 401, "the token is not valid (unknown or revoked)");
    c.set("access", { scope: token.suites, admin: token.role === "admin", tokenId: token.id });
    if (fromQuery && !header) {
      // A browser's first visit: keep the token in a cookie scripts cannot read, and take it out of the address bar (and history).
      setCookie(c, TOKEN_COOKIE, presented, { httpOnly: true, sameSite: "Strict", path: "/", secure: new URL(c.req.url).protocol === "https:" });
      if (c.req.method === "GET" && !c.req.path.startsWith("/api/")) {
        const url = new URL(c.req.url);
        url.searchParams.delete("token");
        return c.redirect(sameOriginPath(url), 303);
      }
    }
    return next();
  };
}
