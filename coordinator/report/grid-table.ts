import { lazyPackage } from "../../shared/runtime/lazy-package.ts";

/**
 * The console's boxed tables (the case list, the summary), drawn in one pass: the same look as
 * cli-table3 with the compact style (a box, no rules between rows), which takes time quadratic
 * in the rows (3.5 s for 20,000) and overflows the stack at 200,000. Cells are measured by their
 * display width (ANSI colours ignored, wide characters count two) and a cell's lines stack.
 */

const widthOf = lazyPackage<(text: string) => number>("string-width");

function displayWidth(text: string): number {
  return widthOf()(text);
}

/** The table as text, without a trailing newline: a header row, then every row, in a box. */
export function renderGrid(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h) => Math.max(0, ...h.split("\n").map(displayWidth)));
  const split: string[][][] = [];
  for (const row of [head, ...rows]) {
    const cells = head.map((_, i) => String(row[i] ?? "").split("\n"));
    cells.forEach((lines, i) => {
      for (const line of lines) widths[i] = Math.max(widths[i]!, displayWidth(line));
    });
    split.push(cells);
  }
  const rule = (left: string, mid: string, right: string): string => left + widths.map((w) => "\u2500".repeat(w + 2)).join(mid) + right;
  const out: string[] = [rule("\u250c", "\u252c", "\u2510")];
  for (const cells of split) {
    const height = Math.max(...cells.map((lines) => lines.length));
    for (let l = 0; l < height; l++) {
      out.push("\u2502" + cells.map((lines, i) => {
        const text = lines[l] ?? "";
        return ` ${text}${" ".repeat(widths[i]! - displayWidth(text))} `;
      }).join("\u2502") + "\u2502");
    }
  }
  out.push(rule("\u2514", "\u2534", "\u2518"));
  return out.join("\n");
}
