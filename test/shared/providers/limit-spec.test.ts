// shared/providers/limit-spec.ts: --limit's two kinds of value, EVALFLEET_LIMITS, the suite's limits,
// and the one-line errors of bad ones.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { checkSuiteLimits, formatLimitSpec, mergeLimitTables, parseLimitList, parseLimitSpec, splitLimitValues } from "../../../shared/providers/limit-spec.ts";
import { EvalfleetError } from "../../../shared/errors.ts";

function usage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof EvalfleetError && err.code === "USAGE" && pattern.test(err.message) && !err.message.includes("\n"));
}

describe("parseLimitSpec", () => {
  test("every field, any subset, any order; a key may hold ':' '/' '.'", () => {
    assert.deepEqual(parseLimitSpec("openai:gpt-5-mini=rpm:600,tpm:200000,concurrency:64"), { key: "openai:gpt-5-mini", spec: { rpm: 600, tpm: 200000, concurrency: 64 } });
    assert.deepEqual(parseLimitSpec("my/key.v2=concurrency:4, rpm: 1.5"), { key: "my/key.v2", spec: { concurrency: 4, rpm: 1.5 } });
  });

  test("bad values name the flag and the value, one line", () => {
    usage(() => parseLimitSpec("openai"), /^--limit must be KEY=rpm:N.*got 'openai'$/);
    usage(() => parseLimitSpec("=rpm:1"), /needs a key/);
    usage(() => parseLimitSpec("k="), /needs at least one of rpm, tpm, concurrency/);
    usage(() => parseLimitSpec("k=rps:10"), /unknown field 'rps'/);
    usage(() => parseLimitSpec("k=rpm:0"), /rpm must be a number > 0/);
    usage(() => parseLimitSpec("k=rpm:-5"), /rpm must be a number > 0/);
    usage(() => parseLimitSpec("k=concurrency:1.5"), /concurrency must be a whole number >= 1/);
    usage(() => parseLimitSpec("k=rpm"), /FIELD:NUMBER/);
    usage(() => parseLimitSpec("k=rpm:1", "EVALFLEET_LIMITS") && parseLimitSpec("k=x:1", "EVALFLEET_LIMITS"), /^EVALFLEET_LIMITS /);
  });
});

describe("splitLimitValues (the one repeatable --limit)", () => {
  test("KEY= values are provider limits merged by key; a bare whole number is the subset size (the last wins)", () => {
    assert.deepEqual(splitLimitValues(["a=rpm:60", "20", "a=tpm:1000", "b=concurrency:2", "5"]), {
      limits: { a: { rpm: 60, tpm: 1000 }, b: { concurrency: 2 } },
      firstN: 5,
    });
    assert.deepEqual(splitLimitValues(undefined), { limits: {}, firstN: null });
    assert.deepEqual(splitLimitValues(["a=rpm:60", "a=rpm:30"]).limits, { a: { rpm: 30 } });
  });

  test("0, a negative number or a word are refused", () => {
    usage(() => splitLimitValues(["0"]), /whole number >= 1/);
    usage(() => splitLimitValues(["-3"]), /whole number >= 1/);
    usage(() => splitLimitValues(["many"]), /got 'many'$/);
  });
});

describe("EVALFLEET_LIMITS, the suite's limits, and merging", () => {
  test("';'-separated, blank parts ignored", () => {
    assert.deepEqual(parseLimitList("a=rpm:60; ;b=tpm:100;"), { a: { rpm: 60 }, b: { tpm: 100 } });
    assert.deepEqual(parseLimitList(""), {});
  });

  test("the command line wins over the environment, which wins over the suite, field by field", () => {
    const suite = { k: { rpm: 100, tpm: 1000, concurrency: 8 } };
    const env = { k: { rpm: 50 } };
    const flags = { k: { concurrency: 2 }, other: { rpm: 1 } };
    assert.deepEqual(mergeLimitTables(suite, env, flags, null), { k: { rpm: 50, tpm: 1000, concurrency: 2 }, other: { rpm: 1 } });
  });

  test("a suite's limits are validated; a bad one names the key and field", () => {
    assert.deepEqual(checkSuiteLimits({ "openai:gpt-5-mini": { rpm: 600 } }), { "openai:gpt-5-mini": { rpm: 600 } });
    assert.deepEqual(checkSuiteLimits(undefined), {});
    assert.throws(() => checkSuiteLimits({ k: { rpm: -1 } }), /k\.rpm/);
    assert.throws(() => checkSuiteLimits({ k: { rps: 1 } }), /limits/);
  });

  test("formatLimitSpec writes what the parser reads", () => {
    const text = formatLimitSpec("openai:m", { rpm: 600, concurrency: 4 });
    assert.equal(text, "openai:m=rpm:600,concurrency:4");
    assert.deepEqual(parseLimitSpec(text), { key: "openai:m", spec: { rpm: 600, concurrency: 4 } });
  });
});
