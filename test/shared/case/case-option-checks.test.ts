/**
 * The plain-code check of a case's options (shared/case/case-option-checks.ts) against the zod schema
 * it stands in for: whatever it calls plainly valid, the schema accepts (over generated options),
 * it calls the shapes suites write plainly valid (or the schema would run for them), and it looks
 * at every field the schema has (a field added to the schema and not to the check fails here).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CASE_OPTION_KEYS, CaseOptionsSchema, plainlyValidCaseOptions, unknownCaseOption } from "../../../shared/case/case-option-checks.ts";
import { Case } from "../../../index.ts";
// A deterministic generator, so a failure names a seed that reproduces it.
import { seededRandom as random } from "../../../shared/seeded-random.ts";

const agent = { id: "a", run: async () => ({ content: "ok" }) };
const judge = { judge: async () => ({ passed: true, reason: "" }) };
const scorer = { score: () => ({ value: 1, passed: true }) };
const hook = () => undefined;

/** Values to draw each field from: right ones, wrong ones and edges (NaN, holes, class instances, symbols). */
const POOL: unknown[] = [
  undefined, null, "", "x", 0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, true, false,
  [], ["a"], [""], ["a", 1], [undefined], new Array(2), [{ role: "user", content: "hi" }], [{ role: "", content: "hi" }],
  [{ role: "user" }], [null], [["user", "hi"]], {}, { a: 1 }, Object.create(null), { [Symbol("s")]: 1 }, new Map(), new Date(0),
  agent, judge, scorer, hook, { run: "no" }, Object.assign(() => undefined, { run: hook }),
  "any", "in_order", { name: "t" }, [{ name: "t", args: { q: /x/ } }], [{ name: "t", times: -1 }], [{ name: "t", args: { q: { $regex: "(" } } }],
  [{ name: "t", arg: {} }], [{ name: "t", times: 2, result: (v: unknown) => v === 1 }], [{ name: "" }], [new Date(0)], 3, 2.5,
  "exact", "contains", "nope", { method: "exact" }, { method: "numeric", tolerance: 0.5 }, { method: "numeric", tolerance: -1 },
  { method: "exact", ignoreCase: "yes" }, { method: "exact", extra: 1 }, { method: "bogus" }, "binary", "numeric",
];

const FIELDS = Object.keys(CaseOptionsSchema.shape);

/** Options a suite writes; each is plainly valid. */
const TYPICAL: Array<Record<string, unknown>> = [
  { name: "c", input: "2+2?", agent, criteria: "says 4" },
  { name: "c", input: "2+2?", team: agent, expectedToolCalls: ["add"], allowAdditionalToolCalls: false },
  { name: "c", input: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }], agent, scorer, expected: { any: "thing" } },
  { name: "c", input: "q", agent, criteria: "c", judgeModel: judge, judgeMode: "numeric", judgeThreshold: 8, tags: ["smoke", "math"] },
  { name: "c", input: "q", agent, criteria: "c", timeoutSeconds: 0, setupTimeoutSeconds: 5, teardownTimeoutSeconds: 0.5, setup: hook, teardown: hook },
  { name: "c", input: "q", agent, expectedOutput: "4", outputScoring: "contains", id: "case-1", description: "d", metadata: { owner: "me", n: 1 } },
  { name: "c", input: "q", agent, expectedOutput: 4, outputScoring: { method: "numeric", tolerance: 0.1, ignoreCase: false }, metadata: Object.create(null) },
  { name: "c", input: "q", agent, expectedAgentTools: ["member/tool"], expectedKnowledgeSources: ["kb"], evalFunctions: ["f"] },
  { name: "c", input: "q", agent, criteria: "c", team: null, scorer: null, judgeModel: undefined },
  {
    name: "c", input: "q", agent,
    expectedToolCalls: ["search", { name: "get_weather", args: { city: "London", units: /^c/i, day: { $regex: "mon", $flags: "i" }, when: (v: unknown) => typeof v === "string" }, times: 1 }, { name: "book", result: { ok: true } }],
    toolCallOrder: "in_order", forbiddenToolCalls: ["delete_user", { name: "charge", args: { amount: 0 } }], maxToolCalls: 5, toolCallsMustSucceed: true, passRate: 0.8,
  },
  { name: "c", input: "q", agent, expectedToolCalls: ["a", "b"], toolCallOrder: "exact", allowAdditionalToolCalls: false, maxToolCalls: 0, passRate: 1 },
];

