// Datasets (issue 8): a suite declares cases as JSONL, JSON, YAML or CSV rows; every invalid row
// is reported with its file, line and field before anything runs; rows are read again from the
// file when their case runs; the suite fingerprint covers the datasets' content.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Case, DatasetCase, DatasetError, ErrorCode, SuiteLoadError, loadSuite, runCase, runCases, type LoadedSuite } from "../../../index.ts";
import { ROOT } from "../../support/paths.ts";

const root = ROOT;
const indexUrl = pathToFileURL(join(root, "index.ts")).href;
const agentsUrl = pathToFileURL(join(root, "test", "fixtures", "data-agents.ts")).href;

let counter = 0;
/** Writes `files` and a suite module declaring `definition` into a new folder; returns the folder and the suite's path. */
function workspace(files: Record<string, string>, definition: string, prelude = ""): { dir: string; suite: string } {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-dataset-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  // .mts: a file outside any package is only an ES module by its extension.
  const suite = join(dir, `suite-${++counter}.mts`);
  writeFileSync(
    suite,
    `import { Case, dataset, defineSuite } from ${JSON.stringify(indexUrl)};\nimport { scriptedAgent, scriptedTeam } from ${JSON.stringify(agentsUrl)};\n${prelude}\nexport default defineSuite({ ${definition} });\n`,
  );
  return { dir, suite };
}

/** Loads a suite that must fail; returns the error and its problem lines. */
async function problems(files: Record<string, string>, definition: string, prelude = ""): Promise<{ dir: string; err: SuiteLoadError; lines: string[] }> {
  const { dir, suite } = workspace(files, definition, prelude);
  const err = await loadSuite(suite).then(
    () => assert.fail("the suite should not load"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SuiteLoadError, String(err));
  assert.doesNotMatch(err.message, /\n\s+at /, "no stack trace");
  return { dir, err, lines: [...err.problems] };
}

const AGENTS = `agents: [scriptedAgent], teams: { crew: scriptedTeam }`;

// The same three rows in every format: a prompt with tools and tags, a multi-turn conversation
// with JSON expected output and metadata, a team row with a judge.
const ROWS = [
  { id: "r1", name: "factorial", agent: "scripted", inputs: "What is 10!? | answer=3628800 | tools=factorial", expected_output: "3628800", scoring_method: "numeric", tolerance: 0.5, expected_tools: ["factorial"], tags: ["smoke", "math"], timeout_seconds: 30 },
  {
    name: "conversation",
    agent: "scripted",
    description: "two turns",
    inputs: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "user", content: 'Totals? | answer={"total": 3}' },
    ],
    expected_output: { total: 3 },
    scoring_method: "json",
    metadata: { owner: "data-team" },
  },
  { id: "r3", name: "team_row", team: "crew", inputs: "6 x 7 | answer=42 | members=calculator/multiply", expected_agent_tools: ["calculator/multiply"], expected_knowledge_sources: ["kb"], criteria: "Says 42", judge_mode: "numeric", judge_threshold: 8, allow_additional_tools: false },
];
const FORMATS: Record<string, { file: string; text: string; lines: number[] }> = {
  jsonl: { file: "cases.jsonl", text: ROWS.map((r) => JSON.stringify(r)).join("\n\n") + "\n", lines: [1, 3, 5] },
  json: { file: "cases.json", text: `[\n${ROWS.map((r) => JSON.stringify(r, null, 2)).join(",\n")}\n]\n`, lines: [] },
  yaml: {
    file: "cases.yaml",
    text: [
      "# the same rows, written by hand",
      "- id: r1",
      "  name: factorial",
      "  agent: scripted",
      '  inputs: "What is 10!? | answer=3628800 | tools=factorial"',
      '  expected_output: "3628800"',
      "  scoring_method: numeric",
      "  tolerance: 0.5",
      "  expected_tools: [factorial]",
      "  tags: [smoke, math]",
      "  timeout_seconds: 30",
      "- name: conversation",
      "  agent: scripted",
      "  description: two turns",
      "  inputs:",
      "    - { role: user, content: Hi }",
      "    - role: assistant",
      "      content: Hello",
      "    - role: user",
      "      parts: [{ type: text, text: 'Totals? | answer={\"total\": 3}' }]",
      "  expected_output: { total: 3 }",
      "  scoring_method: json",
      "  metadata: { owner: data-team }",
      "- id: r3",
      "  name: team_row",
      "  team: crew",
      '  inputs: "6 x 7 | answer=42 | members=calculator/multiply"',
      "  expected_agent_tools: [calculator/multiply]",
      "  expected_knowledge_sources: [kb]",
      "  criteria: Says 42",
      "  judge_mode: numeric",
      "  judge_threshold: 8",
      "  allow_additional_tools: false",
      "",
    ].join("\n"),
    lines: [2, 12, 24],
  },
  csv: {
    file: "cases.csv",
    text: [
      "id,name,agent,team,description,inputs,expected_output,scoring_method,tolerance,expected_tools,expected_agent_tools,expected_knowledge_sources,criteria,judge_mode,judge_threshold,allow_additional_tools,tags,timeout_seconds,metadata.owner",
      'r1,factorial,scripted,,,"What is 10!? | answer=3628800 | tools=factorial",3628800,numeric,0.5,factorial,,,,,,,"smoke, math",30,',
      ',conversation,scripted,,two turns,"[{""role"": ""user"", ""content"": ""Hi""}, {""role"": ""assistant"", ""content"": ""Hello""},',
      '{""role"": ""user"", ""content"": ""Totals? | answer={\\""total\\"": 3}""}]","{""total"": 3}",json,,,,,,,,,,,data-team',
      'r3,team_row,,crew,,"6 x 7 | answer=42 | members=calculator/multiply",,,,,"[""calculator/multiply""]",kb,Says 42,numeric,8,false,,,',
      "",
    ].join("\n"),
    lines: [2, 3, 5],
  },
};
FORMATS.json!.lines = [2, 2 + JSON.stringify(ROWS[0], null, 2).split("\n").length, 2 + JSON.stringify(ROWS[0], null, 2).split("\n").length + JSON.stringify(ROWS[1], null, 2).split("\n").length];

