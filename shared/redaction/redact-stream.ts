// runs in: both
import type { RedactionMatch, Redactor } from "./redact.ts";
import { LOOKBEHIND, PRIVATE_KEY_SO_FAR } from "./shapes.ts";

/**
 * Redaction of streamed text, where a secret may arrive split across chunks (`"...key: sk-ab"`,
 * then `"cdef..."`): each piece alone holds no secret, yet together they print one. Pure.
 *
 * What may still grow into a secret is held back until the next chunk (or the end) decides it:
 * the longest end of the text that begins a known secret (so at most the longest secret minus one
 * character), the end of the last word when it is, or may still grow into, a key shape
 * (shapes.ts: `ghp_...`, `sk-...`, a JWT, a URL's credentials, ...; a shape complete so far may
 * still grow, or stop being one), `Bearer <token>` from its word, and a private key block from its
 * BEGIN line until its END line is complete. Everything else goes out at once, and the last
 * {@link LOOKBEHIND} characters of it stay as context (a word boundary, a NATS scheme before its
 * `://`). What comes out is
 * what redacting the whole stream at once gives, as long as nothing held grows past `maxHold`
 * characters (a key-shaped word that long is let go, redacted as far as it is known).
 *
 * - {@link StreamRedactor}: one stream of text chunks (push, then flush at the end).
 * - {@link EventStreamRedactor}: a stream of events (plain objects), whose string fields at the
 *   same place (`delta`, `data.delta`, ...) form one text each. Events are held back whole, and
 *   released in order and unchanged but for their secrets; no text moves between events.
 */

/**
 * Longest text held back for a word that may still grow into a key shape, in characters: a bound
 * of the redactor's design, not a setting (a test shrinks it through the `maxHold` option).
 */
export const MAX_HOLD_CHARS = 4096;

/** Events held back at most before the oldest is let go (a stream that stops sending text). */
export const MAX_HELD_EVENTS = 1000;

/** ASCII whitespace, and whatever `\s` matches above it. */
function isSpace(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code > 127 && /\s/.test(String.fromCharCode(code));
}

/** Whether the character at `i` is one `\b` counts as part of a word (false outside the text). */
function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** A bearer token's characters, so far. */
const TOKEN_SO_FAR = /^[A-Za-z0-9._~+/=-]*$/;

/** What a redactor's shapes need of the streaming redactor, worked out once per redactor. */
interface ShapeHold {
  /** The end of a text that is, or may still grow into, one of the shapes (shapes.ts `growing`), anchored. */
  prefix: RegExp | null;
  /** The character codes a shape may begin with. */
  starts: ReadonlySet<number>;
  /** Whether `Bearer <token>` is looked for (its gap is followed by hand). */
  bearer: boolean;
  /** Whether private keys are looked for (the one shape that spans whitespace). */
  privateKey: boolean;
}

const holds = new WeakMap<Redactor, ShapeHold>();
function shapeHold(r: Redactor): ShapeHold {
  let hold = holds.get(r);
  if (!hold) {
    const growing = r.shapeRules.flatMap((rule) => rule.growing);
    hold = {
      prefix: growing.length > 0 ? new RegExp(`^(?:${growing.join("|")})$`) : null,
      starts: new Set(r.shapeRules.flatMap((rule) => [...rule.starts].map((c) => c.charCodeAt(0)))),
      bearer: r.shapes.includes("bearer"),
      privateKey: r.shapes.includes("private-key"),
    };
    holds.set(r, hold);
  }
  return hold;
}

/** The known secrets of a redactor by their first character's code, to find the ones a text's end may begin. */
const byFirstChar = new WeakMap<Redactor, Map<number, string[]>>();
function secretsByFirstChar(r: Redactor): Map<number, string[]> {
  let map = byFirstChar.get(r);
  if (!map) {
    map = new Map();
    for (const s of r.secrets) {
      const list = map.get(s.charCodeAt(0)) ?? [];
      list.push(s);
      map.set(s.charCodeAt(0), list);
    }
    byFirstChar.set(r, map);
  }
  return map;
}

/**
 * Where the end of `text` that may still grow into a secret begins (`text.length` when none
 * may); see the module comment. What lies before `from` is context already released (for word
 * boundaries and look-behinds). Never earlier than `from`, nor than `text.length - max(maxHold, longest - 1)`.
 */
