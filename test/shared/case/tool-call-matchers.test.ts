// Tool-call expectations as suites write them (shared/case/tool-call-matchers.ts): every malformed
// matcher is found at its path, descriptions read as reasons show them, and the fingerprint form
// keeps a list of names as it is.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { describeExpectation, describeValue, expectationsFingerprint, toolCallListProblems } from "../../../shared/case/tool-call-matchers.ts";

const CODE = { forbidden: false, fromData: false };
const DATA = { forbidden: false, fromData: true };
const FORBIDDEN = { forbidden: true, fromData: false };
const problems = (list: unknown, context = CODE) => toolCallListProblems(list, context).map((p) => `${p.path.join(".")}: ${p.message}`);

describe("toolCallListProblems", () => {
  test("names, and matchers of every kind, are valid", () => {
    const list = [
      "search",
      { name: "get_weather", args: { city: "London", units: /^c/i, day: { $regex: "^mon", $flags: "i" }, when: (v: unknown) => typeof v === "string" } },
      { name: "book", args: { seats: [1, { $regex: "^A" }], guest: { name: "Ann", age: 30 } }, times: 0, result: { ok: true } },
      { name: "lookup", result: /found/, times: 3 },
      { name: "team/multiply", args: { a: null, b: undefined } },
    ];
    assert.deepEqual(problems(list), []);
    assert.deepEqual(problems([]), []);
    assert.deepEqual(problems([""]), [], "code keeps Agno's leniency for a bare name");
  });

  test("a list that is not a list", () => {
    assert.deepEqual(problems("search"), [": must be a list of tool names or { name, args, times, result } matchers"]);
  });

  test("an unknown key, a missing or empty name, a bad entry", () => {
    assert.deepEqual(problems([{ name: "x", arg: { a: 1 } }]), ["0: has an unknown key 'arg' (a matcher has: name, args, times, result)"]);
    assert.deepEqual(problems([{ args: { a: 1 } }]), ["0.name: must be a tool name (non-empty text)"]);
    assert.deepEqual(problems([{ name: "" }]), ["0.name: must be a tool name (non-empty text)"]);
    assert.deepEqual(problems(["ok", 3, null, ["a"]]), [
      "1: must be a tool name (text) or a { name, args, times, result } matcher",
      "2: must be a tool name (text) or a { name, args, times, result } matcher",
      "3: must be a tool name (text) or a { name, args, times, result } matcher",
    ]);
    assert.deepEqual(problems([""], DATA), ["0: must not be empty"]);
    assert.deepEqual(problems([{ name: "x", args: ["a"] }]), ["0.args: must be an object of argument matchers by name"]);
  });

  test("times: a whole number >= 0, and none for a forbidden call", () => {
    for (const times of [-1, 1.5, "2", Number.NaN, Number.POSITIVE_INFINITY]) assert.deepEqual(problems([{ name: "x", times }]), ["0.times: must be a whole number >= 0"], String(times));
    assert.deepEqual(problems([{ name: "x", times: 0 }]), []);
    assert.deepEqual(problems([{ name: "x", times: 1 }], FORBIDDEN), ["0.times: has no meaning for a forbidden call (any matching call fails the check)"]);
  });

  test("an invalid regex, invalid flags, an unknown $ key: each at its path", () => {
    assert.deepEqual(problems([{ name: "x", args: { city: { $regex: "(" } } }]), ["0.args.city.$regex: is not a valid regex (Unterminated group)"]);
    assert.deepEqual(problems([{ name: "x", result: { $regex: "[a-" } }]), ["0.result.$regex: is not a valid regex (Unterminated character class)"]);
    assert.deepEqual(problems([{ name: "x", args: { city: { $regex: "a", $flags: "z" } } }]), ["0.args.city.$flags: must be RegExp flags, each at most once (d, g, i, m, s, u, v, y)"]);
    assert.deepEqual(problems([{ name: "x", args: { city: { $regex: "a", $flags: "ii" } } }]), ["0.args.city.$flags: must be RegExp flags, each at most once (d, g, i, m, s, u, v, y)"]);
    assert.match(problems([{ name: "x", args: { city: { $regex: "a", $flags: "uv" } } }])[0]!, /^0\.args\.city\.\$flags: is not a valid set of RegExp flags/);
    assert.deepEqual(problems([{ name: "x", args: { city: { $regx: "a" } } }]), [`0.args.city: has an unknown key '$regx' (a matcher object is { "$regex": "...", "$flags": "i" })`]);
    assert.deepEqual(problems([{ name: "x", args: { city: { $regex: 3 } } }]), ["0.args.city.$regex: must be a regular expression (text)"]);
    assert.deepEqual(problems([{ name: "x", args: { city: { $flags: "i" } } }]), ["0.args.city.$regex: must be a regular expression (text)"]);
    assert.deepEqual(problems([{ name: "x", args: { deep: { list: [{ at: { $regex: "(" } }] } } }]), ["0.args.deep.list.0.at.$regex: is not a valid regex (Unterminated group)"]);
  });

  test("values that cannot match: class instances, symbols, functions in data, circular objects", () => {
    assert.deepEqual(problems([{ name: "x", args: { when: new Date(0) } }]), [`0.args.when: must be a value, a RegExp, { "$regex": ... } or a predicate function, not a Date`]);
    assert.deepEqual(problems([{ name: "x", args: { s: Symbol("s") } }]), [`0.args.s: must be a value, a RegExp, { "$regex": ... } or a predicate function, not a symbol`]);
    assert.deepEqual(problems([{ name: "x", args: { f: () => true } }], DATA), ["0.args.f: cannot be a function in data"]);
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    assert.deepEqual(problems([{ name: "x", args: { loop } }]), ["0.args.loop.self: refers to itself (a circular matcher)"]);
  });

  test("every problem of a list, not the first only", () => {
    assert.equal(problems([{ name: "", times: -1 }, { name: "y", args: { a: { $regex: "(" } }, extra: 1 }]).length, 4);
  });
});

