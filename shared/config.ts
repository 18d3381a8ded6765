// runs in: both
import * as z from "zod";
import { EvalfleetError, ErrorCode } from "./errors.ts";

/**
 * The parts every process's config module is built from (coordinator/cli/config.ts,
 * worker/config.ts): field schemas whose message says what a value must be, and
 * {@link parseConfig}, which validates a config once, names the field and the value of the first
 * problem, and freezes the result so nothing downstream changes it.
 */

/** A number of seconds >= 0. */
export function seconds(): z.ZodNumber {
  const rule = "must be a number of seconds >= 0";
  return z.number({ error: rule }).min(0, { error: rule });
}

/** A number of seconds > 0. */
export function positiveSeconds(): z.ZodNumber {
  const rule = "must be a number of seconds > 0";
  return z.number({ error: rule }).positive({ error: rule });
}

/** A whole number >= `min`. */
export function whole(min: number): z.ZodNumber {
  const rule = `must be a whole number >= ${min}`;
  return z.int({ error: rule }).min(min, { error: rule });
}

/** A fraction between 0 and 1. */
export function fraction(): z.ZodNumber {
  const rule = "must be a fraction between 0 and 1 (0.95 for 95%)";
  return z.number({ error: rule }).min(0, { error: rule }).max(1, { error: rule });
}

/** A non-empty string. */
export function text(): z.ZodString {
  const rule = "must be a non-empty string";
  return z.string({ error: rule }).min(1, { error: rule });
}

/**
 * Validates `input` against `schema` and returns it deeply frozen. The first problem is thrown as a
 * usage {@link EvalfleetError} naming the field as the user wrote it (`label(path)`, e.g. the flag
 * or the variable) and the value: `--concurrency must be a whole number >= 1, got 0`.
 */
export function parseConfig<S extends z.ZodType>(schema: S, input: unknown, label: (path: string) => string = (p) => p): Readonly<z.infer<S>> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join(".");
    const value = valueAt(input, issue.path);
    throw new EvalfleetError(ErrorCode.Usage, `${label(path)} ${issue.message}, got ${describe(value)}`, { field: path, value: describe(value) });
  }
  return deepFreeze(parsed.data as z.infer<S>);
}

/**
 * Freezes plain objects and arrays, recursively. Class instances (an open results store, an
 * AbortSignal) are left as they are: they are handed down, not configuration.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  for (const v of Object.values(value as object)) deepFreeze(v);
  return Object.freeze(value);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const key of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

function describe(value: unknown): string {
  if (typeof value === "string") return `'${value}'`;
  if (value === undefined) return "nothing";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