/** Everything a case says about itself, its heavy fields read from the file. */
function describeCase(c: Case): Record<string, unknown> {
  const full = c instanceof DatasetCase ? c.materialize() : c;
  return {
    name: c.name,
    id: c.id,
    label: c.label,
    componentId: c.componentId,
    tags: [...c.tags],
    timeoutSeconds: c.timeoutSeconds,
    input: full.input,
    description: full.description,
    metadata: full.metadata,
    expectedOutput: full.expectedOutput,
    outputScoring: full.outputScoring,
    expectedToolCalls: full.expectedToolCalls,
    allowAdditionalToolCalls: full.allowAdditionalToolCalls,
    expectedAgentTools: full.expectedAgentTools,
    expectedKnowledgeSources: full.expectedKnowledgeSources,
    criteria: full.criteria,
    judgeMode: full.judgeMode,
    judgeThreshold: full.judgeThreshold,
  };
}

describe("dataset formats", () => {
  const loaded = new Map<string, LoadedSuite>();
  for (const [format, f] of Object.entries(FORMATS)) {
    test(`${format}: the rows load as cases, in file order, each with the line it starts on`, async () => {
      const { suite } = workspace({ [f.file]: f.text }, `${AGENTS}, datasets: [dataset("./${f.file}", { tags: ["data"] })]`);
      const s = await loadSuite(suite);
      loaded.set(format, s);
      assert.deepEqual(
        s.cases.map((c) => c.name),
        ["factorial", "conversation", "team_row"],
      );
      assert.deepEqual(
        s.cases.map((c) => (c as unknown as DatasetCase).source.split(":").at(-1)),
        f.lines.map(String),
      );
      assert.equal(s.datasets?.[0]?.format, format);
      assert.equal(s.datasets?.[0]?.rows, 3);
      const [factorial, conversation, team] = s.cases.map(describeCase);
      assert.deepEqual(factorial, {
        name: "factorial",
        id: "r1",
        label: "agent",
        componentId: "scripted",
        tags: ["smoke", "math", "data"],
        timeoutSeconds: 30,
        input: "What is 10!? | answer=3628800 | tools=factorial",
        description: null,
        metadata: null,
        expectedOutput: format === "csv" || format === "yaml" || format === "json" || format === "jsonl" ? "3628800" : null,
        outputScoring: { method: "numeric", ignoreCase: false, tolerance: 0.5 },
        expectedToolCalls: ["factorial"],
        allowAdditionalToolCalls: true,
        expectedAgentTools: null,
        expectedKnowledgeSources: null,
        criteria: null,
        judgeMode: "binary",
        judgeThreshold: 7,
      });
      assert.deepEqual(conversation!.input, [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: 'Totals? | answer={"total": 3}' },
      ]);
      assert.deepEqual(conversation!.metadata, { owner: "data-team" });
      assert.equal(conversation!.description, "two turns");
      assert.equal(conversation!.id, null);
      assert.deepEqual(team!.label, "team");
      assert.deepEqual(team!.expectedAgentTools, ["calculator/multiply"]);
      assert.deepEqual(team!.expectedKnowledgeSources, ["kb"]);
      assert.equal(team!.judgeThreshold, 8);
      assert.equal(team!.allowAdditionalToolCalls, false);
    });
  }

  test("all four formats give the same cases (the CSV reads JSON cells; YAML reads UIMessage parts)", () => {
    const reference = loaded.get("jsonl");
    assert.ok(reference, "the JSONL test ran first");
    for (const format of ["json", "yaml", "csv"]) {
      const other = loaded.get(format);
      assert.ok(other, `${format} loaded`);
      // JSON data of a CSV cell is text: `{"total": 3}` is compared as JSON, so it scores the same.
      const norm = (c: Case) => ({ ...describeCase(c), expectedOutput: format === "csv" && c.outputScoring.method === "json" ? JSON.parse(c.expectedOutput as string) : c.expectedOutput });
      assert.deepEqual(other.cases.map(norm), reference.cases.map((c) => ({ ...describeCase(c), expectedOutput: c.expectedOutput })), format);
    }
  });

  test("the cases run and grade: numeric, json, tools, team member tools (a missing knowledge source fails)", async () => {
    const s = loaded.get("yaml")!;
    const suite = await runCases(s.cases, { judgeModel: { judge: async () => ({ score: 9, reason: "42" }) } });
    const [factorial, conversation, team] = suite.results;
    assert.equal(factorial!.passed, true, factorial!.error ?? "");
    assert.equal(conversation!.passed, true, JSON.stringify(conversation!.expectations));
    assert.equal(team!.passed, false);
    assert.equal(team!.expectations?.expectedAgentTools?.passed, true);
    assert.equal(team!.expectations?.expectedKnowledgeSources?.reason, "missing knowledge sources: kb (the run reported no knowledge sources (RunOutput.knowledgeSources))");
  });
});

