/**
 * The redactor: removes secrets from text and from plain data. Pure (no I/O, no environment): it
 * is handed the secret values; shared/secrets.ts builds the process's one redactor from the
 * environment and the NATS credentials, and gives each kind of output its function.
 *
 * A secret is replaced by {@link REDACTED} wherever it appears: a known value (and its JSON- and
 * URL-escaped forms, so a serialized line or a URL cannot carry it either), and the shapes of
 * well-known credentials, recognised without being known: `Bearer <token>`, `sk-...` API keys,
 * the credentials of a NATS URL (`nats://user:password@host` or `nats://token@host` ->
 * `nats://[REDACTED]@host`), the password of any other URL (`postgres://user:[REDACTED]@host`)
 * and NKey seeds. One regular expression does it all in one pass (measured in bench/redact.ts).
 */

/** What replaces a secret in every output. */
export const REDACTED = "[REDACTED]";

/** One secret found in a text: `[start, end)` and what replaces it. */
export interface RedactionMatch {
  start: number;
  end: number;
  replacement: string;
}

/**
 * The shapes of credentials recognised without being known, each a regular expression's source
 * and its replacement. The character classes never include whitespace (a bearer token's gap
 * aside): the streaming redactor relies on it to know what may still grow (redact-stream.ts).
 */
const SHAPES: ReadonlyArray<{ source: string; replace: (match: string) => string }> = [
  // The word stays: "Bearer [REDACTED]" still says what was there.
  { source: String.raw`\b[Bb]earer[ \t]+[A-Za-z0-9._~+/=-]+`, replace: (m) => `${m.slice(0, 6)} ${REDACTED}` },
  // OpenAI-style keys (`sk-...`, `sk-proj-...`, `sk-ant-...`).
  { source: String.raw`\bsk-[A-Za-z0-9_-]{8,}`, replace: () => REDACTED },
  // A NATS URL's user information, a token or user:password (`nats://[REDACTED]@host`).
  { source: String.raw`\b(?:nats|tls|wss?):\/\/[^\s/?#@"'<>]+@`, replace: (m) => `${m.slice(0, m.indexOf("://") + 3)}${REDACTED}@` },
  // Any other URL's password (`postgres://user:[REDACTED]@host`); a lone user name
  // (`ssh://git@host`) and a password already masked (`***`) are left.
  { source: String.raw`:\/\/[^\s/?#@"'<>:]*:(?!\*+@)[^\s/?#@"'<>]+@`, replace: (m) => `${m.slice(0, m.indexOf(":", 3) + 1)}${REDACTED}@` },
  // NKey seeds (user, account, operator, server, cluster, curve keys).
  { source: String.raw`\bS[UAOCNPX][A-Z2-7]{56}\b`, replace: () => REDACTED },
];

/** Escapes a string for use inside a regular expression. */
function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/**
 * The forms a secret can take in an output: as is, inside a JSON string (a log line, a stored
 * report) and percent-encoded (in a URL).
 */
export function secretForms(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]);
  return [...forms];
}

/** Removes secrets from text and plain data; see the module comment. Immutable: build another to add a secret. */
export class Redactor {
  /** The known values, each in every form of {@link secretForms}, longest first. */
  readonly secrets: readonly string[];
  /** Length of the longest known form (0 without known secrets). */
  readonly longest: number;
  readonly #re: RegExp;
  readonly #literalGroup: number;
  readonly #replace: (match: string, ...groups: unknown[]) => string;

  /** `secrets`: the values to remove (empty strings are ignored). */
  constructor(secrets: Iterable<string>) {
    const forms = new Set<string>();
    for (const s of secrets) if (s) for (const f of secretForms(s)) forms.add(f);
    // Longest first: a secret that contains another is removed whole.
    this.secrets = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.longest = this.secrets[0]?.length ?? 0;
    // One group per alternative, the known values first: at a given position a known secret wins
    // over a shape. Group 1 is the known values (absent when there are none).
    const alternatives = this.secrets.length > 0 ? [`(${this.secrets.map(escapeRegExp).join("|")})`] : [];
    this.#literalGroup = this.secrets.length > 0 ? 1 : 0;
    for (const shape of SHAPES) alternatives.push(`(${shape.source})`);
    this.#re = new RegExp(alternatives.join("|"), "g");
    const offset = this.#literalGroup;
    this.#replace = (match: string, ...groups: unknown[]): string => {
      if (offset === 1 && groups[0] !== undefined) return REDACTED;
      for (let i = 0; i < SHAPES.length; i++) if (groups[offset + i] !== undefined) return SHAPES[i]!.replace(match);
      return REDACTED;
    };
  }

  /** `text` with every secret replaced by {@link REDACTED}; the same string when it holds none. */
  text(text: string): string {
    // An exec loop, not `replace(re, fn)`: V8's replace with a function costs ten times the scan
    // as soon as one match is found (bench/redact.ts).
    const re = this.#re;
    re.lastIndex = 0;
    let m = re.exec(text);
    if (m === null) return text;
    let out = "";
    let pos = 0;
    do {
      out += text.slice(pos, m.index) + this.#replace(m[0], ...m.slice(1));
      pos = m.index + m[0].length;
      m = re.exec(text);
    } while (m !== null);
    return out + text.slice(pos);
  }

  /**
   * Every secret in `text` that begins at `from` or later, in order, not overlapping (the ones
   * {@link text} replaces). What lies before `from` is context only: a word boundary there counts.
   */
  matches(text: string, from = 0): RedactionMatch[] {
    const out: RedactionMatch[] = [];
    const re = this.#re;
    re.lastIndex = from;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      out.push({ start: m.index, end: m.index + m[0].length, replacement: this.#replace(m[0], ...m.slice(1)) });
    }
    return out;
  }

  /**
   * A copy of plain data (what JSON can carry) with every string, object keys included, passed
   * through {@link text}. Copy on write: what holds no secret is returned as is (the same object),
   * so a clean result costs a walk and no copy. Objects that are not plain (class instances,
   * Maps, Dates, Buffers) are kept as they are; a cycle is left as it is.
   */
  value<T>(value: T): T {
    return this.#walk(value, new Set()) as T;
  }

  #walk(value: unknown, path: Set<object>): unknown {
    if (typeof value === "string") return this.text(value);
    if (value === null || typeof value !== "object" || path.has(value)) return value;
    if (Array.isArray(value)) {
      path.add(value);
      let copy: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const v = this.#walk(value[i], path);
        if (v !== value[i]) (copy ??= value.slice())[i] = v;
      }
      path.delete(value);
      return copy ?? value;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    path.add(value);
    let changed = false;
    const entries: Array<[string, unknown]> = [];
    for (const [k, v] of Object.entries(value)) {
      const key = this.text(k);
      const walked = this.#walk(v, path);
      if (key !== k || walked !== v) changed = true;
      entries.push([key, walked]);
    }
    path.delete(value);
    return changed ? Object.fromEntries(entries) : value;
  }
}
