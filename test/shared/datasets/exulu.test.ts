// Exulu's exports load unchanged (issue 19): test_cases rows carrying createdAt, updatedAt and RBAC
// (kept under metadata.exulu, in the stored run too), UI messages with step-start, reasoning, file
// and tool-* parts (converted for the agent), eval_sets in Exulu's list shape (selected by name or
// id). Unknown fields that are not Exulu's stay an error.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatasetError, EvalfleetError, ResultsStore, loadSuite, runCases, selectCases, type LoadedSuite } from "../../../index.ts";
import { fixture, ROOT } from "../../support/paths.ts";
import type { ChatMessage } from "../../../shared/case/agent.ts";
import { ExuluEvalSetSchema, ExuluTestCaseSchema } from "../../support/exulu-types.ts";

const indexUrl = pathToFileURL(join(ROOT, "index.ts")).href;
const suiteUrl = pathToFileURL(fixture("exulu-suite.ts")).href;
const ids = { refund: "0b7c7d36-3f0e-4b3c-9a43-2d1f5c1e0001", stock: "0b7c7d36-3f0e-4b3c-9a43-2d1f5c1e0002", weather: "0b7c7d36-3f0e-4b3c-9a43-2d1f5c1e0003" };

let suite: LoadedSuite;

/** A suite module over `files`, with the Exulu fixture's agent. */
function workspace(files: Record<string, string>, definition: string): string {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-exulu-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const path = join(dir, "suite.mts");
  writeFileSync(path, `import { dataset, defineSuite } from ${JSON.stringify(indexUrl)};\nimport { exuluAgent } from ${JSON.stringify(suiteUrl)};\nexport default defineSuite({ agents: [exuluAgent], ${definition} });\n`);
  return path;
}

