import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeSelection, encodeSelection } from "../../../shared/wire/case-selection.ts";
import { ErrorCode } from "../../../shared/errors.ts";

test("round trips: none, all, sparse, duplicates counted once", () => {
  assert.deepEqual(decodeSelection(encodeSelection([], 0)), []);
  assert.deepEqual(decodeSelection(encodeSelection([], 13)), []);
  assert.deepEqual(decodeSelection(encodeSelection([0, 1, 2, 3, 4, 5, 6, 7, 8], 9)), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  const sparse = encodeSelection([12, 3, 99, 3], 100);
  assert.equal(sparse.count, 3);
  assert.deepEqual(decodeSelection(sparse), [3, 12, 99]);
});

test("100,000 cases: every other one selected, 17 KB whatever the pattern", () => {
  const every = Array.from({ length: 50_000 }, (_, i) => i * 2);
  const sel = encodeSelection(every, 100_000);
  assert.equal(sel.count, 50_000);
  assert.ok(Buffer.byteLength(JSON.stringify(sel)) < 17_000, `${Buffer.byteLength(JSON.stringify(sel))} bytes`);
  assert.deepEqual(decodeSelection(sel), every);
});

test("a selection made over another number of cases is refused with SUITE_MISMATCH", () => {
  const sel = encodeSelection([1], 10);
  assert.deepEqual(decodeSelection(sel, 10), [1]);
  assert.throws(() => decodeSelection(sel, 9), (err: { code?: string; message: string }) => err.code === ErrorCode.SuiteMismatch && /made over a suite of 10 cases, this suite has 9/.test(err.message));
});

test("an index outside the suite is refused when encoding", () => {
  assert.throws(() => encodeSelection([5], 5), /case index 5 is outside the suite's 5 cases/);
  assert.throws(() => encodeSelection([-1], 5), RangeError);
});

test("a cut or tampered bitmap is refused with WIRE_INVALID and says what is wrong", () => {
  const sel = encodeSelection([1, 2], 20);
  const bad = [
    [{ ...sel, bitmap: sel.bitmap.slice(0, 2) }, /bitmap of 1 bytes for 20 cases \(expected 3\)/],
    [{ ...sel, count: 3 }, /2 cases are marked but the manifest says 3/],
    [{ ...encodeSelection([7], 8), caseCount: 7 }, /case 7 is selected but the suite has 7 cases/],
  ] as const;
  for (const [selection, message] of bad) {
    assert.throws(() => decodeSelection(selection), (err: { code?: string; message: string }) => err.code === ErrorCode.WireInvalid && message.test(err.message));
  }
});
