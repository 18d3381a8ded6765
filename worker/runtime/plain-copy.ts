/**
 * A copy of plain data (null, booleans, strings, finite numbers, arrays and plain objects of
 * them) made directly, or null when the value holds anything else. It is what a JSON round trip
 * gives for such a value (same keys, same order, -0 as 0), for a fraction of the cost: every
 * case's response and score detail cross a thread boundary this way (toPlainData in
 * evidence.ts), and a JSON round trip with a replacer was a large part of a trivial case's cost
 * in its thread. Anything a round trip would change (a function, undefined, a class instance, a
 * Date, NaN, a cycle) makes it give up, and the caller takes the round trip.
 */

/** Deepest nesting copied directly, in levels; deeper (or a cycle) goes the JSON way. */
export const PLAIN_COPY_MAX_DEPTH = 64;
/** Most values copied directly, in values (objects, arrays and leaves); bigger goes the JSON way. */
export const PLAIN_COPY_MAX_VALUES = 5_000;

/** Says the value is not plain data (the caller falls back to its JSON round trip). */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/**
 * The copy of `value` as a JSON round trip would make it, or `undefined` when `value` is not plain
 * data (see the module's comment; `undefined` itself is not plain data).
 */
export function plainCopy<T>(value: T): T | undefined {
  const budget = { values: PLAIN_COPY_MAX_VALUES };
  const copy = copyOf(value, 0, budget);
  return copy === NOT_PLAIN ? undefined : (copy as T);
}

function copyOf(v: unknown, depth: number, budget: { values: number }): unknown {
  if (--budget.values < 0) return NOT_PLAIN;
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? (v === 0 ? 0 : v) : NOT_PLAIN;
  if (typeof v !== "object" || depth >= PLAIN_COPY_MAX_DEPTH) return NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const c = copyOf(v[i], depth + 1, budget);
      if (c === NOT_PLAIN) return NOT_PLAIN;
      out[i] = c;
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    // An own `__proto__` (from JSON.parse) would set the copy's prototype here.
    if (k === "__proto__") return NOT_PLAIN;
    const c = copyOf((v as Record<string, unknown>)[k], depth + 1, budget);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    out[k] = c;
  }
  return out;
}
