import { describeError } from "../../../shared/errors.ts";
import { describeExpectation, describeValue, isOperatorObject, isRegExp, type ToolCallExpectation } from "../../../shared/case/tool-call-matchers.ts";

/**
 * The matching half of the trajectory check: expectations (shared/case/tool-call-matchers.ts)
 * compiled once into tests, a tool call's arguments and result tested against them, and a call
 * described as a reason shows it. Pure; no I/O. The expectations were validated when the case was
 * built, so compiling never fails.
 */

/** A compiled value matcher. */
type ValueTest =
  | { kind: "equal"; value: unknown }
  | { kind: "regex"; re: RegExp }
  | { kind: "predicate"; fn: (value: unknown) => unknown; where: string }
  | { kind: "list"; items: ValueTest[] }
  | { kind: "object"; keys: string[]; tests: ValueTest[] };

/** One expectation, compiled. */
export interface CompiledCall {
  /** Its index in the list it came from. */
  index: number;
  /** How reasons show it: `get_weather(city="London")`. */
  label: string;
  /** The name as written. */
  name: string;
  /** For `member/tool`: the member and the tool (used when the run has that member). */
  member: string | null;
  tool: string;
  argKeys: string[];
  argTests: ValueTest[];
  result: ValueTest | null;
  times: number | null;
}

/** A predicate of a matcher threw: the check cannot decide (the lifecycle records it as the check's error). */
export class TrajectoryPredicateError extends Error {
  override readonly name = "TrajectoryPredicateError";
}

/** Compiled lists, by list: a case's lists are frozen, so each is compiled once per thread. */
const compiled = new WeakMap<readonly ToolCallExpectation[], CompiledCall[]>();

/** The expectations of `list` compiled (`field` names them in a predicate's error: `expectedToolCalls`). */
export function compileCalls(list: readonly ToolCallExpectation[], field: string): CompiledCall[] {
  const cached = compiled.get(list);
  if (cached) return cached;
  const out = list.map((entry, i) => compileCall(entry, i, `${field}[${i}]`));
  if (Object.isFrozen(list)) compiled.set(list, out);
  return out;
}

function compileCall(entry: ToolCallExpectation, index: number, where: string): CompiledCall {
  const name = typeof entry === "string" ? entry : entry.name;
  const slash = name.indexOf("/");
  const call: CompiledCall = {
    index,
    label: describeExpectation(entry),
    name,
    member: slash > 0 ? name.slice(0, slash) : null,
    tool: slash > 0 ? name.slice(slash + 1) : name,
    argKeys: [],
    argTests: [],
    result: null,
    times: null,
  };
  if (typeof entry === "string") return call;
  if (entry.args) {
    for (const key of Object.keys(entry.args)) {
      call.argKeys.push(key);
      call.argTests.push(compileValue(entry.args[key], `${where}.args.${key}`));
    }
  }
  if ("result" in entry && entry.result !== undefined) call.result = compileValue(entry.result, `${where}.result`);
  if (typeof entry.times === "number") call.times = entry.times;
  return call;
}

function compileValue(value: unknown, where: string): ValueTest {
  if (typeof value === "function") return { kind: "predicate", fn: value as (v: unknown) => unknown, where };
  if (isRegExp(value)) return { kind: "regex", re: new RegExp(value.source, value.flags.replace(/[gy]/g, "")) };
  if (value === null || typeof value !== "object") return { kind: "equal", value };
  if (isOperatorObject(value)) return { kind: "regex", re: new RegExp(String(value.$regex), typeof value.$flags === "string" ? value.$flags.replace(/[gy]/g, "") : "") };
  if (!holdsMatcher(value)) return { kind: "equal", value };
  if (Array.isArray(value)) return { kind: "list", items: value.map((v, i) => compileValue(v, `${where}[${i}]`)) };
  const keys = Object.keys(value).filter((k) => (value as Record<string, unknown>)[k] !== undefined);
  return { kind: "object", keys, tests: keys.map((k) => compileValue((value as Record<string, unknown>)[k], `${where}.${k}`)) };
}