describe("rows are read from the file when their case runs", () => {
  const jsonl = (rows: object[]): string => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
  const rows = [
    { name: "one", inputs: "q | answer=1", expected_output: "1" },
    { name: "two", inputs: "q | answer=2", expected_output: "2" },
  ];

  test("a dataset case holds where its row is, not its inputs", async () => {
    const { suite } = workspace({ "c.jsonl": jsonl(rows) }, `agents: [scriptedAgent], datasets: ["./c.jsonl"]`);
    const s = await loadSuite(suite);
    const c = s.cases[1]!;
    assert.ok(c instanceof DatasetCase);
    assert.deepEqual(Object.keys(c).sort(), ["expected", "id", "judgeModel", "name", "scorer", "setup", "tags", "teardown", "timeoutSeconds"]);
    assert.ok(!JSON.stringify(Object.values(c)).includes("answer=2"), "the inputs are not held");
    assert.equal(c.input, "q | answer=2", "read from the file on demand");
    assert.ok(Object.isFrozen(c));
  });

  test("a row edited after the suite was loaded fails its own case, naming the file and line; nothing else breaks", async () => {
    const { dir, suite } = workspace({ "c.jsonl": jsonl(rows) }, `agents: [scriptedAgent], datasets: ["./c.jsonl"]`);
    const s = await loadSuite(suite);
    writeFileSync(join(dir, "c.jsonl"), jsonl([rows[0]!, { ...rows[1]!, name: "renamed", inputs: "q | answer=22" }]));
    const r = await runCase(s.cases[1]!, { index: 1 });
    assert.match(r.error ?? "", new RegExp(`^dataset: ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/c\\.jsonl:2: the file changed since the suite was loaded`));
    assert.equal(r.passed, false);
    assert.equal(r.name, "two");
    assert.match(r.sessionId, /^eval-two-[0-9a-f]{8}$/);
  });

  test("the fingerprint follows the datasets' content, not the working directory", async () => {
    const files = { "c.jsonl": jsonl(rows) };
    const a = workspace(files, `agents: [scriptedAgent], datasets: ["./c.jsonl"]`);
    const first = (await loadSuite(a.suite)).fingerprint;
    assert.equal((await loadSuite(a.suite)).fingerprint, first, "loading again gives the same fingerprint");
    const cwd = process.cwd();
    process.chdir(tmpdir());
    try {
      assert.equal((await loadSuite(a.suite)).fingerprint, first, "another working directory, the same fingerprint");
    } finally {
      process.chdir(cwd);
    }
    // The same length, one expected output changed: only the content differs.
    writeFileSync(join(a.dir, "c.jsonl"), readFileSync(join(a.dir, "c.jsonl"), "utf8").replace('"expected_output":"2"', '"expected_output":"3"'));
    assert.notEqual((await loadSuite(a.suite)).fingerprint, first);
  });
});

