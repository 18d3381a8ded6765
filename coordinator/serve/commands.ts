import type { Writable } from "node:stream";
import { ErrorCode } from "../../shared/errors.ts";
import { safeText } from "../../shared/text.ts";
import { StoreError } from "../history/store/driver.ts";
import { createToken, listTokens, revokeToken, type TokenRole } from "../history/store/access-tokens.ts";
import { ResultsStore } from "../history/store/store.ts";
import { abandonedBefore } from "../history/store/run-record.ts";
import { startViewer } from "./server.ts";

/**
 * What `evalfleet serve` and `evalfleet token create|list|revoke` do (their flags are in
 * coordinator/cli/serve-commands.ts). `serve` runs until SIGTERM or SIGINT, then shuts down.
 */

/** How often `serve` closes runs whose process died (their heartbeat is too old), in milliseconds. */
const ABANDONED_SWEEP_MS = 60_000;

/** Where the commands write. */
export interface ServeIO {
  stdout: Writable;
  stderr: Writable;
}

/** The store flags. */
export interface ServeStoreFlags {
  db?: string;
  dbTimeout: number;
}

async function openStore(flags: ServeStoreFlags): Promise<ResultsStore> {
  const url = flags.db?.trim();
  if (!url) throw new StoreError(ErrorCode.Usage, "no results store: pass --db URL (sqlite:PATH or postgres://...) or set EVALFLEET_DB", { field: "db" });
  return ResultsStore.open(url, { timeoutSeconds: flags.dbTimeout });
}

/** `evalfleet serve`: serves until `stop` aborts (the CLI aborts it on SIGTERM/SIGINT). Returns the exit code. */
export async function serveCommand(flags: ServeStoreFlags & { host: string; port: number; auth?: boolean }, io: ServeIO, stop: AbortSignal): Promise<number> {
  const store = await openStore(flags);
  try {
    const viewer = await startViewer({ store, host: flags.host, port: flags.port, auth: Boolean(flags.auth), onError: (m) => void io.stderr.write(`error: ${safeText(m)}\n`) });
    if (viewer.auth && !flags.auth) io.stderr.write(`note: ${flags.host} is not a loopback address: every request needs a token (evalfleet token create)\n`);
    io.stdout.write(`listening on ${viewer.url}${viewer.auth ? " (tokens required)" : ""}\n`);
    // A run whose process died shows as abandoned, not running for ever (best effort: a read-only user may not write).
    const closeAbandoned = () => void store.closeAbandonedRuns(abandonedBefore()).catch(() => undefined);
    closeAbandoned();
    const sweeper = setInterval(closeAbandoned, ABANDONED_SWEEP_MS);
    sweeper.unref();
    stop.addEventListener("abort", () => clearInterval(sweeper), { once: true });
    await new Promise<void>((resolve) => (stop.aborted ? resolve() : stop.addEventListener("abort", () => resolve(), { once: true })));
    await viewer.close();
    io.stdout.write("stopped\n");
    return 0;
  } finally {
    await store.close();
  }
}

/** `evalfleet token create`: prints the token on its last line (shown once). */
export async function tokenCreateCommand(flags: ServeStoreFlags & { role: TokenRole; suite?: string[]; label?: string }, io: ServeIO): Promise<number> {
  const store = await openStore(flags);
  try {
    const { token, record } = await createToken(store, { role: flags.role, suites: flags.suite ?? [], label: flags.label ?? null });
    io.stdout.write(`token ${record.id}: ${record.role}, ${record.suites ? `suites ${record.suites.map((s) => safeText(s)).join(", ")}` : "every suite"} (shown once; only its hash is stored)\n${token}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** `evalfleet token list`: the tokens, never their secrets. */
export async function tokenListCommand(flags: ServeStoreFlags & { json?: boolean }, io: ServeIO): Promise<number> {
  const store = await openStore(flags);
  try {
    const tokens = await listTokens(store);
    if (flags.json) io.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`);
    else if (tokens.length === 0) io.stdout.write("no tokens\n");
    else
      for (const t of tokens)
        io.stdout.write(`${t.id}  ${t.role.padEnd(6)}  ${t.suites ? t.suites.map((s) => safeText(s)).join(",") : "*"}  created ${t.created_at}${t.revoked_at ? `  revoked ${t.revoked_at}` : ""}${t.last_used_at ? `  used ${t.last_used_at}` : ""}${t.label ? `  ${safeText(t.label)}` : ""}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** `evalfleet token revoke ID`. */
export async function tokenRevokeCommand(id: string, flags: ServeStoreFlags, io: ServeIO): Promise<number> {
  const store = await openStore(flags);
  try {
    await revokeToken(store, id);
    io.stdout.write(`token ${safeText(id)} revoked\n`);
    return 0;
  } finally {
    await store.close();
  }
}
