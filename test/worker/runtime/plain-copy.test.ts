// The direct copy of plain data (worker/runtime/plain-copy.ts) and toPlainData, which takes it
// first: the same value as a JSON round trip, a copy (never the value itself), and a refusal for
// anything a round trip would change.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { plainCopy, PLAIN_COPY_MAX_DEPTH, PLAIN_COPY_MAX_VALUES } from "../../../worker/runtime/plain-copy.ts";
import { toPlainData } from "../../../worker/runtime/evidence.ts";

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe("plainCopy", () => {
  test("plain data: the JSON round trip's value, key order included, as a fresh copy", () => {
    const values: unknown[] = [
      null,
      "text",
      true,
      0,
      -0,
      3.25,
      [],
      {},
      { content: "Paris", tools: [{ toolName: "echo", args: { q: 1 } }], n: null },
      { b: 1, a: 2, 10: "ten", 2: "two" },
      [[1, [2, [3]]], { nested: { deeper: ["x"] } }],
      Object.assign(Object.create(null), { bare: true }),
    ];
    for (const v of values) {
      const copy = plainCopy(v);
      assert.deepEqual(copy, roundTrip(v), JSON.stringify(v));
      assert.deepEqual(JSON.stringify(copy), JSON.stringify(roundTrip(v)), "same keys in the same order");
      if (v !== null && typeof v === "object") assert.notEqual(copy, v, "a copy, not the value");
    }
    assert.ok(Object.is(plainCopy(-0), 0), "-0 becomes 0, as in JSON");
    const shared = { s: 1 };
    const copy = plainCopy({ a: shared, b: shared })!;
    assert.notEqual(copy.a, shared);
    assert.deepEqual(copy, { a: { s: 1 }, b: { s: 1 } });
  });

  test("anything a round trip would change is refused (undefined), and toPlainData takes the round trip", () => {
    class Box {
      v = 1;
    }
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const refused: unknown[] = [
      undefined,
      () => 1,
      Symbol("s"),
      10n,
      NaN,
      Infinity,
      new Date(0),
      new Map([[1, 2]]),
      new Box(),
      { f: () => 1 },
      { u: undefined },
      [undefined],
      { toJSON: () => "x" },
      JSON.parse('{"__proto__": {"polluted": true}}'),
      cycle,
    ];
    for (const v of refused) assert.equal(plainCopy(v), undefined, String(typeof v));
    // The fallback gives what it gave before: functions, undefined and cycles dropped, classes plain.
    assert.deepEqual(toPlainData({ f: () => 1, u: undefined, box: new Box(), d: new Date(0), n: NaN, big: 10n }), { box: { v: 1 }, d: "1970-01-01T00:00:00.000Z", n: null, big: "10" });
    assert.deepEqual(toPlainData(cycle), { a: 1 });
    const throwing = Object.defineProperty({}, "boom", { enumerable: true, get: () => { throw new Error("no"); } });
    assert.equal(toPlainData(throwing), null, "a getter that throws: null, as before");
  });

  test("deep or large values go the JSON way (bounded work), with the same result", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < PLAIN_COPY_MAX_DEPTH + 1; i++) deep = [deep];
    assert.equal(plainCopy(deep), undefined);
    assert.deepEqual(toPlainData(deep), deep);
    const big = Array.from({ length: PLAIN_COPY_MAX_VALUES }, (_, i) => i);
    assert.equal(plainCopy(big), undefined);
    assert.deepEqual(toPlainData(big), big);
  });
});