describe("invalid datasets: every problem, with its file, line, field and value, and nothing runs", () => {
  test("JSONL: syntax, types, unknown fields, agents, checks, duplicates and scoring, every row reported", async () => {
    const file = [
      '{"name": "ok", "id": "a", "inputs": "q", "expected_output": "x"}',
      "",
      '{"name": "bad_types", "inputs": 42, "tags": "smoke", "timeout_seconds": "soon", "expected_tools": ["", 3], "expected_tool": ["x"]}',
      "not json",
      '["a list"]',
      '{"name": "messages", "inputs": [{"role": "user", "content": "hi"}, {"role": "user", "content": 5}], "criteria": "c", "judge_mode": "numeric", "judge_threshold": 11}',
      '{"name": "who", "inputs": "q", "agent": "ghost", "expected_output": "x"}',
      '{"name": "both", "inputs": "q", "agent": "scripted", "team": "crew", "expected_output": "x"}',
      '{"name": "not_a_team", "inputs": "q", "team": "scripted", "expected_output": "x"}',
      '{"name": "no_checks", "inputs": "q"}',
      '{"name": "ok", "inputs": "duplicate name", "expected_output": "x"}',
      '{"name": "dup_id", "id": "a", "inputs": "q", "expected_output": "x"}',
      '{"name": "regex", "inputs": "q", "expected_output": "(", "scoring_method": "regex"}',
      '{"name": "json", "inputs": "q", "expected_output": "{nope", "scoring_method": "json"}',
      '{"name": "numeric", "inputs": "q", "expected_output": "lots", "scoring_method": "numeric"}',
      '{"name": "orphan_scoring", "inputs": "q", "expected_tools": ["t"], "scoring_method": "exact", "tolerance": 1}',
      '{"name": "", "inputs": "q", "expected_output": "x", "judge_mode": "Numeric"}',
      '{"inputs": "q", "expected_output": "x"}',
      '{"name": "no_inputs", "expected_output": "x"}',
    ].join("\n");
    const { dir, err, lines } = await problems({ "bad.jsonl": file }, `${AGENTS}, datasets: [dataset("./bad.jsonl", { agent: "scripted" })]`);
    assert.ok(err instanceof DatasetError);
    assert.equal(err.code, ErrorCode.DatasetInvalid);
    const f = `${dir}/bad.jsonl`;
    assert.deepEqual(lines, [
      `${f}:3: inputs: must be a string or a list of {role, content} messages, got 42`,
      `${f}:3: tags: must be a list of tags, got 'smoke'`,
      `${f}:3: timeout_seconds: must be a number of seconds, got 'soon'`,
      `${f}:3: expected_tools[0]: must not be empty, got ''`,
      `${f}:3: expected_tools[1]: must be a tool name (text) or a { name, args, times, result } matcher, got 3`,
      `${f}:3: expected_tool: unknown field (did you mean expected_tools?); put extra data under metadata`,
      `${f}:4: invalid JSON: Unexpected token 'o', "not json" is not valid JSON`,
      `${f}:5: a row must be an object of test case fields, got a list ['a list']`,
      `${f}:6: inputs[1]: must be a {role, content} message, got {"role":"user","content":5}`,
      `${f}:6: judge_threshold: must be 1-10, got 11`,
      `${f}:7: agent: no agent or team with id 'ghost' in the suite (it has: 'scripted', 'crew')`,
      `${f}:8: team: set only one of agent and team, got agent 'scripted' and team 'crew'`,
      `${f}:9: team: 'scripted' is an agent, not a team: use the agent field`,
      `${f}:10: has no checks: set expected_output, expected_tools, expected_agent_tools, expected_knowledge_sources, criteria and/or eval_functions`,
      `${f}:11: name: duplicate case name 'ok' (first at ${f}:1): names identify cases in selection and reports`,
      `${f}:12: id: duplicate case id 'a' (first at ${f}:1)`,
      `${f}:13: expected_output: is not a valid regular expression: Invalid regular expression: /(/: Unterminated group, got '('`,
      `${f}:14: expected_output: must be JSON for scoring method 'json': Expected property name or '}', got '{nope'`,
      `${f}:15: expected_output: must be a number (or text holding one) for scoring method 'numeric', got 'lots'`,
      `${f}:16: scoring_method: is set but expected_output is not`,
      `${f}:16: tolerance: is set but expected_output is not`,
      `${f}:17: name: must not be empty, got ''`,
      `${f}:17: judge_mode: must be 'binary' or 'numeric', got 'Numeric'`,
      `${f}:18: name: is required (a row needs a name, or an id to serve as one)`,
      `${f}:19: inputs: is required (a prompt, or a list of {role, content} messages)`,
    ]);
    assert.match(err.message, /^.*suite-\d+\.mts: 25 problems in the suite's data, nothing was run:\n  /);
    assert.equal(err.message.split("\n").length, 26, "one problem per line");
  });

  test("JSON: an element's syntax error names its line; a missing or trailing comma and text after the array are reported", async () => {
    const file = ['[', '  {"name": "a", "inputs": "q", "expected_output": "x"},', '  {"name": "b",', '   "inputs": "q",}', '  ,', '  {"name": "c", "inputs": "q", "expected_output": "x"},', "]"].join("\n");
    const { dir, lines } = await problems({ "bad.json": file }, `agents: [scriptedAgent], datasets: ["./bad.json"]`);
    assert.deepEqual(lines, [`${dir}/bad.json:4: invalid JSON: Expected double-quoted property name`, `${dir}/bad.json:7: invalid JSON: a trailing ',' before ']'`]);
    const gap = await problems({ "gap.json": '[\n  {"name": "a", "inputs": "q", "expected_output": "x"},\n  ,\n  {"name": "b", "inputs": "q", "expected_output": "x"} {"name": "c"}\n]' }, `agents: [scriptedAgent], datasets: ["./gap.json"]`);
    assert.deepEqual(gap.lines, [`${gap.dir}/gap.json:3: invalid JSON: a ',' with no row before it`, `${gap.dir}/gap.json:4: invalid JSON: Unexpected non-whitespace character after JSON`]);
    const notArray = await problems({ "o.json": '{"name": "a"}' }, `agents: [scriptedAgent], datasets: ["./o.json"]`);
    assert.deepEqual(notArray.lines, [`${notArray.dir}/o.json:1: expected a JSON array of test cases ([{...}, ...]), found "{"`]);
    const open = await problems({ "u.json": '[\n  {"name": "a", "inputs": "q", "expected_output": "x"}\n' }, `agents: [scriptedAgent], datasets: ["./u.json"]`);
    assert.deepEqual(open.lines, [`${open.dir}/u.json:3: the JSON array is not closed (missing ])`]);
    const after = await problems({ "t.json": "[]\n[]" }, `agents: [scriptedAgent], datasets: ["./t.json"]`);
    assert.deepEqual(after.lines, [`${after.dir}/t.json:2: unexpected content after the array's closing ]`]);
  });

  test("YAML: a syntax error and a document that is not a sequence name their line; field errors name the row's line", async () => {
    const syntax = await problems({ "s.yaml": "- name: a\n  inputs: q\n  expected_output: [x\n" }, `agents: [scriptedAgent], datasets: ["./s.yaml"]`);
    assert.equal(syntax.lines.length, 1);
    assert.match(syntax.lines[0]!, new RegExp(`^${syntax.dir}/s\\.yaml:\\d: invalid YAML: `));
    const mapping = await problems({ "m.yaml": "# a comment\nname: a\ninputs: q\n" }, `agents: [scriptedAgent], datasets: ["./m.yaml"]`);
    assert.deepEqual(mapping.lines, [`${mapping.dir}/m.yaml:2: expected a YAML sequence of test cases (- name: ...)`]);
    const field = await problems({ "f.yaml": "- name: a\n  inputs: q\n  expected_output: x\n- name: b\n  inputs: q\n  expected_tools: factorial\n" }, `agents: [scriptedAgent], datasets: ["./f.yaml"]`);
    assert.deepEqual(field.lines, [`${field.dir}/f.yaml:4: expected_tools: must be a list of names, got 'factorial'`]);
  });

  test("CSV: an unknown column once at the header; bad cells, short records and JSON cells per record, with the record's first line", async () => {
    const file = [
      "name,inputs,expected_output,timeout_seconds,expected_tools,expected_tool,metadata",
      'a,"multi',
      'line prompt",x,abc,,,',
      'b,q,x,3,"[""ok"", 3",,',
      "c,q,x,3,,,{nope",
      "d,q",
      'e,q,x,3,"a, b",,"{""k"": 1}"',
      'f,"unclosed',
    ].join("\n");
    const { dir, lines } = await problems({ "bad.csv": file }, `agents: [scriptedAgent], datasets: ["./bad.csv"]`);
    const f = `${dir}/bad.csv`;
    assert.deepEqual(lines, [
      `${f}:1: expected_tool: unknown column (did you mean expected_tools?); name extra columns metadata.<key> to keep them`,
      `${f}:2: timeout_seconds: must be a number of seconds, got 'abc'`,
      `${f}:4: expected_tools: is not a valid JSON list: Expected ',' or ']' after array element, got '["ok", 3'`,
      `${f}:5: metadata: is not a valid JSON object: Expected property name or '}', got '{nope'`,
      `${f}:6: has 2 cells, the header has 7 columns`,
      `${f}:8: invalid CSV: Quote Not Closed: the parsing is finished with an opening quote at line 8`,
    ]);
  });

  test("declarations: a missing file, an unknown format, a bad option and an unknown default agent are each reported", async () => {
    const { lines } = await problems(
      { "ok.jsonl": '{"name": "a", "inputs": "q", "expected_output": "x"}\n', "data.txt": "" },
      `${AGENTS}, datasets: ["./missing.jsonl", "./data.txt", dataset("./ok.jsonl", { scoring: "fuzzy" as never }), dataset("./ok.jsonl", { agent: "ghost" }), 42 as never]`,
    );
    assert.equal(lines.length, 5);
    assert.match(lines[0]!, /^datasets\[0\]: dataset file not found: .*missing\.jsonl$/);
    assert.match(lines[1]!, /^datasets\[1\]: cannot tell the format of .*data\.txt from its extension: name it \.jsonl, \.json, \.yaml, \.yml or \.csv, or set format$/);
    assert.equal(lines[2], "datasets[2].scoring: must be a scoring method (exact, contains, regex, json, numeric, judge) or { method, ignoreCase?, tolerance? }, got 'fuzzy'");
    assert.equal(lines[3], "datasets[3]: agent 'ghost' is not one of the suite's agents or teams ('scripted', 'crew')");
    assert.equal(lines[4], 'datasets[4]: must be a file path, or dataset("cases.jsonl", { ... }), got 42');
  });

  test("with several agents and no default, a row must name one; agents need ids", async () => {
    const { dir, lines } = await problems({ "c.jsonl": '{"name": "a", "inputs": "q", "expected_output": "x"}\n' }, `${AGENTS}, datasets: ["./c.jsonl"]`);
    assert.deepEqual(lines, [`${dir}/c.jsonl:1: agent: is required: name one of the suite's agents or teams ('scripted', 'crew'), or set agent on the dataset`]);
    const noId = await problems({ "c.jsonl": '{"name": "a", "inputs": "q", "expected_output": "x"}\n' }, `agents: [{ run: async () => ({}) }], datasets: ["./c.jsonl"]`);
    assert.equal(noId.lines[0], "agents[0] has no id: give it one, or declare agents as an object { id: agent }");
  });

  test("rows and code cases share one namespace of names and ids; an empty dataset leaves the suite with no cases", async () => {
    const { dir, lines } = await problems(
      { "c.jsonl": '{"name": "coded", "inputs": "q", "expected_output": "x"}\n{"name": "b", "id": "k1", "inputs": "q", "expected_output": "x"}\n' },
      `agents: [scriptedAgent], cases: [new Case({ name: "coded", id: "k1", agent: scriptedAgent, input: "q", expectedOutput: "x" })], datasets: ["./c.jsonl"]`,
    );
    assert.match(lines[0]!, new RegExp(`^${dir}/c\\.jsonl:1: name: duplicate case name 'coded' \\(first at case 0 of suite-\\d+\\.mts\\)`));
    assert.match(lines[1]!, new RegExp(`^${dir}/c\\.jsonl:2: id: duplicate case id 'k1' \\(first at case 0 of suite-\\d+\\.mts\\)$`));
    const empty = await problems({ "e.jsonl": "\n\n" }, `agents: [scriptedAgent], datasets: ["./e.jsonl"]`);
    assert.deepEqual(empty.lines, ["the default export (defineSuite) holds no cases: its datasets have no rows"]);
    assert.equal(empty.err.code, ErrorCode.SuiteInvalid);
  });

  test("eval sets naming no case are reported: in the suite by set and position, in a file by line", async () => {
    const rows = '{"name": "a", "id": "row-a", "inputs": "q", "expected_output": "x"}\n';
    const inline = await problems({ "c.jsonl": rows }, `agents: [scriptedAgent], datasets: ["./c.jsonl"], evalSets: { smoke: ["a", "row-a", "nope"] }`);
    assert.deepEqual(inline.lines, ["evalSets.smoke[2]: 'nope' is not a case name or id in the suite"]);
    const file = await problems({ "c.jsonl": rows, "sets.yaml": "smoke:\n  - a\n  - ghost\nnightly:\n  description: all\n  cases: [row-a, ghost2]\n" }, `agents: [scriptedAgent], datasets: ["./c.jsonl"], evalSets: "./sets.yaml"`);
    assert.deepEqual(file.lines, [`${file.dir}/sets.yaml:3: smoke[1]: 'ghost' is not a case name or id in the suite`, `${file.dir}/sets.yaml:6: nightly[1]: 'ghost2' is not a case name or id in the suite`]);
  });

  test("problems of several files are reported together, file by file", async () => {
    const { dir, lines } = await problems(
      { "a.jsonl": '{"name": "a", "inputs": 1, "expected_output": "x"}\n', "b.csv": "name,inputs,expected_output,judge_threshold\nb,q,x,high\n" },
      `agents: [scriptedAgent], datasets: ["./a.jsonl", "./b.csv"], passThreshold: 2`,
    );
    assert.deepEqual(lines, [
      "passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got 2",
      `${dir}/a.jsonl:1: inputs: must be a string or a list of {role, content} messages, got 1`,
      `${dir}/b.csv:2: judge_threshold: must be a number, got 'high'`,
    ]);
  });
});