describe("descriptions", () => {
  test("values: strings quoted, RegExps and $regex as /source/flags, predicates by name, long values cut", () => {
    assert.equal(describeValue("London"), '"London"');
    assert.equal(describeValue(3), "3");
    assert.equal(describeValue(null), "null");
    assert.equal(describeValue(undefined), "undefined");
    assert.equal(describeValue(/^lon/gi), "/^lon/i");
    assert.equal(describeValue({ $regex: "^lon", $flags: "i" }), "/^lon/i");
    assert.equal(describeValue(function isCity() { return true; }), "<predicate isCity>");
    assert.equal(describeValue({ city: /x/, n: 1 }), '{"city":"/x/","n":1}');
    assert.equal(describeValue("x".repeat(100)).length, 60);
    assert.ok(describeValue("x".repeat(100)).endsWith("..."));
  });

  test("expectations: a bare name, arguments, result and times", () => {
    assert.equal(describeExpectation("search"), "search");
    assert.equal(describeExpectation({ name: "search" }), "search");
    assert.equal(describeExpectation({ name: "get_weather", args: { city: "London" } }), 'get_weather(city="London")');
    assert.equal(describeExpectation({ name: "lookup", args: { q: /^par/i, n: 2 }, result: { found: true } }), 'lookup(q=/^par/i, n=2) -> {"found":true}');
    assert.equal(describeExpectation({ name: "search", times: 2 }), "search 2 times");
    assert.equal(describeExpectation({ name: "search", times: 1 }), "search 1 time");
  });
});

describe("expectationsFingerprint", () => {
  test("a list of names is hashed as it is; null stays null", () => {
    assert.deepEqual(expectationsFingerprint(["a", "b"]), ["a", "b"]);
    assert.equal(expectationsFingerprint(null), null);
  });

  test("RegExps as their source and flags, predicates as a placeholder, undefined kept apart", () => {
    const fp = (list: unknown[]) => JSON.stringify(expectationsFingerprint(list as never));
    assert.equal(fp([{ name: "x", args: { q: /a/i } }]), '[{"name":"x","args":{"q":{"$regex":"a","$flags":"i"}}}]');
    assert.notEqual(fp([{ name: "x", args: { q: /a/i } }]), fp([{ name: "x", args: { q: /a/ } }]));
    assert.equal(fp([{ name: "x", args: { q: (v: unknown) => v === 1 } }]), fp([{ name: "x", args: { q: (v: unknown) => v === 2 } }]), "a predicate's body cannot be hashed");
    assert.notEqual(fp([{ name: "x", args: { q: () => true } }]), fp([{ name: "x", args: { q: "a" } }]));
    assert.notEqual(fp([{ name: "x", args: { q: undefined } }]), fp([{ name: "x", args: {} }]));
    assert.notEqual(fp([{ name: "x", times: 1 }]), fp([{ name: "x", times: 2 }]));
  });
});
