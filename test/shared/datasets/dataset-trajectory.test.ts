// Dataset rows with trajectory checks (shared/datasets/dataset.ts): matchers in expected_tools (and
// Agno's expected_tool_calls), tool_call_order, forbidden_tools, max_tool_calls and
// tool_calls_must_succeed, in JSONL and in CSV's JSON cells; a malformed one is a load error naming
// the file, the line and the field, and nothing runs; valid rows grade their runs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatasetError, loadSuite, runCases } from "../../../index.ts";
import { rowToSpec, type RegisteredComponent, type RowContext } from "../../../shared/datasets/dataset.ts";
import { resolveScoring } from "../../../shared/datasets/expected-output-methods.ts";
import { csvRecordToRow } from "../../../shared/datasets/csv-rows.ts";
import { travelAgent } from "../../fixtures/trajectory/agents.ts";
import { ROOT } from "../../support/paths.ts";

const agent: RegisteredComponent = { id: "travel-agent", component: travelAgent, kind: "agent" };
const ctx: RowContext = { components: new Map([["travel-agent", agent]]), defaultComponent: agent, scoring: resolveScoring(null), tags: [], allowAdditionalTools: true, evalFunctions: [] };
const spec = (row: Record<string, unknown>) => {
  const out = rowToSpec({ name: "r", inputs: "trip to Rome", ...row }, ctx);
  if ("problems" in out) assert.fail(`unexpected problems: ${JSON.stringify(out.problems)}`);
  return out.spec;
};
const problems = (row: Record<string, unknown>) => {
  const out = rowToSpec({ name: "r", inputs: "trip to Rome", ...row }, ctx);
  return "problems" in out ? out.problems.map((p) => `${p.field}: ${p.message}`) : [];
};

describe("trajectory fields of a row", () => {
  test("matchers, the order, forbidden calls and bounds become the case's options", () => {
    const s = spec({
      expected_tools: ["search", { name: "get_weather", args: { city: { $regex: "^rom", $flags: "i" } }, result: "sun" }, { name: "book", times: 1 }],
      tool_call_order: "in_order",
      forbidden_tools: ["cancel", { name: "book", args: { seats: 0 } }],
      max_tool_calls: 5,
      tool_calls_must_succeed: true,
    });
    assert.deepEqual(s.expectedToolCalls, ["search", { name: "get_weather", args: { city: { $regex: "^rom", $flags: "i" } }, result: "sun" }, { name: "book", times: 1 }]);
    assert.equal(s.toolCallOrder, "in_order");
    assert.deepEqual(s.forbiddenToolCalls, ["cancel", { name: "book", args: { seats: 0 } }]);
    assert.equal(s.maxToolCalls, 5);
    assert.equal(s.toolCallsMustSucceed, true);
    assert.deepEqual(spec({ expected_tool_calls: ["search"] }).expectedToolCalls, ["search"], "Agno's field name is the same field");
    const plain = spec({ expected_tools: ["search"] });
    assert.deepEqual([plain.toolCallOrder, plain.forbiddenToolCalls, plain.maxToolCalls, plain.toolCallsMustSucceed, plain.allowAdditionalToolCalls], ["any", null, null, false, true]);
    assert.equal(spec({ expected_tools: ["a"], tool_call_order: "exact" }).allowAdditionalToolCalls, false, "exact allows no other call");
  });

  test("forbidden_tools, max_tool_calls or tool_calls_must_succeed alone are checks", () => {
    for (const row of [{ forbidden_tools: ["cancel"] }, { max_tool_calls: 0 }, { tool_calls_must_succeed: true }]) assert.deepEqual(problems(row), [], JSON.stringify(row));
    assert.match(problems({ tool_calls_must_succeed: false })[0]!, /^null: has no checks/);
  });

  test("each malformed matcher or field is a problem at its path", () => {
    assert.deepEqual(problems({ expected_tools: [{ name: "get_weather", args: { city: { $regex: "(" } } }] }), ["expected_tools[0].args.city.$regex: is not a valid regex (Unterminated group), got '('"]);
    assert.deepEqual(problems({ expected_tools: [{ name: "x", arg: {} }] }), [`expected_tools[0]: has an unknown key 'arg' (a matcher has: name, args, times, result), got {"name":"x","arg":{}}`]);
    assert.deepEqual(problems({ expected_tools: [{ name: "x", times: -1 }] }), ["expected_tools[0].times: must be a whole number >= 0, got -1"]);
    assert.deepEqual(problems({ forbidden_tools: [{ name: "x", times: 1 }] }), ["forbidden_tools[0].times: has no meaning for a forbidden call (any matching call fails the check), got 1"]);
    assert.deepEqual(problems({ expected_tools: [{ name: "x", args: { q: { $regx: "a" } } }] }), [`expected_tools[0].args.q: has an unknown key '$regx' (a matcher object is { "$regex": "...", "$flags": "i" }), got {"$regx":"a"}`]);
    assert.deepEqual(problems({ expected_tools: ["a"], expected_tool_calls: ["a"] }), ["expected_tool_calls: is set beside expected_tools: they are the same field, set one"]);
    assert.deepEqual(problems({ expected_tools: ["a"], tool_call_order: "sorted" }), ["tool_call_order: must be one of any, in_order, exact, got 'sorted'"]);
    assert.deepEqual(problems({ criteria: "c", tool_call_order: "exact" }), ["tool_call_order: is exact but expected_tools is not set (the calls to put in order)"]);
    assert.deepEqual(problems({ expected_tools: ["a"], tool_call_order: "exact", allow_additional_tools: true }), ["allow_additional_tools: is true but tool_call_order is exact (exactly these calls and nothing else)"]);
    for (const max of [-1, 1.5, "3"]) assert.deepEqual(problems({ max_tool_calls: max }), [`max_tool_calls: must be a whole number >= 0, got ${typeof max === "string" ? `'${max}'` : max}`]);
    assert.deepEqual(problems({ tool_calls_must_succeed: "yes" }), ["tool_calls_must_succeed: must be true or false, got 'yes'"]);
  });

  test("CSV: matchers in a JSON cell, the bound a number, the flag a boolean", () => {
    const header = ["name", "inputs", "expected_tools", "forbidden_tools", "max_tool_calls", "tool_calls_must_succeed", "tool_call_order"];
    const { row, problems: cellProblems } = csvRecordToRow(header, ["r", "trip to Rome", '[{"name": "get_weather", "args": {"city": {"$regex": "^Rom"}}}]', "cancel, refund", "3", "yes", "in_order"]);
    assert.deepEqual(cellProblems, []);
    assert.deepEqual(row, { name: "r", inputs: "trip to Rome", expected_tools: [{ name: "get_weather", args: { city: { $regex: "^Rom" } } }], forbidden_tools: ["cancel", "refund"], max_tool_calls: 3, tool_calls_must_succeed: true, tool_call_order: "in_order" });
    assert.deepEqual(problems(row), []);
  });
});

