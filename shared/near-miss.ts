// runs in: both
/**
 * The nearest known key to a misspelt one, for "did you mean ...?" hints: the dataset loader's
 * (`expected_tool` -> `expected_tools`) and every option object's (`scoringMethod` ->
 * `outputScoring`, `defaultTimout` -> `defaultTimeout`). Pure; runs only on the error path, so it
 * is written for clarity, not speed.
 */

/** `expectedTools`, `expected-tools`, `Expected Tools` -> `expected_tools`. */
function snakeOf(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/[-\s]/g, "_").toLowerCase();
}

/** The words of a key, whatever its style, without a plural `s`: `setupTimeoutSeconds` -> setup, timeout, second. */
function wordsOf(key: string): string[] {
  return snakeOf(key).split("_").filter(Boolean).map((w) => (w.length > 3 && w.endsWith("s") ? w.slice(0, -1) : w));
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Levenshtein distance (insertions, deletions, substitutions each cost 1). */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/**
 * The known key `key` most likely meant, or null when none is close. In order: the same key in
 * another style (`expectedTools` for `expected_tools`, `rbac` for `RBAC`); a slip of a few letters
 * (edit distance at most max(2, a quarter of the known key's length), compared without case or
 * style: `expected_tool`, `defaultTimout`; a tie to the longer common prefix); a key sharing a word with it (`scoringMethod` ->
 * `outputScoring`, `timeout` -> `timeoutSeconds`), the one whose words it covers best.
 *
 * @param known the keys to choose from, in the order ties are broken.
 */
export function nearestKey(key: string, known: Iterable<string>): string | null {
  const keys = [...known];
  const snake = snakeOf(key);
  const same = keys.find((k) => k !== key && snakeOf(k) === snake);
  if (same !== undefined) return same;

  let best: string | null = null;
  let bestDistance = Infinity;
  let bestPrefix = -1;
  for (const k of keys) {
    const other = snakeOf(k);
    const d = editDistance(snake, other);
    // A tie goes to the key that begins as this one does (`b` -> `bb`, not `a`).
    const prefix = commonPrefix(snake, other);
    if (d < bestDistance || (d === bestDistance && prefix > bestPrefix)) {
      best = k;
      bestDistance = d;
      bestPrefix = prefix;
    }
  }
  if (best !== null && bestDistance <= Math.max(2, Math.floor(snakeOf(best).length / 4))) return best;

  // Shared words: ties go to the key whose words are most covered (timeoutSeconds over setupTimeoutSeconds).
  const words = new Set(wordsOf(key));
  let bestShare = 0;
  best = null;
  for (const k of keys) {
    const theirs = wordsOf(k);
    const shared = theirs.filter((w) => words.has(w)).length;
    const share = shared === 0 ? 0 : shared + shared / theirs.length;
    if (share > bestShare) {
      best = k;
      bestShare = share;
    }
  }
  return best;
}

/** ` (did you mean expected_tools?)` for a near miss of a known key, else "". */
export function didYouMean(key: string, known: Iterable<string>): string {
  const near = nearestKey(key, known);
  return near === null ? "" : ` (did you mean ${near}?)`;
}
