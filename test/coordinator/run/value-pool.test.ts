// ValuePool (coordinator/run/value-pool.ts): one copy of the strings and frozen lists results
// repeat, equal values only, up to a bound.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { ValuePool } from "../../../coordinator/run/value-pool.ts";

/** A string equal to `s` but not the same heap string (as JSON.parse makes one per message). */
function copyOf(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

describe("ValuePool", () => {
  test("an equal string comes back as the first one kept; null and undefined pass", () => {
    const pool = new ValuePool();
    const first = copyOf("worker-1");
    assert.equal(pool.string(first), "worker-1");
    assert.equal(pool.string(copyOf("worker-1")), "worker-1");
    assert.equal(pool.string(null), null);
    assert.equal(pool.string(undefined), undefined);
  });

  test("frozen lists equal element by element are shared; unfrozen, different or long ones pass as they are", () => {
    const pool = new ValuePool();
    const a = Object.freeze(["echo", "search"]);
    const b = Object.freeze(["echo", "search"]);
    assert.equal(pool.list(a), a);
    assert.equal(pool.list(b), a);
    const other = Object.freeze(["echo\u0000search"]);
    assert.equal(pool.list(other), other);
    const open = ["echo", "search"];
    assert.equal(pool.list(open), open);
    const long = Object.freeze(Array.from({ length: 17 }, (_, i) => `t${i}`));
    assert.equal(pool.list(long), long);
    const empty = Object.freeze([] as string[]);
    assert.equal(pool.list(Object.freeze([] as string[])), pool.list(empty));
  });

  test("past the limit a new value passes as it came, and those kept are still shared", () => {
    const pool = new ValuePool({ limit: 2 });
    pool.string("a");
    pool.string("b");
    const c = copyOf("c");
    assert.equal(pool.string(c), c);
    assert.equal(pool.string(copyOf("a")), "a");
    const l1 = Object.freeze(["x"]);
    const l2 = Object.freeze(["y"]);
    const l3 = Object.freeze(["z"]);
    pool.list(l1);
    pool.list(l2);
    assert.equal(pool.list(l3), l3);
    assert.equal(pool.list(Object.freeze(["z"])) === l3, false);
    assert.equal(pool.list(Object.freeze(["x"])), l1);
  });
});
