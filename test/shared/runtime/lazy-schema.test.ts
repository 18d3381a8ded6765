// Schemas built on first use: nothing is built until the value is used, then exactly once, and
// the stand-in parses, composes, reports errors and answers type checks as the schema itself.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import * as z from "zod";
import { lazySchema } from "../../../shared/runtime/lazy-schema.ts";

describe("lazySchema", () => {
  test("builds nothing until first used, then once", () => {
    let builds = 0;
    const S = lazySchema(() => (builds++, z.object({ a: z.number().int() })));
    assert.equal(builds, 0);
    assert.deepEqual(S.parse({ a: 1 }), { a: 1 });
    assert.equal(S.safeParse({ a: 1.5 }).success, false);
    assert.equal(builds, 1);
  });

  test("parses and reports errors exactly as the schema it stands for", () => {
    const make = () => z.strictObject({ name: z.string().min(1, { error: "must not be empty" }), n: z.number().optional() });
    const lazy = lazySchema(make);
    const eager = make();
    for (const input of [{ name: "x" }, { name: "" }, { name: "x", extra: 1 }, { n: "2" }, null, []]) {
      const a = lazy.safeParse(input);
      const b = eager.safeParse(input);
      assert.equal(a.success, b.success, JSON.stringify(input));
      assert.deepEqual(a.error?.issues, b.error?.issues, JSON.stringify(input));
    }
  });

  test("composes: inside other schemas, extended, picked, optional, in unions", () => {
    const Inner = lazySchema(() => z.object({ kind: z.literal("a"), v: z.number() }));
    const Other = lazySchema(() => z.object({ kind: z.literal("b"), w: z.string() }));
    const List = lazySchema(() => z.array(Inner).min(1));
    const Either = lazySchema(() => z.discriminatedUnion("kind", [Inner, Other]));
    const Wider = lazySchema(() => Inner.extend({ note: z.string().optional() }));
    const Narrow = lazySchema(() => Wider.pick({ note: true }));
    assert.deepEqual(List.parse([{ kind: "a", v: 1 }]), [{ kind: "a", v: 1 }]);
    assert.equal(List.safeParse([]).success, false);
    assert.deepEqual(Either.parse({ kind: "b", w: "x" }), { kind: "b", w: "x" });
    assert.equal(Either.safeParse({ kind: "c" }).success, false);
    assert.deepEqual(Wider.parse({ kind: "a", v: 2, note: "n" }), { kind: "a", v: 2, note: "n" });
    assert.deepEqual(Narrow.parse({ note: "n", v: 3 }), { note: "n" });
    assert.equal(Inner.optional().parse(undefined), undefined);
    assert.deepEqual(Object.keys(Inner.shape), ["kind", "v"]);
  });

  test("answers instanceof, `in`, keys and spreads as the schema", () => {
    const S = lazySchema(() => z.object({ a: z.string() }));
    assert.ok(S instanceof z.ZodObject);
    assert.ok(S instanceof z.ZodType);
    assert.ok("parse" in S);
    assert.deepEqual(Object.keys(S).sort(), Object.keys(z.object({ a: z.string() })).sort());
    const fields = lazySchema(() => ({ a: z.string(), b: z.number().optional() }));
    const Spread = z.object({ ...fields, c: z.boolean() });
    assert.deepEqual(Spread.parse({ a: "x", c: true }), { a: "x", c: true });
    assert.ok("b" in fields);
    assert.equal(Spread.safeParse({ a: 1, c: true }).success, false);
  });

  test("z.toJSONSchema of a stand-in is the schema's (the judge's structured output)", () => {
    const make = () => z.object({ passed: z.boolean().describe("Pass/fail result."), score: z.number().int().min(1).max(10).optional() });
    assert.deepEqual(z.toJSONSchema(lazySchema(make)), z.toJSONSchema(make()));
  });

  test("an error while building reaches the first user, and the next one builds again", () => {
    let calls = 0;
    const S = lazySchema((): z.ZodString => {
      calls++;
      if (calls === 1) throw new Error("not yet");
      return z.string();
    });
    assert.throws(() => S.parse("x"), /not yet/);
    assert.equal(S.parse("x"), "x");
    assert.equal(calls, 2);
  });
});
