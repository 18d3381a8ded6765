// The evidence of a run (worker/runtime/evidence.ts): the output text as Python writes it, and the
// tools called.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { contentAsString, toolsCalled } from "../../../worker/runtime/evidence.ts";

describe("contentAsString (spec E6)", () => {
  test("null and undefined give an empty string", () => {
    assert.equal(contentAsString(null), "");
    assert.equal(contentAsString(undefined), "");
  });

  test("a string is kept as is", () => {
    assert.equal(contentAsString("Paris"), "Paris");
    assert.equal(contentAsString(""), "");
    assert.equal(contentAsString('{"not": "parsed"}'), '{"not": "parsed"}');
  });

  test("structured content is written as Python's json.dumps would (', ' and ': ' separators)", () => {
    assert.equal(contentAsString({ answer: 42 }), '{"answer": 42}');
    assert.equal(
      contentAsString({ a: [1, 2, { b: null }], c: { d: true, e: 'x"y' } }),
      '{"a": [1, 2, {"b": null}], "c": {"d": true, "e": "x\\"y"}}',
    );
    assert.equal(contentAsString([]), "[]");
    assert.equal(contentAsString({}), "{}");
    assert.equal(contentAsString([[1, [2, []]], {}]), "[[1, [2, []]], {}]");
  });

  test("non-ASCII is kept (ensure_ascii=False)", () => {
    assert.equal(contentAsString({ city: "Zürich", emoji: "🗼" }), '{"city": "Zürich", "emoji": "🗼"}');
  });

  test("falsy values are kept", () => {
    assert.equal(contentAsString(0), "0");
    assert.equal(contentAsString(false), "false");
    assert.equal(contentAsString(true), "true");
    assert.equal(contentAsString(3.5), "3.5");
  });

  test("undefined members are dropped from objects and become null in arrays, as JSON does", () => {
    assert.equal(contentAsString({ a: 1, b: undefined }), '{"a": 1}');
    assert.equal(contentAsString([1, undefined]), "[1, null]");
  });

  test("a sparse array still gives valid JSON", () => {
    const text = contentAsString([, 1]);
    assert.equal(text, "[null, 1]");
    assert.deepEqual(JSON.parse(text), [null, 1]);
  });

  test("the same object twice (no cycle) is serialised twice", () => {
    const shared = { x: 1 };
    assert.equal(contentAsString({ a: shared, b: [shared] }), '{"a": {"x": 1}, "b": [{"x": 1}]}');
  });

  test("a cycle falls back to a util.inspect form without throwing", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    let text = "";
    assert.doesNotThrow(() => (text = contentAsString(cyclic)));
    assert.match(text, /\[Circular \*1\]/);
    assert.match(text, /name: 'loop'/);
  });

  test("a BigInt inside falls back to the inspect form", () => {
    const text = contentAsString({ tokens: 10n, model: "m" });
    assert.equal(text, "{ tokens: 10n, model: 'm' }");
  });

  test("a Date serialises through toJSON", () => {
    const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5));
    assert.equal(contentAsString(at), '"2024-01-02T03:04:05.000Z"');
    assert.equal(contentAsString({ at }), '{"at": "2024-01-02T03:04:05.000Z"}');
  });
});

describe("toolsCalled (spec E7)", () => {
  test("top-level tools then members' tools, one level deep only", () => {
    const names = toolsCalled({
      tools: [{ toolName: "delegate_task_to_member" }, { toolName: "search" }],
      memberResponses: [
        { tools: [{ toolName: "multiply" }], memberResponses: [{ tools: [{ toolName: "grandchild_tool" }] }] },
        { tools: [{ toolName: "add" }, { toolName: "format" }] },
      ],
    });
    assert.deepEqual(names, ["delegate_task_to_member", "search", "multiply", "add", "format"]);
  });

  test("a nameless call shows as ?", () => {
    assert.deepEqual(toolsCalled({ tools: [{ toolName: null }, { toolName: "" }, {}, { toolName: "ok" }] }), ["?", "?", "?", "ok"]);
  });

  test("no tools gives an empty list", () => {
    assert.deepEqual(toolsCalled({}), []);
    assert.deepEqual(toolsCalled({ tools: null, memberResponses: null }), []);
  });
});
