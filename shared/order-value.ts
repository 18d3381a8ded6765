// runs in: both
/**
 * The text of a start order as `--order` and the library take it: `declared`, `history`,
 * `random` or `random:SEED`. Imports nothing: the command line's flag parsers read it before
 * anything heavier is loaded (compileRunSettings turns it into the compiled setting).
 */

/** The orders, for messages. */
export const ORDER_VALUES = "declared, history or random[:SEED] (SEED a whole number 0 to 4294967295)";

/** An order as read: `seed` null for `random` without one. */
export type OrderValue = { kind: "declared" } | { kind: "history" } | { kind: "random"; seed: number | null };

/** Reads an order (case and surrounding space ignored), or null when `value` is not one. */
export function readOrderValue(value: string): OrderValue | null {
  const v = value.trim().toLowerCase();
  if (v === "declared" || v === "history") return { kind: v };
  const m = /^random(?::(\d{1,10}))?$/.exec(v);
  if (!m) return null;
  if (m[1] === undefined) return { kind: "random", seed: null };
  const seed = Number(m[1]);
  return seed <= 0xffff_ffff ? { kind: "random", seed } : null;
}
