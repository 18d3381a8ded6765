// runs in: both
import { pyRepr } from "../py-format.ts";

/**
 * How dataset problems show values and fields: a value cut to one line, a zod path as
 * `inputs[1].content`. Pure; no I/O.
 */

/** A problem of one row (or eval set entry), before it is given its file and line. */
export interface RowProblem {
  field: string | null;
  message: string;
}

/** A value for an error message: Python's repr, cut to 80 characters. */
export function shortRepr(value: unknown): string {
  const r = typeof value === "object" && value !== null && !Array.isArray(value) ? safeJson(value) : pyRepr(value);
  return r.length > 80 ? `${r.slice(0, 77)}...` : r;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `a list ${shortRepr(value)}`;
  if (value === null) return "null";
  return `${typeof value} ${shortRepr(value)}`;
}

/** `inputs[1].content` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || "row";
}

export function valueAt(row: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let v: unknown = row;
  for (const p of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined;
  return v;
}
