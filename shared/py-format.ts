// runs in: both
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
  if (!Number.isFinite(seconds)) return seconds;
  // Python rounds the exact stored value: 1.2345 is stored as 1.23449999... and gives 1.234,
  // where scaling by 1000 first would round the product up. toFixed rounds the exact value too.
  // Exact ties at 3 decimals are the odd multiples of 1/16 (0.0625): Python sends them to the
  // even digit, toFixed sends them up.
  const sixteenths = Math.abs(seconds) * 16;
  if (Number.isInteger(sixteenths) && sixteenths % 2 === 1 && sixteenths <= Number.MAX_SAFE_INTEGER) {
    const below = Math.floor(Math.abs(seconds) * 1000);
    const even = below % 2 === 0 ? below : below + 1;
    return (Math.sign(seconds) * even) / 1000;
  }
  return Number(seconds.toFixed(3));
}
