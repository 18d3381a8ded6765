import { dirname, isAbsolute, join, resolve } from "node:path";
import { EvalfleetError, ErrorCode } from "../../../shared/errors.ts";

/**
 * Results-store URLs (`--db`, `EVALFLEET_DB`, the `db` option). Pure: parsing and redaction only.
 *
 *   sqlite:PATH            a SQLite file (relative paths resolve against the working directory)
 *   sqlite:                the default file next to the suite: <suite folder>/.evalfleet/results.db
 *   postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=...   (postgresql:// too)
 *
 * Passwords never leave this module in clear: every message and log names the redacted form.
 */

/** The default SQLite file, relative to the suite's folder. */
export const DEFAULT_SQLITE_FILE = join(".evalfleet", "results.db");

/** A parsed store URL. */
export type StoreTarget =
  | { kind: "sqlite"; /** Absolute path, or `:memory:`. */ path: string; /** The URL as shown to people. */ display: string }
  | { kind: "postgres"; /** The connection string, password included: hand it to the driver only. */ connectionString: string; display: string };

/** Raised for a URL that is not a store URL; the message shows it with its password redacted. */
export class StoreUrlError extends EvalfleetError {
  override readonly name = "StoreUrlError";
  constructor(message: string, url: string) {
    super(ErrorCode.StoreUrlInvalid, message, { url: redactUrl(url) });
  }
}

/** The URL with any password (and a `password=` query parameter) replaced by `***`. */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:?#]*:)[^@/?#]*@/i, "$1***@")
    .replace(/([?&](?:password|pass|pwd)=)[^&#]*/gi, "$1***");
}

/** Options of {@link parseStoreUrl}. */
export interface ParseStoreUrlOptions {
  /** Base of relative SQLite paths. Default `process.cwd()`. */
  cwd?: string;
  /** The suite file: `sqlite:` with no path means `<its folder>/.evalfleet/results.db`. Default: none. */
  suitePath?: string | null;
}

/**
 * Parses a store URL. Throws a {@link StoreUrlError} (code STORE_URL_INVALID) naming the URL,
 * redacted, and what would be accepted.
 */
export function parseStoreUrl(url: string, options: ParseStoreUrlOptions = {}): StoreTarget {
  const raw = typeof url === "string" ? url.trim() : "";
  const shown = redactUrl(raw);
  const usage = "use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE";
  if (!raw) throw new StoreUrlError(`results store URL is empty: ${usage}`, raw);
  if (raw === "sqlite" || /^sqlite:(\/\/)?$/i.test(raw)) {
    if (!options.suitePath) throw new StoreUrlError(`results store URL '${shown}' has no path, and there is no suite file to put the default one next to: ${usage}`, raw);
    const path = join(dirname(resolve(options.cwd ?? process.cwd(), options.suitePath)), DEFAULT_SQLITE_FILE);
    return { kind: "sqlite", path, display: `sqlite:${path}` };
  }
  const sqlite = /^sqlite:(?:\/\/)?(.+)$/i.exec(raw);
  if (sqlite) {
    const given = sqlite[1]!;
    if (given === ":memory:") return { kind: "sqlite", path: ":memory:", display: "sqlite::memory:" };
    const path = isAbsolute(given) ? given : resolve(options.cwd ?? process.cwd(), given);
    return { kind: "sqlite", path, display: `sqlite:${path}` };
  }
  if (/^postgres(ql)?:\/\//i.test(raw)) {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new StoreUrlError(`results store URL '${shown}' is not a valid URL: ${usage}`, raw);
    }
    if (!parsed.hostname && !parsed.searchParams.get("host")) throw new StoreUrlError(`results store URL '${shown}' names no host: ${usage}`, raw);
    if (parsed.port && !(Number(parsed.port) > 0 && Number(parsed.port) < 65536)) throw new StoreUrlError(`results store URL '${shown}' has a bad port '${parsed.port}'`, raw);
    return { kind: "postgres", connectionString: raw, display: shown };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1];
  if (scheme) throw new StoreUrlError(`results store URL '${shown}' has an unsupported scheme '${scheme}': ${usage}`, raw);
  throw new StoreUrlError(`results store URL '${shown}' has no scheme: ${usage} (did you mean sqlite:${shown}?)`, raw);
}
