/**
 * Python-compatible formatting for the texts users match on (Agno's messages use `repr`).
 * Pure; no I/O.
 */

/** Python's `repr` for the values that appear in messages: strings quoted, null as `None`, booleans as `True`/`False`. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value
      .replace(/\\/g, "\\\\")
      .replace(/\n/g, "\\n")
      .replace(/\r/g, "\\r")
      .replace(/\t/g, "\\t");
    return quote + (quote === "'" ? escaped.replace(/'/g, "\\'") : escaped) + quote;
  }
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : value > 0 ? "inf" : value < 0 ? "-inf" : "nan";
  if (typeof value === "function") return `<function ${value.name || "anonymous"}>`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Rounds to 3 decimals, as Python's `round(x, 3)` for durations. */
export function round3(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
