// The pure cassette model (shared/cassette): the file's schema and names, and how a replayed request
// finds its answer: method + URL + normalised body (JSON key order and whitespace never matter),
// repeats answered in recorded order, concurrent requests taking the first unused match by key.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CassettePlayer, canonicalJson, normalizedBody, requestKey, toolKey } from "../../../shared/cassette/cassette-match.ts";
import { CassetteSchema, cassetteFileName, emptyCassette } from "../../../shared/cassette/cassette.ts";

describe("request keys", () => {
  test("JSON bodies match whatever their key order and whitespace; arrays keep their order", () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
    const a = requestKey("post", "http://api.test/v1/x", '{"model":"m","messages":[{"role":"user","content":"hi"}]}');
    const b = requestKey("POST", "http://API.test:80/v1/x", '{\n  "messages": [ { "content": "hi", "role": "user" } ],\n  "model": "m"\n}');
    assert.equal(a, b);
    assert.notEqual(a, requestKey("POST", "http://api.test/v1/x", '{"model":"m","messages":[{"role":"user","content":"hi!"}]}'), "a changed value is another request");
    assert.notEqual(requestKey("POST", "http://a/x", "[1,2]"), requestKey("POST", "http://a/x", "[2,1]"));
  });

  test("method, URL (path and query) and a non-JSON body are compared exactly; no body and an empty one are the same", () => {
    const base = requestKey("GET", "http://a/w?city=Paris", null);
    assert.equal(base, requestKey("GET", "http://a/w?city=Paris", ""));
    for (const other of [requestKey("POST", "http://a/w?city=Paris", null), requestKey("GET", "http://a/w?city=London", null), requestKey("GET", "http://a/v?city=Paris", null)]) assert.notEqual(other, base);
    assert.equal(normalizedBody("a=1&b=2"), "a=1&b=2");
    assert.notEqual(normalizedBody("a=1&b=2"), normalizedBody("b=2&a=1"));
    assert.equal(normalizedBody("{not json"), "{not json", "text that only looks like JSON is compared as is");
  });

  test("tool keys: the name and the arguments as canonical JSON", () => {
    assert.equal(toolKey("get_weather", { city: "Paris", units: "c" }), toolKey("get_weather", { units: "c", city: "Paris" }));
    assert.notEqual(toolKey("get_weather", { city: "Paris" }), toolKey("get_weather", { city: "London" }));
    assert.notEqual(toolKey("a", undefined), toolKey("b", undefined));
  });
});

describe("CassettePlayer", () => {
  const entries = [
    { key: "GET /a", answer: "a1" },
    { key: "GET /b", answer: "b1" },
    { key: "GET /a", answer: "a2" },
  ];

  test("repeats: the same request twice gets the recorded answers in recorded order, then misses", () => {
    const p = new CassettePlayer(entries, (e) => e.key);
    assert.equal(p.take("GET /a")?.answer, "a1");
    assert.equal(p.take("GET /a")?.answer, "a2");
    assert.equal(p.take("GET /a"), null, "a third /a was never recorded");
    assert.equal(p.unused, 1);
  });

  test("concurrency: a request takes the first unused match of its key, not the next exchange by position", () => {
    const p = new CassettePlayer(entries, (e) => e.key);
    // /b was recorded second but is asked first (it went out first this time).
    assert.equal(p.take("GET /b")?.answer, "b1");
    assert.equal(p.take("GET /a")?.answer, "a1");
    assert.equal(p.take("GET /b"), null);
    assert.equal(p.take("GET /c"), null, "an unknown key misses");
    assert.equal(p.unused, 1);
  });
});

describe("cassette files", () => {
  test("file names are safe for any case name, keep it readable, tell look-alikes apart and carry the trial", () => {
    const names = ["paris", "../../etc/passwd", "a/b c", "a_b_c", "ünïcödé 🚀", "", ".hidden", "x".repeat(500), "CON"];
    const files = names.map((n) => cassetteFileName(n, 1));
    for (const f of files) {
      assert.match(f, /^[A-Za-z0-9_.-]+\.t1\.json$/, f);
      assert.ok(!f.startsWith("."), f);
      assert.ok(f.length <= 90, f);
    }
    assert.equal(new Set(files).size, names.length, "every name its own file");
    assert.match(cassetteFileName("paris", 1), /^paris-[0-9a-f]{8}\.t1\.json$/);
    assert.notEqual(cassetteFileName("paris", 1), cassetteFileName("paris", 2));
  });

  test("the schema reads a cassette back and names what is wrong", () => {
    const c = { ...emptyCassette("paris", 1), exchanges: [{ request: 1, method: "GET", url: "http://a/", headers: {}, body: null, response: { status: 200, statusText: "OK", headers: { "content-type": "text/plain" }, body: { text: "hi", encoding: "utf8" } } }] };
    assert.deepEqual(CassetteSchema.parse(JSON.parse(JSON.stringify(c))), c);
    const bad = CassetteSchema.safeParse({ ...c, version: 2 });
    assert.equal(bad.success, false);
    assert.match(bad.error!.issues[0]!.message, /another evalfleet version/);
    assert.equal(CassetteSchema.safeParse({ ...c, extra: 1 }).success, false, "strict: an unknown key is refused");
  });
});
