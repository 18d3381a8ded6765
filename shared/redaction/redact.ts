// runs in: both
import { REDACTED, SECRET_SHAPES, SHAPE_RULES, type SecretShape, type ShapeRule } from "./shapes.ts";

export { REDACTED };

/**
 * The redactor: removes secrets from text and from plain data. Pure (no I/O, no environment): it
 * is handed the secret values and the shapes to recognise; shared/redaction/secrets.ts builds the
 * process's redactor from the environment, the NATS credentials and the suite's `redactShapes`,
 * and gives each kind of output its function.
 *
 * A secret is replaced by {@link REDACTED} wherever it appears: a known value (and its JSON- and
 * URL-escaped forms, so a serialized line or a URL cannot carry it either), and the shapes of
 * well-known credentials, recognised without being known (shared/redaction/shapes.ts: API keys and
 * tokens by their prefixes, `Bearer <token>`, JWTs, private keys, a URL's credentials, NKey seeds).
 * One regular expression does it all in one pass, after a quick test for each shape's rarer
 * characters: the pass looks for the known values and for the shapes the test found only, so a
 * text without any costs the known values' scan and the test (measured in bench/redact.ts).
 */

/** One secret found in a text: `[start, end)` and what replaces it. */
export interface RedactionMatch {
  start: number;
  end: number;
  replacement: string;
}

/** Options of {@link Redactor}. */
export interface RedactorOptions {
  /** The shapes recognised without being known. Default: every one ({@link SECRET_SHAPES}). */
  shapes?: Iterable<SecretShape>;
}

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

/** A compiled pass: its expression, and the shape of each group after the known values' (group 1, when there are known values). */
interface Pass {
  re: RegExp;
  rules: readonly ShapeRule[];
}

/** Texts shorter than this (characters) skip the quick test (measured in bench/redact.ts). */
const SHORT_TEXT = 256;

/** Compiled passes kept per redactor at most (by the set of shapes they look for); then started again. */
const MAX_PASSES = 64;

/**
 * Texts at most this long (characters) that were found clean are remembered, so the next same
 * text (an object key, a tool's name, an agent id: most strings of every result) costs a set
 * lookup instead of a scan. Longer texts (outputs) rarely repeat, and would hold memory.
 */
export const CLEAN_MEMO_MAX_TEXT = 64;
/** Clean texts remembered per redactor at most; then it starts again (about 1 MB at most). */
export const CLEAN_MEMO_SIZE = 8192;

/** Removes secrets from text and plain data; see the module comment. Immutable: build another to add a secret. */
export class Redactor {
  /** The known values, each in every form of {@link secretForms}, longest first. */
  readonly secrets: readonly string[];
  /** Length of the longest known form (0 without known secrets). */
  readonly longest: number;
  /** The shapes recognised, in {@link SECRET_SHAPES} order. */
  readonly shapes: readonly SecretShape[];
  /** Their rules (for the streaming redactor: what may still grow into each). */
  readonly shapeRules: readonly ShapeRule[];
  /** The known values as one alternative (a group), or null without known values. */
  readonly #known: string | null;
  /** The full passes by the set of shapes (a bit per rule of {@link shapeRules}) whose quick test found something. */
  readonly #passes = new Map<number, Pass | null>();
  /** The quick tests by the set of shapes still to test: one group per shape. */
  readonly #prechecks = new Map<number, Pass>();
  /**
   * Short texts {@link text} found clean. Exact, not a heuristic: the redactor is immutable and
   * {@link text} a function of the text alone, so the same text is clean again.
   */
  readonly #clean = new Set<string>();

  /** `secrets`: the values to remove (empty strings are ignored). */
  constructor(secrets: Iterable<string>, options: RedactorOptions = {}) {
    const forms = new Set<string>();
    for (const s of secrets) if (s) for (const f of secretForms(s)) forms.add(f);
    // Longest first: a secret that contains another is removed whole.
    this.secrets = [...forms].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.longest = this.secrets[0]?.length ?? 0;
    const wanted = new Set(options.shapes ?? SECRET_SHAPES);
    this.shapes = SECRET_SHAPES.filter((name) => wanted.has(name));
    this.shapeRules = SHAPE_RULES.filter((rule) => wanted.has(rule.name));
    this.#known = this.secrets.length > 0 ? `(${this.secrets.map(escapeRegExp).join("|")})` : null;
  }

