// runs in: both
/**
 * Trajectory expectations as a suite writes them (`expectedToolCalls`, `forbiddenToolCalls`, and a
 * dataset row's `expected_tools` / `forbidden_tools`): a tool name, or `{ name, args, times,
 * result }`, whose argument and result matchers are values (deep equality), `RegExp`s (in code),
 * `{ "$regex": "...", "$flags": "i" }` objects (the form data files can write) or predicate
 * functions (in code). This module holds their validation (a malformed matcher is a load error),
 * their one-line descriptions (what a failed check's reason says) and the form the suite
 * fingerprint hashes. Pure; no I/O. The matching itself is worker/runtime/checks/trajectory.ts.
 */

/** How the expected calls are compared with the calls made (`toolCallOrder`, row field `tool_call_order`). */
export const TOOL_CALL_ORDERS = ["any", "in_order", "exact"] as const;
/**
 * `any` (default): each expected call was made, in any order (Agno's subset rule); `in_order`: the
 * expected calls appear in this order, other calls may come between; `exact`: exactly these calls
 * in this order and nothing else.
 */
export type ToolCallOrder = (typeof TOOL_CALL_ORDERS)[number];

/** A regular expression as data can write it: `{ "$regex": "^Lon", "$flags": "i" }`. */
export interface RegexPattern {
  $regex: string;
  /** RegExp flags (`i`, `m`, `s`, `u`); `g` and `y` are accepted and ignored (a match is a test). */
  $flags?: string;
}

/** A predicate on one argument's value (or the result); a truthy answer is a match. */
export type ValuePredicate = (value: unknown) => unknown;

/**
 * What an expected argument or result is compared with: a plain value (deep equality, and inside
 * objects and lists each value may itself be a matcher), a `RegExp` or a {@link RegexPattern}
 * (tests a string value), or a {@link ValuePredicate}.
 */
export type ValueMatcher = unknown;

/** One expected (or forbidden) tool call. */
export interface ToolCallMatcher {
  /** The tool's name; `member/tool` names a team member's call (by the member output's `agentId`). */
  name: string;
  /** Arguments that must match, by name; arguments not listed are free. */
  args?: Readonly<Record<string, ValueMatcher>>;
  /** Exactly this many matching calls (a whole number >= 0). Not for forbidden calls. */
  times?: number;
  /** What the call must have returned. */
  result?: ValueMatcher;
}

/** An entry of `expectedToolCalls` or `forbiddenToolCalls`: a tool name, or a {@link ToolCallMatcher}. */
export type ToolCallExpectation = string | ToolCallMatcher;

/** The keys a {@link ToolCallMatcher} may have. */
export const TOOL_CALL_MATCHER_KEYS = ["name", "args", "times", "result"] as const;
const MATCHER_KEYS: ReadonlySet<string> = new Set(TOOL_CALL_MATCHER_KEYS);
const REGEX_KEYS: ReadonlySet<string> = new Set(["$regex", "$flags"]);

/** A problem of one entry of a list of expectations: where (relative to the list) and what. */
export interface MatcherProblem {
  /** `[1, "args", "city", "$regex"]`: the entry's index, then the keys down to the bad value. */
  path: readonly (string | number)[];
  /** Reads after the path: `is not a valid regex (Unterminated character class)`. */
  message: string;
}

/** Where a list of expectations comes from, for the checks that depend on it. */
export interface MatcherListContext {
  /** `forbiddenToolCalls`: `times` has no meaning there. */
  forbidden: boolean;
  /** A dataset row: names must not be empty (code keeps Agno's leniency for a bare name). */
  fromData: boolean;
}

/** True for a RegExp, whichever realm built it. */
export function isRegExp(value: unknown): value is RegExp {
  return value instanceof RegExp || Object.prototype.toString.call(value) === "[object RegExp]";
}

/** An object literal (or `Object.create(null)`): what matchers nest. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** True for `{ $regex, $flags? }` (and any object whose keys start with `$`: a matcher, valid or not). */
export function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  for (const key in value) if (key.startsWith("$")) return true;
  return false;
}

/**
 * Every problem of a list of expectations (empty when it is valid). `list` that is not an array
 * is one problem at the list itself (path `[]`).
 */
export function toolCallListProblems(list: unknown, context: MatcherListContext): MatcherProblem[] {
  const problems: MatcherProblem[] = [];
  if (!Array.isArray(list)) {
    problems.push({ path: [], message: "must be a list of tool names or { name, args, times, result } matchers" });
    return problems;
  }
  for (let i = 0; i < list.length; i++) entryProblems(list[i], i, context, problems);
  return problems;
}

