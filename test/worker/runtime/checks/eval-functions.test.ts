// Named evaluation functions (issue 19; Exulu's eval_functions): a suite registers scorers by name,
// rows (`eval_functions`), code cases (`evalFunctions`) and runs (`runEvalFunctions`, the CLI's
// --eval-function) name them; each is one more check that must pass, besides the case's own.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Case, DatasetError, EvalfleetError, SuiteLoadError, loadSuite, runCases, toJUnitXml, type Agent, type RunOutput } from "../../../../index.ts";
import { ROOT } from "../../../support/paths.ts";

const indexUrl = pathToFileURL(join(ROOT, "index.ts")).href;

/** Answers with the prompt, reversed when it starts with "rev:". */
const echo: Agent = {
  id: "echo",
  async run(input) {
    const text = typeof input === "string" ? input : input.map((m) => m.content).join(" ");
    return { content: text.startsWith("rev:") ? [...text.slice(4)].reverse().join("") : text, status: "completed" };
  },
};

/** Passes when the answer is polite; its reason quotes the answer. */
const polite = {
  calls: [] as { expected: unknown; caseName?: string; input?: unknown }[],
  score(run: RunOutput, expected: unknown, context: { signal: AbortSignal; caseName?: string; input?: unknown }) {
    this.calls.push({ expected, caseName: context.caseName, input: context.input });
    const ok = /please|thanks/i.test(String(run.content));
    return { value: ok ? 1 : 0.2, passed: ok, reason: ok ? null : `not polite: ${String(run.content)}` };
  },
};
const short = (run: RunOutput) => ({ value: String(run.content).length <= 20 ? 1 : 0, passed: String(run.content).length <= 20 });

describe("evaluation functions in a run", () => {
  test("a case's functions and the run's are checks: all must pass, besides the case's own", async () => {
    polite.calls.length = 0;
    const cases = [
      new Case({ name: "both_pass", agent: echo, input: "thanks, bye", expectedOutput: "bye", outputScoring: "contains", evalFunctions: ["polite"] }),
      new Case({ name: "function_fails", agent: echo, input: "go away", expectedOutput: "away", outputScoring: "contains", evalFunctions: ["polite"] }),
      new Case({ name: "run_function_fails", agent: echo, input: "please, this answer is far too long to pass", expectedOutput: "please", outputScoring: "contains" }),
      new Case({ name: "only_functions", agent: echo, input: "please", evalFunctions: ["polite", "short"] }),
    ];
    const suite = await runCases(cases, { evalFunctions: { polite, short }, runEvalFunctions: ["short"] });
    const [bothPass, functionFails, runFails, only] = suite.results;
    assert.equal(bothPass!.passed, true, JSON.stringify(bothPass!.expectations));
    assert.deepEqual(bothPass!.toJSON().expectations, {
      expected_output: { method: "contains", passed: true, reason: bothPass!.expectations!.expectedOutput!.reason },
      eval_functions: [
        { name: "polite", value: 1, passed: true, reason: "passed with 1" },
        { name: "short", value: 1, passed: true, reason: "passed with 1" },
      ],
    });
    assert.equal(functionFails!.passed, false, "the expected output passed, the function did not");
    assert.equal(functionFails!.expectations!.expectedOutput!.passed, true);
    assert.deepEqual(functionFails!.expectations!.evalFunctions![0], { name: "polite", value: 0.2, passed: false, reason: "not polite: go away" });
    assert.equal(runFails!.passed, false);
    assert.deepEqual(
      runFails!.expectations!.evalFunctions!.map((f) => [f.name, f.passed]),
      [["short", false]],
      "the run's function applies to every case",
    );
    assert.equal(only!.passed, true, "functions alone are checks");
    // A function gets the case's expected output (a row's expected_output), its name and input.
    assert.deepEqual(polite.calls[0], { expected: "bye", caseName: "both_pass", input: "thanks, bye" });
    const junit = toJUnitXml(suite, "s");
    assert.match(junit, /eval_function polite failed \(0\.2\): not polite: go away/);
  });

  test("a function that throws or returns no verdict is an error of the case, under its name", async () => {
    const boom = { score: () => Promise.reject(new TypeError("no model")) };
    const nothing = { score: () => null as never };
    const suite = await runCases([new Case({ name: "x", agent: echo, input: "thanks", evalFunctions: ["boom", "nothing", "ok"] })], {
      evalFunctions: { boom, nothing, ok: () => ({ value: 1, passed: true, reason: "fine" }) },
    });
    const r = suite.results[0]!;
    assert.equal(r.passed, false);
    assert.equal(r.error, "eval_function boom: TypeError: no model; eval_function nothing: TypeError: scorer returned null, expected a Score {value, passed, reason?}");
    assert.deepEqual(
      r.expectations!.evalFunctions!.map((f) => f.name),
      ["ok"],
    );
  });

  test("a run naming an unknown function is a usage error listing the registered ones; nothing runs", async () => {
    let ran = false;
    const spy: Agent = { id: "spy", run: async () => ((ran = true), { content: "x" }) };
    await assert.rejects(
      runCases([new Case({ name: "x", agent: spy, input: "hi", criteria: "c" })], { evalFunctions: { polite, short }, runEvalFunctions: ["tone"] }),
      (err: unknown) => err instanceof EvalfleetError && err.code === "USAGE" && err.message === "unknown evaluation function 'tone' (the suite registers: polite, short)",
    );
    assert.equal(ran, false);
    await assert.rejects(runCases([new Case({ name: "x", agent: spy, input: "hi", criteria: "c" })], { runEvalFunctions: ["tone"] }), /the suite registers none: declare them with defineSuite\(\{ evalFunctions: \{ name: scorer \} \}\)/);
  });
});

