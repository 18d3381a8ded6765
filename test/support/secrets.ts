/**
 * Helpers for the redaction tests: a seeded PRNG (so a failure is reproducible) and a search for
 * any piece of a secret (a partial leak counts).
 */

/** A small seeded PRNG (mulberry32): numbers in [0, 1). */
export { seededRandom as prng } from "../../shared/seeded-random.ts";

/** Any `size`-character piece of `secret` found in `text`, or null. */
export function leakedPiece(text: string, secret: string, size = 8): string | null {
  for (let i = 0; i + size <= secret.length; i++) if (text.includes(secret.slice(i, i + size))) return secret.slice(i, i + size);
  return null;
}