export function holdStart(text: string, r: Redactor, { from = 0, maxHold = MAX_HOLD_CHARS }: { from?: number; maxHold?: number } = {}): number {
  const n = text.length;
  const floor = Math.max(from, n - Math.max(maxHold, r.longest - 1));
  let start = n;
  // The earliest end of the text that is the beginning of a known secret.
  const firsts = secretsByFirstChar(r);
  for (let i = Math.max(floor, n - r.longest + 1); i < n; i++) {
    const candidates = firsts.get(text.charCodeAt(i));
    if (!candidates) continue;
    const tail = text.slice(i);
    if (candidates.some((s) => s.length > tail.length && s.startsWith(tail))) {
      start = i;
      break;
    }
  }
  const shapes = shapeHold(r);
  // An open private key block (its end line not yet complete), from its BEGIN line.
  if (shapes.privateKey) {
    const begin = text.lastIndexOf("-----BEGIN", n);
    if (begin >= floor && begin < start && PRIVATE_KEY_SO_FAR.test(text.slice(begin))) start = begin;
  }
  // The last word, when it begins a key shape; with a `Bearer ` before it, from there.
  let word = n;
  while (word > floor && !isSpace(text.charCodeAt(word - 1))) word--;
  if (shapes.bearer) {
    let gap = word;
    while (gap > floor && (text.charCodeAt(gap - 1) === 32 || text.charCodeAt(gap - 1) === 9)) gap--;
    const bearer = gap - 6;
    if (gap < word && bearer >= floor && /^[Bb]earer$/.test(text.slice(bearer, gap)) && !isWordChar(text, bearer - 1) && TOKEN_SO_FAR.test(text.slice(word))) {
      return Math.min(start, bearer);
    }
  }
  if (shapes.prefix === null) return start;
  for (let j = word; j < Math.min(n, start); j++) {
    if (!shapes.starts.has(text.charCodeAt(j))) continue;
    // A shape that begins with a letter begins at a word boundary (shapes.ts).
    if (isWordChar(text, j) && isWordChar(text, j - 1)) continue;
    if (shapes.prefix.test(text.slice(j))) return j;
  }
  return start;
}

/** A text split at `cut` without cutting a secret: `cut` moves back to the start of a match it falls inside. */
function safeCut(matches: readonly RedactionMatch[], cut: number): number {
  for (const m of matches) {
    if (m.start >= cut) break;
    if (m.end > cut) return m.start;
  }
  return cut;
}

/** `text` from `from` to `to` with `matches` (absolute offsets, `offset` = where `text` begins) replaced. */
function applyMatches(text: string, offset: number, from: number, to: number, matches: readonly RedactionMatch[]): string {
  let out = "";
  let pos = from;
  for (const m of matches) {
    if (m.end <= pos) continue;
    if (m.start >= to) break;
    // A secret that began before `from` had its marker written there: only drop its rest.
    if (m.start >= pos) out += text.slice(pos - offset, m.start - offset) + m.replacement;
    pos = Math.min(m.end, to);
  }
  if (pos < to) out += text.slice(pos - offset, to - offset);
  return out;
}

/** Sets an own property, even one named `__proto__` (parsed JSON may carry one). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** Redacts one stream of text chunks: see the module comment. */
export class StreamRedactor {
  readonly #r: Redactor;
  readonly #maxHold: number;
  /** What is held back, after up to {@link LOOKBEHIND} characters already released (context). */
  #held = "";
  #context = 0;

  constructor(redactor: Redactor, { maxHold = MAX_HOLD_CHARS }: { maxHold?: number } = {}) {
    this.#r = redactor;
    this.#maxHold = maxHold;
  }

