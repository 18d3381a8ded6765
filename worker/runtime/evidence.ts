import { inspect } from "node:util";
import type { RunOutput } from "../../shared/case/agent.ts";
import { plainCopy } from "./plain-copy.ts";

/**
 * Evidence extraction from a final output (spec E6, E7). Pure; no I/O.
 */

/**
 * The output as text: `""` for no content, a string as is, anything else as Python's
 * `json.dumps` would write it (`{"answer": 42}`, `0` -> `"0"`). Content that cannot be
 * serialised (a cycle, a BigInt) falls back to a repr-like `util.inspect` form; the case still runs.
 */
export function contentAsString(content: unknown): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  try {
    return pyJsonDumps(content);
  } catch {
    return inspect(content, { depth: 4, breakLength: Infinity });
  }
}

/** Python-style `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators. Throws on cycles and BigInt. */
export function pyJsonDumps(value: unknown, seen: Set<object> = new Set()): string {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return Number.isFinite(value) ? String(value) : Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    case "bigint":
      throw new TypeError("Object of type bigint is not JSON serializable");
    case "object": {
      if (seen.has(value)) throw new TypeError("Circular reference detected");
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          // Array.from visits holes (map skips them), so a sparse array writes null as JSON does.
          return `[${Array.from(value, (v: unknown) => (v === undefined || typeof v === "function" || typeof v === "symbol" ? "null" : pyJsonDumps(v, seen))).join(", ")}]`;
        }
        const parts: string[] = [];
        for (const [k, v] of Object.entries(value)) {
          if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
          parts.push(`${JSON.stringify(k)}: ${pyJsonDumps(v, seen)}`);
        }
        return `{${parts.join(", ")}}`;
      } finally {
        seen.delete(value);
      }
    }
    default:
      throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
  }
}

/**
 * Tool names for the report: the top-level tools in order, then each member's tools, one level
 * deep only (a team leader alone would show only its delegation). A nameless call shows as `?`.
 */
export function toolsCalled(output: RunOutput): string[] {
  const names = (output.tools ?? []).map((t) => t?.toolName || "?");
  for (const member of output.memberResponses ?? []) {
    for (const t of member?.tools ?? []) names.push(t?.toolName || "?");
  }
  return names;
}

/**
 * A copy of a value that survives structured clone and JSON (for results and events crossing a
 * thread boundary): functions, symbols and cycles are dropped, class instances become plain objects.
 */
export function toPlainData<T>(value: T): T {
  try {
    // Plain data (most responses, every score detail) is copied directly: the same copy, cheaper.
    // Inside the try: a getter that throws gives null, as the round trip does.
    const copy = plainCopy(value);
    if (copy !== undefined) return copy;
    return JSON.parse(safeStringify(value)) as T;
  } catch {
    return null as T;
  }
}

function safeStringify(value: unknown): string {
  const stack: unknown[] = [];
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    if (typeof v === "bigint") return v.toString();
    if (v !== null && typeof v === "object") {
      while (stack.length > 0 && stack[stack.length - 1] !== this) stack.pop();
      if (stack.includes(v)) return undefined;
      stack.push(v);
    }
    return v;
  }) ?? "null";
}
