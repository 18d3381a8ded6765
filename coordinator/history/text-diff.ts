/**
 * A line diff of two texts (a case's output in two runs), for `compare --html`. Longest common
 * subsequence over lines, after the common head and tail are taken off; a diff too large to
 * compute in bounded time falls back to "all of A removed, all of B added". Pure; no I/O.
 */

/** One line of a diff: kept (` `), removed from A (`-`) or added in B (`+`). */
export interface DiffLine {
  op: " " | "-" | "+";
  text: string;
}

/** Most cells of the LCS table computed for one diff (lines of A × lines of B, past the common head and tail). */
export const DIFF_MAX_CELLS = 4_000_000;

/** The line diff of `a` and `b`. */
export function diffLines(a: string, b: string): DiffLine[] {
  const x = a.split("\n");
  const y = b.split("\n");
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const out: DiffLine[] = x.slice(0, head).map((text) => ({ op: " ", text }));
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  if (xs.length * ys.length > DIFF_MAX_CELLS) {
    for (const text of xs) out.push({ op: "-", text });
    for (const text of ys) out.push({ op: "+", text });
  } else {
    const n = xs.length;
    const m = ys.length;
    // lcs[i][j]: the LCS length of xs[i..] and ys[j..], one flat array.
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * (m + 1) + j] = xs[i] === ys[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (xs[i] === ys[j]) {
        out.push({ op: " ", text: xs[i]! });
        i++;
        j++;
      } else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) out.push({ op: "-", text: xs[i++]! });
      else out.push({ op: "+", text: ys[j++]! });
    }
    while (i < n) out.push({ op: "-", text: xs[i++]! });
    while (j < m) out.push({ op: "+", text: ys[j++]! });
  }
  for (const text of x.slice(x.length - tail)) out.push({ op: " ", text });
  return out;
}