describe("a dataset with trajectory rows", () => {
  const agents = pathToFileURL(join(ROOT, "test", "fixtures", "trajectory", "agents.ts")).href;
  const index = pathToFileURL(join(ROOT, "index.ts")).href;
  const suiteWith = (rows: string): string => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-trajectory-rows-"));
    writeFileSync(join(dir, "rows.jsonl"), rows);
    const suite = join(dir, "suite.mts");
    writeFileSync(suite, `import { dataset, defineSuite } from ${JSON.stringify(index)};\nimport { travelAgent } from ${JSON.stringify(agents)};\nexport default defineSuite({ agents: [travelAgent], datasets: [dataset("./rows.jsonl")] });\n`);
    return suite;
  };

  test("a malformed matcher is a load error naming the file, the line and the field; nothing runs", async () => {
    const suite = suiteWith(
      [
        '{"name": "ok", "inputs": "trip to Rome", "expected_tools": ["book"]}',
        '{"name": "bad_regex", "inputs": "trip to Rome", "expected_tools": [{"name": "get_weather", "args": {"city": {"$regex": "[a-"}}}]}',
        '{"name": "bad_times", "inputs": "trip to Rome", "forbidden_tools": ["cancel"], "expected_tool_calls": [{"name": "book", "times": -1}]}',
      ].join("\n"),
    );
    const err = await loadSuite(suite).then(
      () => assert.fail("the suite should not load"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof DatasetError, String(err));
    const file = join(suite, "..", "rows.jsonl");
    assert.deepEqual(err.problems, [
      `${file}:2: expected_tools[0].args.city.$regex: is not a valid regex (Unterminated character class), got '[a-'`,
      `${file}:3: expected_tool_calls[0].times: must be a whole number >= 0, got -1`,
    ]);
    assert.match(err.message, /2 problems in the suite's data, nothing was run/);
  });

  test("valid rows grade the runs: a $regex argument, the exact order, a bound", async () => {
    const suite = await loadSuite(
      suiteWith(
        [
          '{"name": "regex", "inputs": "trip to Rome", "expected_tools": [{"name": "get_weather", "args": {"city": {"$regex": "^rom", "$flags": "i"}}, "result": "sun"}]}',
          '{"name": "exact", "inputs": "trip to Oslo", "expected_tools": ["search", "book"], "tool_call_order": "exact"}',
          '{"name": "bounded", "inputs": "trip to Rome", "max_tool_calls": 3, "forbidden_tools": [{"name": "book", "args": {"seats": 2}}]}',
        ].join("\n"),
      ),
    );
    const result = await runCases(suite.cases);
    assert.deepEqual(
      result.results.map((r) => [r.name, r.reliabilityPassed, r.reliability?.reason]),
      [
        ["regex", true, "the expected call matched (3 tool calls)"],
        ["exact", false, 'expected book as call 2 of 2, got get_weather(city="Oslo", units="c") at step 2'],
        ["bounded", true, "no forbidden call; at most 3 calls (3 tool calls)"],
      ],
    );
  });
});