function entryProblems(entry: unknown, i: number, context: MatcherListContext, out: MatcherProblem[]): void {
  if (typeof entry === "string") {
    if (context.fromData && entry.length === 0) out.push({ path: [i], message: "must not be empty" });
    return;
  }
  if (!isPlainObject(entry)) {
    out.push({ path: [i], message: "must be a tool name (text) or a { name, args, times, result } matcher" });
    return;
  }
  for (const key of Object.keys(entry)) {
    if (!MATCHER_KEYS.has(key)) out.push({ path: [i], message: `has an unknown key ${quote(key)} (a matcher has: ${TOOL_CALL_MATCHER_KEYS.join(", ")})` });
  }
  if (Object.getOwnPropertySymbols(entry).length > 0) out.push({ path: [i], message: "has a symbol key (a matcher has: name, args, times, result)" });
  const { name, args, times, result } = entry;
  if (typeof name !== "string" || name.length === 0) out.push({ path: [i, "name"], message: "must be a tool name (non-empty text)" });
  if (args !== undefined) {
    if (!isPlainObject(args)) out.push({ path: [i, "args"], message: "must be an object of argument matchers by name" });
    else for (const key of Object.keys(args)) valueProblems(args[key], [i, "args", key], context.fromData, out, new Set());
  }
  if (times !== undefined) {
    if (context.forbidden) out.push({ path: [i, "times"], message: "has no meaning for a forbidden call (any matching call fails the check)" });
    else if (typeof times !== "number" || !Number.isInteger(times) || times < 0) out.push({ path: [i, "times"], message: "must be a whole number >= 0" });
  }
  if ("result" in entry && result !== undefined) valueProblems(result, [i, "result"], context.fromData, out, new Set());
}

function valueProblems(value: unknown, path: (string | number)[], fromData: boolean, out: MatcherProblem[], seen: Set<object>): void {
  if (value === null || value === undefined) return;
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean") return;
  if (type === "function") {
    if (fromData) out.push({ path, message: "cannot be a function in data" });
    return;
  }
  if (type !== "object") {
    out.push({ path, message: `must be a value, a RegExp, { "$regex": ... } or a predicate function, not a ${type}` });
    return;
  }
  if (isRegExp(value)) return;
  const obj = value as object;
  if (seen.has(obj)) {
    out.push({ path, message: "refers to itself (a circular matcher)" });
    return;
  }
  seen.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) valueProblems(obj[i], [...path, i], fromData, out, seen);
  } else if (!isPlainObject(obj)) {
    const kind = (obj as { constructor?: { name?: string } }).constructor?.name ?? "object";
    out.push({ path, message: `must be a value, a RegExp, { "$regex": ... } or a predicate function, not a ${kind}` });
  } else if (isOperatorObject(obj)) {
    regexProblems(obj, path, out);
  } else {
    for (const key of Object.keys(obj)) valueProblems(obj[key], [...path, key], fromData, out, seen);
  }
  seen.delete(obj);
}

function regexProblems(obj: Record<string, unknown>, path: (string | number)[], out: MatcherProblem[]): void {
  const unknown = Object.keys(obj).filter((k) => !REGEX_KEYS.has(k));
  if (unknown.length > 0) {
    out.push({ path, message: `has ${unknown.length === 1 ? "an unknown key" : "unknown keys"} ${unknown.map(quote).join(", ")} (a matcher object is { "$regex": "...", "$flags": "i" })` });
    return;
  }
  const { $regex: source, $flags: flags } = obj;
  if (typeof source !== "string") {
    out.push({ path: [...path, "$regex"], message: "must be a regular expression (text)" });
    return;
  }
  if (flags !== undefined && typeof flags !== "string") {
    out.push({ path: [...path, "$flags"], message: "must be RegExp flags (text, such as \"i\")" });
    return;
  }
  if (flags !== undefined && (!/^[dgimsuvy]*$/.test(flags) || new Set(flags).size !== flags.length)) {
    out.push({ path: [...path, "$flags"], message: "must be RegExp flags, each at most once (d, g, i, m, s, u, v, y)" });
    return;
  }
  try {
    new RegExp(source, (flags ?? "").replace(/[gy]/g, ""));
  } catch (err) {
    // "Invalid regular expression: /[/: Unterminated character class": the path already says which.
    const message = (err as Error).message;
    if (message.startsWith("Invalid flags")) out.push({ path: [...path, "$flags"], message: `is not a valid set of RegExp flags (${message})` });
    else out.push({ path: [...path, "$regex"], message: `is not a valid regex (${message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, "")})` });
  }
}

