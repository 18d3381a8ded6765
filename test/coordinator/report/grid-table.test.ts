import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import pc from "picocolors";
import { renderGrid } from "../../../coordinator/report/grid-table.ts";

const require = createRequire(import.meta.url);
const Table = require("cli-table3") as new (options: object) => { push(row: string[]): void; toString(): string };
const COMPACT = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };

function cliTable3(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [] }, chars: COMPACT });
  for (const r of rows) t.push(r);
  return t.toString();
}

describe("renderGrid", () => {
  test("draws what cli-table3's compact table draws: wide characters, colours, stacked lines, empty cells", () => {
    const k = pc.createColors(true);
    const head = ["Case", "Judge", "Tags"];
    const rows = [
      ["c0", "PASS", ""],
      ["日本語の名前", k.green("PASS"), "a, b"],
      ["two\nlines", "\u2014", "x"],
      ["", k.red("FAIL"), "a-much-longer-tag-list"],
    ];
    assert.equal(renderGrid(head, rows), cliTable3(head, rows));
    assert.equal(renderGrid(["Only"], []), cliTable3(["Only"], []));
  });

  test("200,000 rows render (cli-table3 overflows the stack there)", () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [`c${i}`, "trivial", "", "120s"]);
    const text = renderGrid(["Case", "Component", "Tags", "Timeout"], rows);
    const lines = text.split("\n");
    assert.equal(lines.length, 200_000 + 3);
    assert.equal(lines[200_001], "\u2502 c199999 \u2502 trivial   \u2502      \u2502 120s    \u2502");
  });
});