async function loadProblems(path: string): Promise<string[]> {
  const err = await loadSuite(path).then(
    () => assert.fail("the suite should not load"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DatasetError, String(err));
  return err.datasetProblems.map((p) => `${p.line}: ${p.field ? `${p.field}: ` : ""}${p.message}`);
}

describe("an Exulu test_cases export (JSONL) loads unchanged and runs", () => {
  test("the fixture is Exulu's shape: every row and set validates against Exulu's types, field by field", () => {
    const rows = readFileSync(fixture("data/exulu/test_cases.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as unknown);
    for (const row of rows) ExuluTestCaseSchema.parse(row);
    for (const set of JSON.parse(readFileSync(fixture("data/exulu/eval_sets.json"), "utf8")) as unknown[]) ExuluEvalSetSchema.parse(set);
    assert.equal(rows.length, 3);
  });

  test("its rows load; createdAt, updatedAt and RBAC are kept under metadata.exulu; a null field is an absent one", async () => {
    suite = await loadSuite(fixture("exulu-suite.ts"));
    assert.deepEqual(
      suite.cases.map((c) => [c.name, c.id, c.componentId]),
      [
        ["refund_after_lookup", ids.refund, "support-agent"],
        ["stock_check_failed", ids.stock, "support-agent"],
        ["Weather Query", ids.weather, "support-agent"],
      ],
    );
    const [refund, stock, weather] = suite.cases;
    assert.deepEqual(refund!.metadata, {
      exulu: { createdAt: "2026-01-12T09:30:00.000Z", updatedAt: "2026-01-14T16:05:12.000Z", RBAC: { type: "users", users: [{ id: "usr-7", rights: "write" }], roles: [], projects: [] } },
    });
    assert.deepEqual(stock!.metadata, { exulu: { createdAt: "2026-01-12T09:31:00.000Z", updatedAt: "2026-01-12T09:31:00.000Z" } }, "RBAC: null is absent");
    assert.equal(stock!.description, null, "description: null is absent");
    assert.deepEqual(weather!.input, [{ role: "user", content: "What's the weather like?" }], "Exulu's own example message");
  });

  test("the UI messages reach the agent converted: reasoning and files as parts, tool results as tool messages, ids kept", () => {
    const input = suite.cases[0]!.input as readonly ChatMessage[];
    assert.ok(Array.isArray(input));
    assert.deepEqual(
      input.map((m) => [m.role, m.id ?? null]),
      [
        ["user", "msg-u1"],
        ["assistant", "msg-a1"],
        ["tool", "msg-a1"],
        ["assistant", "msg-a1"],
        ["user", "msg-u2"],
      ],
      "step-start splits the assistant message into two steps; the tool result follows the call",
    );
    assert.deepEqual(input[0]!.metadata, { channel: "web" });
    const types = (m: ChatMessage): string[] => (m.parts ?? []).map((p) => p.type);
    assert.deepEqual(types(input[0]!), ["text", "file"]);
    assert.deepEqual(types(input[1]!), ["reasoning", "tool-call"]);
    assert.equal(input[2]!.content, 'lookup_order: {"status":"delivered"}');
    assert.equal(input[3]!.content, "Your order A-1001 was delivered.");
  });

  test("every case runs and passes (expected_output, expected_tools, and the run's evaluation functions)", async () => {
    const result = await runCases(suite.cases, { evalFunctions: suite.evalFunctions, runEvalFunctions: ["non_empty"] });
    for (const r of result.results) assert.equal(r.passed, true, `${r.name}: ${r.error ?? JSON.stringify(r.expectations)}`);
    assert.equal(result.status, "PASS");
    const [refund, stock] = result.results;
    assert.match(refund!.output!, /files: receipt\.png \(image\/png\)/);
    assert.match(refund!.output!, /reasoning parts: 1/);
    assert.equal(stock!.reliabilityPassed, true);
    assert.deepEqual(
      refund!.toJSON().expectations?.eval_functions?.map((f) => [f.name, f.passed]),
      [["non_empty", true]],
    );
    assert.equal(refund!.caseId, ids.refund);
    assert.deepEqual((refund!.metadata as { exulu: { updatedAt: string } }).exulu.updatedAt, "2026-01-14T16:05:12.000Z");
  });

  test("the stored run shows each case's id and metadata.exulu", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-exulu-db-"));
    const url = `sqlite:${join(dir, "results.db")}`;
    const result = await runCases(suite.cases, { db: url, suiteName: "exulu" });
    const store = await ResultsStore.open(url);
    try {
      const records = await store.caseRecords(result.runId!);
      assert.deepEqual(
        records.map((r) => [r.name, r.caseId, (r.metadata as { exulu?: { createdAt?: string } } | null)?.exulu?.createdAt]),
        [
          ["refund_after_lookup", ids.refund, "2026-01-12T09:30:00.000Z"],
          ["stock_check_failed", ids.stock, "2026-01-12T09:31:00.000Z"],
          ["Weather Query", ids.weather, "2026-01-13T08:00:00.000Z"],
        ],
      );
      assert.deepEqual((records[0]!.metadata as { exulu: { RBAC: unknown } }).exulu.RBAC, { type: "users", users: [{ id: "usr-7", rights: "write" }], roles: [], projects: [] });
      assert.equal("metadata" in records[0]!.report, false, "the JSON report keeps its keys");
    } finally {
      await store.close();
    }
  });
});

describe("an Exulu eval_sets export (list shape)", () => {
  test("--set selects by name and by id; test_case_ids are the rows' ids", () => {
    const names = (set: string): string[] => selectCases(suite.cases, { set, evalSets: suite.evalSets }).map((s) => s.case.name);
    assert.deepEqual(names("conversations"), ["refund_after_lookup", "stock_check_failed"]);
    assert.deepEqual(names("es-11"), ["refund_after_lookup", "stock_check_failed"]);
    assert.deepEqual(names("es-12"), ["refund_after_lookup", "stock_check_failed", "Weather Query"]);
    const everything = suite.evalSets!.get("everything")!;
    assert.deepEqual([everything.id, everything.description], ["es-12", null]);
    assert.deepEqual(everything.metadata, { exulu: { createdAt: "2026-01-15T10:01:00.000Z", updatedAt: "2026-01-16T11:00:00.000Z", RBAC: { type: "public" } } });
    assert.throws(() => names("es-99"), /unknown eval set 'es-99' \(the suite has: conversations \(id es-11\), everything \(id es-12\)\)/);
  });

  test("a --set value that is one set's name and another's id is an error naming both", () => {
    const evalSets = [
      { id: "smoke", name: "nightly", test_case_ids: [ids.weather] },
      { id: "es-1", name: "smoke", test_case_ids: [ids.refund] },
    ];
    assert.throws(
      () => selectCases(suite.cases, { set: "smoke", evalSets }),
      (err: unknown) =>
        err instanceof EvalfleetError &&
        err.code === "USAGE" &&
        err.message === "eval set 'smoke' is ambiguous: it is the name of eval set 'smoke' (id 'es-1') and the id of eval set 'nightly' (id 'smoke'); rename one of them",
    );
    assert.deepEqual(
      selectCases(suite.cases, { set: "es-1", evalSets }).map((s) => s.case.name),
      ["refund_after_lookup"],
    );
  });

  test("a member is a case id when a case has that id, else a case name", () => {
    // A case named like another case's id: the set's member means the id.
    const cases = [
      { ...suite.cases[2]!, name: "renamed", id: "x-1", tags: [] },
      { ...suite.cases[2]!, name: "x-1", id: null, tags: [] },
      { ...suite.cases[2]!, name: "by_name", id: null, tags: [] },
    ] as never[];
    assert.deepEqual(
      selectCases(cases, { set: "s", evalSets: [{ name: "s", test_case_ids: ["x-1", "by_name"] }] }).map((s) => (s.case as { name: string }).name),
      ["renamed", "by_name"],
    );
  });

  test("the same list in YAML and in JSONL, and the mapping shape, keep working", async () => {
    const rows = `{"id": "a1", "name": "a", "inputs": "What's the weather?", "expected_output": "sunny"}\n{"id": "b1", "name": "b", "inputs": "And the weather tomorrow?", "expected_output": "sunny"}\n`;
    const yaml = "- id: es-1\n  name: first\n  description: null\n  test_case_ids: [a1]\n  createdAt: 2026-01-01T00:00:00Z\n  RBAC: null\n- id: es-2\n  name: both\n  test_case_ids: [a1, b]\n";
    const jsonl = `{"id": "es-1", "name": "first", "test_case_ids": ["a1"], "updatedAt": "2026-01-02T00:00:00Z"}\n{"id": "es-2", "name": "both", "test_case_ids": ["a1", "b"]}\n`;
    for (const [file, text] of [
      ["sets.yaml", yaml],
      ["sets.jsonl", jsonl],
      ["sets.json", JSON.stringify({ first: ["a1"], both: { description: "all", cases: ["a1", "b"] } })],
    ] as const) {
      const s = await loadSuite(workspace({ "rows.jsonl": rows, [file]: text }, `datasets: [dataset("./rows.jsonl", { scoring: "contains" })], evalSets: "./${file}"`));
      assert.deepEqual(
        selectCases(s.cases, { set: "first", evalSets: s.evalSets }).map((c) => c.case.name),
        ["a"],
        file,
      );
      assert.deepEqual(
        selectCases(s.cases, { set: file === "sets.json" ? "both" : "es-2", evalSets: s.evalSets }).map((c) => c.case.name),
        ["a", "b"],
        file,
      );
    }
  });

  test("bad sets are reported with their line: unknown fields, duplicate names and ids, unknown members", async () => {
    const rows = `{"id": "a1", "name": "a", "inputs": "hi", "expected_output": "x"}\n`;
    const sets = JSON.stringify(
      [
        { id: "es-1", name: "one", test_case_ids: ["a1"], owner: "me" },
        { id: "es-1", name: "two", test_case_ids: ["a1"] },
        { id: "es-3", name: "one", test_case_ids: ["a1"] },
        { id: "es-4", name: "four", test_case_ids: ["a1", "ghost"], createdAt: "yesterday" },
        { id: "es-5", name: "five", test_case_ids: ["ghost"] },
      ],
      null,
      2,
    );
    const lines = await loadProblems(workspace({ "rows.jsonl": rows, "sets.json": sets }, `datasets: ["./rows.jsonl"], evalSets: "./sets.json"`));
    // Each entry's problems carry the line its object starts on; a member's, the member's own line.
    const starts = sets.split("\n").flatMap((l, i) => (l === "  {" ? [i + 1] : []));
    const ghost = sets.split("\n").findLastIndex((l) => l.includes('"ghost"')) + 1;
    assert.deepEqual(lines, [
      `${starts[0]}: owner: unknown field (an eval set has id, name, description, test_case_ids, createdAt, updatedAt, RBAC)`,
      `${starts[1]}: id: duplicate eval set id 'es-1' (also eval set 'one')`,
      `${starts[2]}: name: duplicate eval set name 'one'`,
      `${starts[3]}: createdAt: must be a date (ISO 8601 text or epoch milliseconds), got 'yesterday'`,
      `${ghost}: five[0]: 'ghost' is not a case name or id in the suite`,
    ]);
  });
});

describe("Exulu's fields are checked like any other; other unknown fields stay an error", () => {
  test("bad createdAt, updatedAt and RBAC values, a conflicting metadata.exulu, and a non-Exulu field", async () => {
    const rows = [
      { name: "a", inputs: "hi", expected_output: "x", createdAt: "not a date", updatedAt: 1767225600000, RBAC: "public" },
      { name: "b", inputs: "hi", expected_output: "x", createdAt: "2026-01-01T00:00:00Z", metadata: { exulu: { createdAt: "2025-12-31T00:00:00Z" } } },
      { name: "c", inputs: "hi", expected_output: "x", created_at: "2026-01-01T00:00:00Z", rbac: {} },
      { name: "d", inputs: "hi", expected_output: "x", updatedAt: null, RBAC: null, metadata: { exulu: { source: "import" } }, createdAt: "2026-01-01T00:00:00Z" },
    ];
    const path = workspace({ "rows.jsonl": rows.map((r) => JSON.stringify(r)).join("\n") }, `datasets: ["./rows.jsonl"]`);
    const lines = await loadProblems(path);
    assert.deepEqual(lines, [
      "1: createdAt: must be a date (ISO 8601 text or epoch milliseconds), got 'not a date'",
      "1: RBAC: must be an object (Exulu's RBACData), got 'public'",
      "2: metadata.exulu.createdAt: is '2025-12-31T00:00:00Z' but the record's createdAt is '2026-01-01T00:00:00Z': keep one",
      "3: created_at: unknown field (did you mean createdAt?); put extra data under metadata",
      "3: rbac: unknown field (did you mean RBAC?); put extra data under metadata",
    ]);
  });

  test("metadata.exulu already in a row is merged with the row's Exulu fields", async () => {
    const rows = [{ name: "d", inputs: "hi", expected_output: "x", updatedAt: null, RBAC: null, metadata: { owner: "qa", exulu: { source: "import" } }, createdAt: 1767225600000 }];
    const s = await loadSuite(workspace({ "rows.jsonl": JSON.stringify(rows[0]) }, `datasets: ["./rows.jsonl"]`));
    assert.deepEqual(s.cases[0]!.metadata, { owner: "qa", exulu: { source: "import", createdAt: 1767225600000 } });
  });

  test("CSV exports carry the same fields: createdAt and updatedAt as text, RBAC as a JSON object cell", async () => {
    const csv = 'id,name,inputs,expected_output,createdAt,updatedAt,RBAC\nt1,csv_row,"What\'s the weather?",sunny,2026-01-01T00:00:00Z,,"{""type"": ""public""}"\n';
    const s = await loadSuite(workspace({ "rows.csv": csv }, `datasets: [dataset("./rows.csv", { scoring: "contains" })]`));
    assert.deepEqual(s.cases[0]!.metadata, { exulu: { createdAt: "2026-01-01T00:00:00Z", RBAC: { type: "public" } } });
  });
});