/** For each field, a value of the wrong type (the check must send such options to the schema). */
const WRONG: Record<string, unknown> = {
  name: 1, input: 5, agent: { run: 1 }, team: "t", tags: "a", timeoutSeconds: "1", setupTimeoutSeconds: -1, teardownTimeoutSeconds: Number.NaN,
  criteria: 3, judgeModel: {}, judgeMode: null, judgeThreshold: Number.POSITIVE_INFINITY, expectedToolCalls: [1], allowAdditionalToolCalls: "no",
  scorer: hook, setup: "s", teardown: {}, id: "", description: 1, metadata: new Date(0), outputScoring: "bogus", expectedAgentTools: [""],
  expectedKnowledgeSources: "kb", evalFunctions: [null], toolCallOrder: "sorted", forbiddenToolCalls: [{ name: "x", times: 1 }], maxToolCalls: -1, passRate: 1.5,
  toolCallsMustSucceed: "yes",
};
/** Fields that take any value. */
const ANY = new Set(["expected", "expectedOutput"]);

test("whatever the plain check calls valid, the schema accepts (generated options)", () => {
  for (const seed of [1, 2, 3]) {
    const next = random(seed);
    let plain = 0;
    for (let i = 0; i < 20_000; i++) {
      const options: Record<string, unknown> = {};
      for (const field of FIELDS) {
        const roll = next();
        // Mostly absent or right, so options that pass every field are common enough to count.
        if (roll < 0.45) continue;
        if (roll < 0.96) {
          const base = TYPICAL[Math.floor(next() * TYPICAL.length)]!;
          if (field in base) options[field] = base[field];
        } else options[field] = POOL[Math.floor(next() * POOL.length)];
      }
      if (next() < 0.9) options.name ??= "n";
      if (next() < 0.9) options.input ??= "i";
      // Now and then a key of no option (issue 32): never plainly valid, as the schema is strict.
      if (next() < 0.03) options[next() < 0.5 ? "scoringMethod" : "tag"] = "x";
      if (plainlyValidCaseOptions(options)) {
        plain++;
        const parsed = CaseOptionsSchema.safeParse(options);
        assert.ok(parsed.success, `seed ${seed} #${i}: plainly valid but the schema says ${parsed.error?.issues[0]?.path.join(".")}: ${parsed.error?.issues[0]?.message} (${JSON.stringify(options, (_k, v) => (typeof v === "function" ? "[fn]" : v))})`);
      }
    }
    assert.ok(plain > 500, `seed ${seed}: only ${plain} generated options were plainly valid: the implication was barely exercised`);
  }
});

test("the shapes suites write are plainly valid, and the schema agrees", () => {
  for (const options of TYPICAL) {
    assert.equal(plainlyValidCaseOptions(options), true, JSON.stringify(options, (_k, v) => (typeof v === "function" ? "[fn]" : v)));
    assert.ok(CaseOptionsSchema.safeParse(options).success);
  }
});

test("the plain check looks at every field of the schema", () => {
  for (const field of FIELDS) {
    if (ANY.has(field)) continue;
    assert.ok(field in WRONG, `the schema has a field '${field}' the test (and maybe the plain check) does not know`);
    const options = { ...TYPICAL[0], [field]: WRONG[field] };
    assert.equal(plainlyValidCaseOptions(options), false, `a wrong '${field}' passed the plain check`);
    assert.equal(CaseOptionsSchema.safeParse(options).success, false, `the schema accepts the wrong '${field}' of this test`);
  }
  assert.equal(plainlyValidCaseOptions([] as unknown as object), false);
});

test("an unknown key is refused by the plain check and the strict schema alike; the key table is the schema's fields", () => {
  assert.deepEqual([...CASE_OPTION_KEYS].sort(), [...FIELDS].sort());
  for (const key of ["scoringMethod", "tag", "timeout", "agent_extra_unknown_key", "constructor"]) {
    const options = { ...TYPICAL[0], [key]: "x" };
    assert.equal(unknownCaseOption(options), key);
    assert.equal(plainlyValidCaseOptions(options), false, key);
    assert.equal(CaseOptionsSchema.safeParse(options).success, false, key);
  }
  // Inherited and symbol keys are not options: only own string keys count.
  const inherited = Object.assign(Object.create({ scoringMethod: "exact" }) as object, TYPICAL[0]);
  assert.equal(unknownCaseOption(inherited), null);
  assert.equal(unknownCaseOption({ ...TYPICAL[0], [Symbol("s")]: 1 }), null);
});

test("a case built from options the plain check refuses still gets the schema's error, naming the field", () => {
  assert.throws(() => new Case({ name: "c", input: "q", agent, criteria: "c", tags: "smoke" as unknown as string[] }), /case 'c': tags must be a list, got 'smoke'/);
  assert.throws(() => new Case({ name: "c", input: "q", agent, criteria: "c", metadata: new Date(0) as unknown as Record<string, unknown> }), /case 'c': metadata must be a record/);
  // Refused by the plain check (a class instance as metadata) yet valid for the schema: built as before.
  class Meta {
    owner = "me";
  }
  assert.equal(plainlyValidCaseOptions({ name: "c", input: "q", agent, criteria: "c", metadata: new Meta() }), false);
  assert.deepEqual(new Case({ name: "c", input: "q", agent, criteria: "c", metadata: { ...new Meta() } }).metadata, { owner: "me" });
});
