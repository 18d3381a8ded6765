// runs in: both
/**
 * How a replayed request finds its recorded answer. Pure: no I/O.
 *
 * A request's key is its method (upper case), its URL (as `new URL` writes it: host lower case,
 * default port dropped) and its body normalised: a JSON body is written again with its object keys
 * sorted and no whitespace, so key order and formatting never matter; any other body is compared as
 * is. Both sides are keyed after redaction, so a secret in a URL or body still matches.
 *
 * Repeats: the same key asked twice gets the exchanges recorded under it in recorded order (the
 * first call the first answer, the second the second). Concurrency: a request takes the first
 * exchange with its key that no earlier request took, wherever it stands among the case's
 * exchanges, so two requests in flight at once match whatever order they were recorded in. A key
 * with nothing left unused is a miss.
 */

/** `value` as canonical JSON: object keys sorted, no whitespace (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/** A body as compared: JSON written canonically ({@link canonicalJson}), other text as is, none as "". */
export function normalizedBody(text: string | null): string {
  if (text === null || text === "") return "";
  const first = text.trimStart()[0];
  // Only what could be JSON is parsed: a form or plain text body is compared byte for byte.
  if (first === "{" || first === "[" || first === '"') {
    try {
      return canonicalJson(JSON.parse(text));
    } catch {
      return text;
    }
  }
  return text;
}

/** The URL as `new URL` writes it; a string that is no URL as given. */
export function normalizedUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** The matching key of a request (see the module comment). */
export function requestKey(method: string, url: string, body: string | null): string {
  return `${method.toUpperCase()} ${normalizedUrl(url)}\n${normalizedBody(body)}`;
}

/** The matching key of a tool call: its name and its arguments as canonical JSON. */
export function toolKey(name: string, args: unknown): string {
  return `${name}\n${args === undefined ? "" : canonicalJson(args)}`;
}

/**
 * Hands out recorded entries by key: each key's entries in recorded order, each entry once (see
 * the module comment). `T` is whatever was recorded (an exchange, a tool call).
 */
export class CassettePlayer<T> {
  /** Per key, the positions of its entries not yet taken, in recorded order. */
  readonly #queues = new Map<string, T[]>();
  #left: number;

  /** `entries` in recorded order; `keyOf` gives each one's key. */
  constructor(entries: readonly T[], keyOf: (entry: T) => string) {
    for (const e of entries) {
      const key = keyOf(e);
      const q = this.#queues.get(key);
      if (q) q.push(e);
      else this.#queues.set(key, [e]);
    }
    this.#left = entries.length;
  }

  /** The first entry of `key` no one took yet, now taken; null: none left (a miss). */
  take(key: string): T | null {
    const q = this.#queues.get(key);
    if (!q || q.length === 0) return null;
    this.#left--;
    return q.shift()!;
  }

  /** How many recorded entries no request took (a replay that asked for less than was recorded). */
  get unused(): number {
    return this.#left;
  }
}