  /**
   * The pass to scan `text` with. First the shapes' quick tests (`ShapeRule.precheck`, a fraction
   * of a full pass: bench/redact.ts): a shape whose test finds nothing in `text` cannot match
   * there, so the full pass looks for the known values and the shapes found only (null: nothing
   * to look for). Each shape found drops out of the quick test, so the text is scanned about once
   * however often a shape's pivot appears in it. A short text (an object's key, a name, a
   * delta) goes straight to the full pass: there one scan costs less than a second call.
   */
  #pass(text: string): Pass | null {
    let remaining = (1 << this.shapeRules.length) - 1;
    if (text.length < SHORT_TEXT) return this.#full(remaining);
    let found = 0;
    let pos = 0;
    while (remaining !== 0) {
      const test = this.#precheck(remaining);
      test.re.lastIndex = pos;
      const m = test.re.exec(text);
      if (m === null) break;
      const i = test.rules.findIndex((_, g) => m[g + 1] !== undefined);
      const bit = 1 << this.shapeRules.indexOf(test.rules[i]!);
      found |= bit;
      remaining &= ~bit;
      pos = m.index;
    }
    return this.#full(found);
  }

  /** The quick test of the shapes in `mask`: one group per shape. */
  #precheck(mask: number): Pass {
    let test = this.#prechecks.get(mask);
    if (!test) {
      const rules = this.shapeRules.filter((_, i) => mask & (1 << i));
      test = { re: new RegExp(rules.map((r) => `(${r.precheck})`).join("|"), "g"), rules };
      if (this.#prechecks.size >= MAX_PASSES) this.#prechecks.clear();
      this.#prechecks.set(mask, test);
    }
    return test;
  }

  /** The full pass for the known values and the shapes in `mask`: one group per alternative, the known values first. */
  #full(mask: number): Pass | null {
    let pass = this.#passes.get(mask);
    if (pass === undefined) {
      const rules = this.shapeRules.filter((_, i) => mask & (1 << i));
      // At a given position a known secret wins over a shape (the first alternative that matches).
      const alternatives = [...(this.#known ? [this.#known] : []), ...rules.map((rule) => `(${rule.sources.join("|")})`)];
      pass = alternatives.length > 0 ? { re: new RegExp(alternatives.join("|"), "g"), rules } : null;
      if (this.#passes.size >= MAX_PASSES) this.#passes.clear();
      this.#passes.set(mask, pass);
    }
    return pass;
  }

  /** What replaces a match `m` of `pass`. */
  #replacement(pass: Pass, m: RegExpExecArray): string {
    const offset = this.#known ? 1 : 0;
    if (offset === 1 && m[1] !== undefined) return REDACTED;
    for (let i = 0; i < pass.rules.length; i++) if (m[offset + 1 + i] !== undefined) return pass.rules[i]!.replace(m[0], m.input, m.index);
    return REDACTED;
  }

  /** `text` with every secret replaced by {@link REDACTED}; the same string when it holds none. */
  text(text: string): string {
    const memo = text.length <= CLEAN_MEMO_MAX_TEXT;
    if (memo && this.#clean.has(text)) return text;
    const pass = this.#pass(text);
    if (pass === null) return text;
    const re = pass.re;
    // An exec loop, not `replace(re, fn)`: V8's replace with a function costs ten times the scan
    // as soon as one match is found (bench/redact.ts).
    re.lastIndex = 0;
    let m = re.exec(text);
    if (m === null) {
      if (memo) {
        if (this.#clean.size >= CLEAN_MEMO_SIZE) this.#clean.clear();
        this.#clean.add(text);
      }
      return text;
    }
    let out = "";
    let pos = 0;
    do {
      out += text.slice(pos, m.index) + this.#replacement(pass, m);
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
    const pass = this.#pass(text);
    if (pass === null) return out;
    const re = pass.re;
    re.lastIndex = from;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      out.push({ start: m.index, end: m.index + m[0].length, replacement: this.#replacement(pass, m) });
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
    // The entries are built only from the first change on: a clean object (most) allocates nothing.
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    let entries: Array<[string, unknown]> | null = null;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = record[k];
      const key = this.text(k);
      const walked = this.#walk(v, path);
      if (entries === null && (key !== k || walked !== v)) {
        entries = [];
        for (let j = 0; j < i; j++) entries.push([keys[j]!, record[keys[j]!]]);
      }
      entries?.push([key, walked]);
    }
    path.delete(value);
    return entries ? Object.fromEntries(entries) : value;
  }
}