/** True when a structure holds a RegExp, a `$regex` object or a predicate anywhere (else deep equality does). */
function holdsMatcher(value: object): boolean {
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const v of items) {
    if (typeof v === "function" || isRegExp(v) || isOperatorObject(v)) return true;
    if (v !== null && typeof v === "object" && holdsMatcher(v)) return true;
  }
  return false;
}

/** Whether `actual` matches the test. Throws {@link TrajectoryPredicateError} when a predicate throws. */
export function matchValue(test: ValueTest, actual: unknown): boolean {
  switch (test.kind) {
    case "equal":
      return deepEqual(test.value, actual);
    case "regex":
      return typeof actual === "string" && test.re.test(actual);
    case "predicate":
      try {
        return Boolean(test.fn(actual));
      } catch (err) {
        throw new TrajectoryPredicateError(`the predicate of ${test.where} threw ${describeError(err)}`);
      }
    case "list":
      if (!Array.isArray(actual) || actual.length !== test.items.length) return false;
      for (let i = 0; i < test.items.length; i++) if (!matchValue(test.items[i]!, actual[i])) return false;
      return true;
    case "object": {
      if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
      const a = actual as Record<string, unknown>;
      let count = 0;
      for (const k in a) if (a[k] !== undefined) count++;
      if (count !== test.keys.length) return false;
      for (let i = 0; i < test.keys.length; i++) if (!matchValue(test.tests[i]!, a[test.keys[i]!])) return false;
      return true;
    }
  }
}

/** Deep equality of JSON-like data: NaN equals NaN, keys whose value is `undefined` are absent ones. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    count++;
    if (!deepEqual(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) count--;
  return count === 0;
}

/** A call's arguments as an object: `toolArgs`, or arguments given as JSON text; `{}` otherwise. */
export function argsObject(args: unknown): Record<string, unknown> {
  if (args !== null && typeof args === "object" && !Array.isArray(args)) return args as Record<string, unknown>;
  if (typeof args === "string" && args.trimStart().startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(args);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: no arguments to match.
    }
  }
  return EMPTY;
}

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/** How many of the call's listed arguments (and its result) match: what "closest" means in a reason. */
export function matchScore(call: CompiledCall, args: Record<string, unknown>, result: unknown, hasResult: boolean): number {
  let score = 0;
  for (let i = 0; i < call.argKeys.length; i++) if (matchValue(call.argTests[i]!, args[call.argKeys[i]!])) score++;
  if (call.result && hasResult && matchValue(call.result, result)) score++;
  return score;
}

/** Whether the arguments and result match every test of the call (the name is checked by the caller). */
export function matchesCall(call: CompiledCall, args: Record<string, unknown>, result: unknown, hasResult: boolean): boolean {
  for (let i = 0; i < call.argKeys.length; i++) if (!matchValue(call.argTests[i]!, args[call.argKeys[i]!])) return false;
  if (call.result && !(hasResult && matchValue(call.result, result))) return false;
  return true;
}

/** Longest description of a call made, in characters. */
const CALL_CHARS = 200;

/**
 * A call made, as a reason shows it beside an expectation: `get_weather(city="Paris", ...)`. With
 * `like`, the arguments it lists (those that decide), `...` for the others, and the result when it
 * tests one; without, the first three arguments.
 */
export function describeCall(tool: string, member: string | null, args: Record<string, unknown>, result: unknown, like: CompiledCall | null): string {
  const name = member ? `${member}/${tool || "?"}` : tool || "?";
  const keys = Object.keys(args);
  const shown = like && (like.argKeys.length > 0 || like.result) ? like.argKeys.filter((k) => k in args) : keys.slice(0, 3);
  const more = keys.length > shown.length ? (shown.length > 0 ? ", ..." : "...") : "";
  let text = `${name}(${shown.map((k) => `${k}=${describeValue(args[k])}`).join(", ")}${more})`;
  if (like?.result) text += ` -> ${describeValue(result)}`;
  return text.length > CALL_CHARS ? `${text.slice(0, CALL_CHARS - 3)}...` : text;
}
