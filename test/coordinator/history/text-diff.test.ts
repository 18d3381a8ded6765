// Line diffs of outputs (coordinator/history/text-diff.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { DIFF_MAX_CELLS, diffLines } from "../../../coordinator/history/text-diff.ts";

const show = (a: string, b: string): string[] => diffLines(a, b).map((l) => `${l.op}${l.text}`);

test("equal texts: every line kept", () => assert.deepEqual(show("a\nb", "a\nb"), [" a", " b"]));

test("a changed line in the middle: removed then added, head and tail kept", () => {
  assert.deepEqual(show("x\nold\ny", "x\nnew\ny"), [" x", "-old", "+new", " y"]);
});

test("insertions and deletions follow the longest common subsequence", () => {
  assert.deepEqual(show("a\nb\nc\nd", "a\nc\nd\ne"), [" a", "-b", " c", " d", "+e"]);
  assert.deepEqual(show("", "one"), ["-", "+one"]);
});

test("a diff too large to compute falls back to A removed, B added, and stays correct", () => {
  const n = Math.ceil(Math.sqrt(DIFF_MAX_CELLS)) + 10;
  const a = Array.from({ length: n }, (_, i) => `a${i}`).join("\n");
  const b = Array.from({ length: n }, (_, i) => `b${i}`).join("\n");
  const d = diffLines(`same\n${a}`, `same\n${b}`);
  assert.equal(d.length, 1 + 2 * n);
  assert.deepEqual(d[0], { op: " ", text: "same" });
  assert.equal(d.filter((l) => l.op === "-").length, n);
});