function quote(key: string): string {
  return `'${key.replace(/'/g, "\\'")}'`;
}

/** Longest rendering of one value in a description, in characters. */
const VALUE_CHARS = 60;

/** A value as descriptions show it: strings in double quotes, RegExps as `/source/flags`, predicates as `<predicate name>`. */
export function describeValue(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (value === undefined) text = "undefined";
  else if (typeof value === "function") text = value.name ? `<predicate ${value.name}>` : "<predicate>";
  else if (isRegExp(value)) text = `/${value.source}/${value.flags.replace(/[gy]/g, "")}`;
  else if (value === null || typeof value !== "object") text = String(value);
  else if (isOperatorObject(value) && typeof value.$regex === "string") text = `/${value.$regex}/${typeof value.$flags === "string" ? value.$flags.replace(/[gy]/g, "") : ""}`;
  else text = describeStructure(value);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 3)}...` : text;
}

function describeStructure(value: object): string {
  try {
    // The calls an agent made hold plain data: the replacer below is only for matchers.
    if (!holdsMatcher(value, 0)) return JSON.stringify(value) ?? String(value);
    return (
      JSON.stringify(value, (_k, v: unknown) => {
        if (typeof v === "function" || isRegExp(v)) return describeValue(v);
        if (isOperatorObject(v) && typeof v.$regex === "string") return describeValue(v);
        return v;
      }) ?? String(value)
    );
  } catch {
    return String(value);
  }
}

/** True when a structure holds a function, a RegExp or a `$regex` object (within a few levels). */
function holdsMatcher(value: object, depth: number): boolean {
  if (depth > 8) return true;
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const v of items) {
    if (typeof v === "function" || isRegExp(v) || isOperatorObject(v)) return true;
    if (v !== null && typeof v === "object" && holdsMatcher(v, depth + 1)) return true;
  }
  return false;
}

/**
 * An expectation in one line, as reasons and the console show it: `get_weather(city="London")`,
 * `search 2 times`, `lookup(q=/^par/i) -> {"found":true}`; a name without listed arguments stays
 * a bare name (its arguments are free).
 */
export function describeExpectation(entry: ToolCallExpectation): string {
  if (typeof entry === "string") return entry;
  const args = entry.args ? Object.keys(entry.args).map((k) => `${k}=${describeValue(entry.args![k])}`) : [];
  let text = args.length > 0 ? `${entry.name}(${args.join(", ")})` : entry.name;
  if ("result" in entry && entry.result !== undefined) text += ` -> ${describeValue(entry.result)}`;
  if (typeof entry.times === "number") text += ` ${entry.times} time${entry.times === 1 ? "" : "s"}`;
  return text;
}

/**
 * The form of a list of expectations the suite fingerprint hashes: plain data. A bare name stays
 * a name (so a suite of names keeps its fingerprint); a RegExp becomes `{ $regex, $flags }`. A
 * predicate function cannot be serialised: it is hashed as `{ "$predicate": true }`, so replacing
 * a value by a predicate (or one by the other) changes the fingerprint, but editing a predicate's
 * body does not (as with a scorer, whose presence only is hashed).
 */
export function expectationsFingerprint(list: readonly ToolCallExpectation[] | null): unknown {
  if (list === null) return null;
  return list.map((entry) => (typeof entry === "string" ? entry : fingerprintValue(entry, new Set())));
}

function fingerprintValue(value: unknown, seen: Set<object>): unknown {
  if (value === undefined) return { $undefined: true };
  if (typeof value === "function") return { $predicate: true };
  if (value === null || typeof value !== "object") return value;
  if (isRegExp(value)) return { $regex: value.source, $flags: value.flags };
  if (seen.has(value)) return { $circular: true };
  seen.add(value);
  const out = Array.isArray(value) ? value.map((v) => fingerprintValue(v, seen)) : Object.fromEntries(Object.keys(value).map((k) => [k, fingerprintValue((value as Record<string, unknown>)[k], seen)]));
  seen.delete(value);
  return out;
}

/** True when every entry is a plain tool name (the lists Agno's suites write). */
export function allNames(list: readonly unknown[]): boolean {
  for (let i = 0; i < list.length; i++) if (typeof list[i] !== "string") return false;
  return true;
}
