// Runs of the same selection (coordinator/history/selection-key.ts): the same set of case names, order ignored.
import { test } from "node:test";
import assert from "node:assert/strict";
import { selectionKey, selectionSize } from "../../../coordinator/history/selection-key.ts";

test("the same set of names gives the same key, whatever the order or the flags; another set another key", () => {
  const a = selectionKey({ selection: { cases: ["a", "b", "c"] } });
  assert.equal(selectionKey({ selection: { tag: ["x"], cases: ["c", "a", "b"] } }), a);
  assert.notEqual(selectionKey({ selection: { cases: ["a", "b"] } }), a);
  assert.equal(selectionKey({ selection: { cases: 3 } }), null);
  assert.equal(selectionSize({ selection: { cases: ["a", "b"] } }), 2);
  assert.equal(selectionSize({ selection: { cases: 3 } }), 3);
  assert.equal(selectionSize({ selection: {} }), null);
});
