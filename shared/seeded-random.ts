// runs in: both
/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same numbers on
 * every machine, so `--sample N --seed S` draws the same cases again and a property test that
 * fails can be replayed. Not for anything secret.
 */

/** Numbers in [0, 1) from `seed` (any integer; only its low 32 bits count). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
