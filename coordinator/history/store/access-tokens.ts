import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ErrorCode } from "../../../shared/errors.ts";
import { StoreError } from "./driver.ts";
import type { ResultsStore } from "./store.ts";

/**
 * The viewer's access tokens (`evalfleet token create|list|revoke`, checked by `evalfleet serve
 * --auth`), in the store's `access_tokens` table. A token is shown once, when it is created; the
 * table keeps its SHA-256 only, so a copy of the database lets nobody in. A token is 32 random
 * bytes: a hash without a salt or a slow KDF is enough for a secret nobody chose.
 */

/** What a token may do: `viewer` reads; `admin` reads and lists the tokens. */
export type TokenRole = "viewer" | "admin";

/** The roles, for option parsing. */
export const TOKEN_ROLES: readonly TokenRole[] = ["viewer", "admin"];

/** A token as listed (never the token itself). */
export interface AccessToken {
  id: string;
  role: TokenRole;
  /** The suites whose runs it sees, or null for every suite. */
  suites: string[] | null;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The prefix of every token, so a leaked one is recognisable (and redactable) for what it is. */
export const TOKEN_PREFIX = "efv_";

/** SHA-256 of a token, hex. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Creates a token; returns it (shown once) and its record. */
export async function createToken(store: ResultsStore, options: { role: TokenRole; suites: readonly string[]; label?: string | null }): Promise<{ token: string; record: AccessToken }> {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const record: AccessToken = {
    id: randomBytes(6).toString("hex"),
    role: options.role,
    suites: options.suites.length > 0 ? [...new Set(options.suites)] : null,
    label: options.label ?? null,
    created_at: new Date().toISOString(),
    revoked_at: null,
    last_used_at: null,
  };
  await store.sql.query("INSERT INTO access_tokens (id, token_hash, role, suites, label, created_at) VALUES (?, ?, ?, ?, ?, ?)", [
    record.id,
    hashToken(token),
    record.role,
    record.suites ? JSON.stringify(record.suites) : null,
    record.label,
    record.created_at,
  ]);
  return { token, record };
}

/** Every token, newest first (revoked ones included, marked). */
export async function listTokens(store: ResultsStore): Promise<AccessToken[]> {
  const rows = await store.sql.query("SELECT id, role, suites, label, created_at, revoked_at, last_used_at FROM access_tokens ORDER BY created_at DESC, id");
  return rows.map(tokenOf);
}

/** Revokes a token by id; TOKEN_NOT_FOUND (a usage error) when there is none, or it is already revoked. */
export async function revokeToken(store: ResultsStore, id: string): Promise<void> {
  const rows = await store.sql.query("UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id", [new Date().toISOString(), id]);
  if (rows.length === 0) throw new StoreError(ErrorCode.Usage, `no active token '${id}' in ${store.display} (evalfleet token list shows them)`, { field: "id", value: id });
}

/**
 * The active token a presented secret is, or null. Looked up by its hash (an index), then compared
 * in constant time; marks it used (best effort, at most once a minute per token).
 */
export async function verifyToken(store: ResultsStore, token: string): Promise<AccessToken | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const hash = hashToken(token);
  const rows = await store.sql.query("SELECT id, token_hash, role, suites, label, created_at, revoked_at, last_used_at FROM access_tokens WHERE token_hash = ?", [hash]);
  const row = rows[0];
  if (!row) return null;
  const a = Buffer.from(String(row.token_hash), "hex");
  const b = Buffer.from(hash, "hex");
  if (a.length !== b.length || !timingSafeEqual(a, b)) return null;
  const record = tokenOf(row);
  if (record.revoked_at) return null;
  const now = new Date();
  if (!record.last_used_at || now.getTime() - Date.parse(record.last_used_at) > 60_000) {
    await store.sql.query("UPDATE access_tokens SET last_used_at = ? WHERE id = ?", [now.toISOString(), record.id]).catch(() => undefined);
  }
  return record;
}

/**
 * Whether the token with this id is still active (exists, not revoked). A long-lived answer (an
 * event stream) asks it again as it goes, so revoking a token ends what it had already opened.
 */
export async function tokenIsActive(store: ResultsStore, id: string): Promise<boolean> {
  const rows = await store.sql.query("SELECT revoked_at FROM access_tokens WHERE id = ?", [id]);
  return rows.length === 1 && rows[0]!.revoked_at == null;
}

function tokenOf(r: Record<string, unknown>): AccessToken {
  let suites: string[] | null = null;
  if (typeof r.suites === "string") {
    const parsed: unknown = JSON.parse(r.suites);
    suites = Array.isArray(parsed) ? parsed.map(String) : null;
  }
  return {
    id: String(r.id),
    role: r.role === "admin" ? "admin" : "viewer",
    suites,
    label: r.label == null ? null : String(r.label),
    created_at: String(r.created_at),
    revoked_at: r.revoked_at == null ? null : String(r.revoked_at),
    last_used_at: r.last_used_at == null ? null : String(r.last_used_at),
  };
}