  /** Takes the next chunk; returns the text that can go out now (possibly empty). */
  push(chunk: string): string {
    const text = this.#held + chunk;
    const from = this.#context;
    const matches = this.#r.matches(text, from);
    const cut = safeCut(matches, holdStart(text, this.#r, { from, maxHold: this.#maxHold }));
    if (cut === from) {
      this.#held = text;
      return "";
    }
    this.#context = Math.min(cut, LOOKBEHIND);
    this.#held = text.slice(cut - this.#context);
    return applyMatches(text, 0, from, cut, matches);
  }

  /** The end of the stream: what was held back, redacted. */
  flush(): string {
    const text = this.#held;
    const from = this.#context;
    this.#held = "";
    this.#context = 0;
    return applyMatches(text, 0, from, text.length, this.#r.matches(text, from));
  }
}

/** A string field of a held event: where it sits, and its place in its path's text. */
interface Leaf {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  path: string;
  /** Absolute offsets in the path's text. */
  start: number;
  end: number;
}

/** The text of the string fields at one path, from the last character released on. */
interface PathText {
  text: string;
  /** Absolute offset of `text[0]`: {@link LOOKBEHIND} before `released` (context for word boundaries and look-behinds), or 0. */
  base: number;
  /** Absolute offset up to which the text has gone out. */
  released: number;
  /** Absolute offset before which the text lies inside a secret already replaced (its marker went out). */
  cut: number;
  /** The secrets in `text` from `max(cut, released)` on (absolute offsets), until more text arrives. */
  matches: RedactionMatch[] | null;
}

/** Redacts a stream of events: see the module comment. */
export class EventStreamRedactor {
  readonly #r: Redactor;
  readonly #maxHold: number;
  readonly #held: Array<{ event: Record<string, unknown>; leaves: Leaf[] }> = [];
  readonly #paths = new Map<string, PathText>();

  constructor(redactor: Redactor, { maxHold = MAX_HOLD_CHARS }: { maxHold?: number } = {}) {
    this.#r = redactor;
    this.#maxHold = maxHold;
  }

  /** Takes the next event (left untouched); returns the events that can go out now, oldest first, redacted copies. */
  push(event: Record<string, unknown>): Array<Record<string, unknown>> {
    const leaves: Leaf[] = [];
    const copy = this.#copy(event, "", leaves) as Record<string, unknown>;
    this.#held.push({ event: copy, leaves });
    return this.#release(false);
  }

  /** The end of the stream (the case ended): every event still held, redacted. */
  flush(): Array<Record<string, unknown>> {
    const out = this.#release(true);
    this.#paths.clear();
    return out;
  }

  /** A copy of plain data with keys redacted now and every string recorded as a leaf of its path. */
  #copy(value: unknown, path: string, leaves: Leaf[]): unknown {
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      value.forEach((v, i) => out.push(this.#child(out, i, v, `${path}[${i}]`, leaves)));
      return out;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = this.#r.text(k);
      setOwn(out, key, this.#child(out, key, v, `${path}.${k}`, leaves));
    }
    return out;
  }

  #child(holder: Record<string, unknown> | unknown[], key: string | number, value: unknown, path: string, leaves: Leaf[]): unknown {
    if (typeof value !== "string") return this.#copy(value, path, leaves);
    let p = this.#paths.get(path);
    if (!p) this.#paths.set(path, (p = { text: "", base: 0, released: 0, cut: 0, matches: null }));
    const start = p.base + p.text.length;
    p.text += value;
    p.matches = null;
    leaves.push({ holder, key, path, start, end: start + value.length });
    return value;
  }

  #release(all: boolean): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    while (this.#held.length > 0) {
      const head = this.#held[0]!;
      if (!all && this.#held.length <= MAX_HELD_EVENTS && !head.leaves.every((l) => this.#settled(l))) break;
      this.#held.shift();
      for (const leaf of head.leaves) this.#apply(leaf);
      out.push(head.event);
    }
    return out;
  }

  /** Whether nothing after `leaf` can still make a secret of its end. */
  #settled(leaf: Leaf): boolean {
    const p = this.#paths.get(leaf.path)!;
    return leaf.end <= p.base + holdStart(p.text, this.#r, { from: p.released - p.base, maxHold: this.#maxHold });
  }

  /** Writes the leaf's redacted text into its event, then drops its path's text up to the leaf's end. */
  #apply(leaf: Leaf): void {
    const p = this.#paths.get(leaf.path)!;
    p.matches ??= this.#r.matches(p.text, Math.max(p.cut, p.released) - p.base).map((m) => ({ ...m, start: m.start + p.base, end: m.end + p.base }));
    const from = Math.max(leaf.start, p.cut);
    const text = from < leaf.end ? applyMatches(p.text, p.base, from, leaf.end, p.matches) : "";
    // A secret that runs on into later events: its marker went out here, the rest is dropped there.
    const running = p.matches.find((m) => m.start < leaf.end && m.end > leaf.end);
    if (running) p.cut = Math.max(p.cut, running.end);
    if (Array.isArray(leaf.holder)) leaf.holder[leaf.key as number] = text;
    else setOwn(leaf.holder, leaf.key as string, text);
    p.released = leaf.end;
    const base = Math.max(0, leaf.end - LOOKBEHIND);
    if (base > p.base) {
      p.text = p.text.slice(base - p.base);
      p.base = base;
    }
  }
}