describe("evaluation functions in a suite", () => {
  function suiteFile(files: Record<string, string>, definition: string): string {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-evalfn-"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const path = join(dir, "suite.mts");
    writeFileSync(
      path,
      `import { Case, dataset, defineSuite } from ${JSON.stringify(indexUrl)};\nconst echo = { id: "echo", run: async (input) => ({ content: typeof input === "string" ? input : input.at(-1).content }) };\nconst polite = (run) => ({ value: /thanks/.test(run.content) ? 1 : 0, passed: /thanks/.test(run.content) });\nexport default defineSuite({ agents: [echo], ${definition} });\n`,
    );
    return path;
  }

  test("rows name them in eval_functions (a CSV column too); the suite registers them", async () => {
    const jsonl = `{"name": "a", "inputs": "thanks!", "expected_output": "thanks", "eval_functions": ["polite"]}\n{"name": "b", "inputs": "no", "expected_output": "no", "eval_functions": null}\n`;
    const csv = `name,inputs,expected_output,eval_functions\nc,thanks a lot,thanks,"polite"\n`;
    const s = await loadSuite(suiteFile({ "rows.jsonl": jsonl, "rows.csv": csv }, `datasets: [dataset("./rows.jsonl", { scoring: "contains" }), dataset("./rows.csv", { scoring: "contains" })], evalFunctions: { polite }`));
    assert.deepEqual(
      s.cases.map((c) => [c.name, c.evalFunctions]),
      [
        ["a", ["polite"]],
        ["b", null],
        ["c", ["polite"]],
      ],
    );
    assert.deepEqual([...s.evalFunctions!.keys()], ["polite"]);
    const result = await runCases(s.cases, { evalFunctions: s.evalFunctions });
    assert.deepEqual(
      result.results.map((r) => [r.name, r.passed, r.expectations?.evalFunctions?.map((f) => f.name) ?? null]),
      [
        ["a", true, ["polite"]],
        ["b", true, null],
        ["c", true, ["polite"]],
      ],
    );
  });

  test("an unknown name in a row or a code case is a load error listing the registered ones; a bad registration too", async () => {
    const jsonl = `{"name": "a", "inputs": "hi", "expected_output": "hi", "eval_functions": ["tone", "polite"]}\n{"name": "b", "inputs": "hi", "eval_functions": ["polite"]}\n`;
    const err = await loadSuite(suiteFile({ "rows.jsonl": jsonl }, `datasets: ["./rows.jsonl"], cases: [new Case({ name: "code", agent: echo, input: "hi", evalFunctions: ["clarity"] })], evalFunctions: { polite, broken: 3 }`)).then(
      () => assert.fail("should not load"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof DatasetError);
    assert.deepEqual(
      [...(err as SuiteLoadError).problems].map((l) => l.replace(/^.*rows\.jsonl/, "rows.jsonl")),
      [
        "evalFunctions.broken must be a scorer (an object with score(run, expected, context)) or a function, got 3",
        "case 'code' (item 0): evalFunctions: unknown evaluation function 'clarity' (the suite registers: polite)",
        "rows.jsonl:1: eval_functions: unknown evaluation function 'tone' (the suite registers: polite)",
      ],
      "a row with only eval_functions has a check",
    );
  });
});
