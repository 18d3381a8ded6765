// The command line of data-driven suites (issue 8), in-process: --set with --tag and --name,
// --pass-threshold exit codes, --repeat in the JSON report, invalid datasets, bad flag values.
// Real worker threads and real processes are in integration/dataset-process.test.ts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, cli } from "../../../index.ts";
import { main } from "../../../coordinator/cli/program.ts";
import { MemoryStream, StubAgent } from "../../support/doubles.ts";
import { ROOT } from "../../support/paths.ts";

const root = ROOT;
const SUITE = join(root, "test", "fixtures", "dataset-suite.ts");
const INVALID = join(root, "test", "fixtures", "invalid-dataset-suite.ts");

function io() {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  return { stdout, stderr, handleSignals: false };
}

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string; report: any }> {
  const o = io();
  const path = join(mkdtempSync(join(tmpdir(), "evalfleet-dscli-")), "report.json");
  const code = await main([...args, "--json-output", path], o);
  let report: unknown = null;
  try {
    report = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    // no report (a usage error)
  }
  return { code, stdout: o.stdout.text, stderr: o.stderr.text, report };
}

describe("evalfleet run on a data-driven suite", () => {
  test("every row runs; failed checks say why on the console and in the report; exit 1 without a threshold", async () => {
    const r = await run(["run", SUITE, "--threads", "0"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.report.summary.total, 12);
    assert.equal(r.report.summary.passed, 9);
    assert.equal(r.report.summary.pass_rate, 0.75);
    assert.equal(r.report.summary.pass_threshold, null);
    assert.match(r.stdout, /FAIL {2}wrong_capital .*\n {2}expected_output \(exact\): the answer "Lyon" is not exactly the expected "Paris"/);
    assert.match(r.stdout, /missing_source .*\n {2}expected_knowledge_sources: missing knowledge sources: kb-refunds \(retrieved: kb-faq\)/);
    assert.match(r.stdout, /│ Case +│ Judge +│ Reliability +│ Scorer +│ Expected +│ Status +│ Time +│/);
    const byName = new Map(r.report.cases.map((c: { name: string }) => [c.name, c]));
    assert.deepEqual((byName.get("wrong_capital") as any).expectations, { expected_output: { method: "exact", passed: false, reason: 'the answer "Lyon" is not exactly the expected "Paris"' } });
    assert.deepEqual((byName.get("csv_contains") as any).tags, ["smoke"]);
    assert.deepEqual((byName.get("team_multiplies") as any).team_id, "crew");
    assert.deepEqual((byName.get("team_multiplies") as any).tools_called, ["delegate_task_to_member", "multiply"]);
    assert.deepEqual(
      r.report.cases.map((c: { index: number }) => c.index),
      Array.from({ length: 12 }, (_, i) => i),
    );
  });

  test("JUnit: a failed data-driven check is a failure whose message gives the check and its reason", async () => {
    const junit = join(mkdtempSync(join(tmpdir(), "evalfleet-dscli-")), "junit.xml");
    const r = await run(["run", SUITE, "--threads", "0", "--name", "wrong_capital", "--name", "capital_exact", "--junit", junit]);
    assert.equal(r.code, 1);
    const xml = readFileSync(junit, "utf8");
    assert.match(xml, /<testcase name="wrong_capital"[^>]*>\s*<failure message="expected_output \(exact\) failed: the answer &quot;Lyon&quot; is not exactly the expected &quot;Paris&quot;" type="check">/);
    assert.match(xml, /<testsuite name="support-data" tests="2" failures="1" errors="0" skipped="0"/);
  });

  test("--pass-threshold: 0 when the pass rate meets it despite failures, 1 below it; the summary says so", async () => {
    const met = await run(["run", SUITE, "--threads", "0", "--pass-threshold", "0.75"]);
    assert.equal(met.code, 0, met.stdout);
    assert.equal(met.report.summary.pass_threshold, 0.75);
    assert.equal(met.report.summary.status, "FAIL", "status keeps Agno's meaning: not every case passed");
    assert.match(met.stdout, /pass rate 75%, threshold 75%: met/);
    const missed = await run(["run", SUITE, "--threads", "0", "--pass-threshold", "0.8"]);
    assert.equal(missed.code, 1);
    assert.match(missed.stdout, /pass rate 75%, threshold 80%: not met/);
  });

  test("--set selects an eval set (from the suite's YAML file), combined with --tag and --name", async () => {
    const smoke = await run(["run", SUITE, "--threads", "0", "--set", "smoke"]);
    assert.equal(smoke.code, 0, smoke.stdout);
    assert.deepEqual(
      smoke.report.cases.map((c: { name: string }) => c.name),
      ["capital_exact", "multi_turn_contains", "csv_contains"],
    );
    const tagged = await run(["run", SUITE, "--threads", "0", "--set", "tools", "--tag", "csv"]);
    assert.deepEqual(
      tagged.report.cases.map((c: { name: string }) => c.name),
      ["csv_tools_missing"],
    );
    assert.equal(tagged.code, 1);
    const named = await run(["run", SUITE, "--threads", "0", "--set", "smoke", "--set", "tools", "--name", "team_multiplies", "--name", "capital_exact"]);
    assert.deepEqual(
      named.report.cases.map((c: { name: string }) => c.name),
      ["capital_exact", "team_multiplies"],
    );
    const none = await run(["run", SUITE, "--threads", "0", "--set", "smoke", "--tag", "tools"]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^no cases selected \(name=None, tag='tools', set='smoke'\)\n {2}available: capital_exact, multi_turn_contains, /);
  });

  test("the example data suite passes, in full and as its smoke set repeated", async () => {
    const example = join(root, "examples", "data-suite.ts");
    const full = await run(["run", example, "--threads", "0"]);
    assert.equal(full.code, 0, full.stdout + full.stderr);
    assert.equal(full.report.summary.total, 6);
    const smoke = await run(["run", example, "--threads", "0", "--set", "smoke", "--repeat", "3", "--pass-threshold", "0.9"]);
    assert.equal(smoke.code, 0, smoke.stdout + smoke.stderr);
    assert.deepEqual(
      smoke.report.cases.map((c: { name: string; pass_rate: number }) => [c.name, c.pass_rate]),
      [
        ["refund_window", 1],
        ["pro_price", 1],
        ["product", 1],
      ],
    );
  });

  test("list --set lists the set's cases and runs nothing", async () => {
    const o = io();
    const code = await main(["list", SUITE, "--set", "tools"], o);
    assert.equal(code, 0);
    assert.match(o.stdout.text, /uses_factorial +│ scripted/);
    assert.match(o.stdout.text, /team_multiplies +│ crew/);
    assert.match(o.stdout.text, /3 cases\n$/);
  });

  test("--repeat 2: one entry per case with its runs, each case's pass rate and pass@k, and the summary's", async () => {
    const r = await run(["run", SUITE, "--threads", "0", "--repeat", "2", "--set", "smoke"]);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.report.cases.length, 3);
    for (const c of r.report.cases) {
      assert.equal(c.repeats.length, 2);
      assert.deepEqual(
        c.repeats.map((x: { repeat: number }) => x.repeat),
        [1, 2],
      );
      assert.notEqual(c.repeats[0].session_id, c.repeats[1].session_id);
      assert.equal(c.pass_rate, 1);
      assert.deepEqual(c.pass_at_k, { "1": 1, "2": 1 });
    }
    assert.equal(r.report.summary.repeat, 2);
    assert.deepEqual(r.report.summary.pass_at_k, { "1": 1, "2": 1 });
    assert.match(r.stdout, /2\/2 runs passed/);
    assert.match(r.stdout, /2 runs per case: pass@1 100%, pass@2 100%/);
  });

  test("usage errors exit 2 with one line: an unknown set, a threshold outside 0-1, a repeat of 0", async () => {
    const unknown = await run(["run", SUITE, "--threads", "0", "--set", "nightly"]);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, "error: unknown eval set 'nightly' (the suite has: smoke, tools)\n");
    const percent = await run(["run", SUITE, "--pass-threshold", "95"]);
    assert.equal(percent.code, 2);
    assert.match(percent.stderr, /--pass-threshold must be a fraction between 0 and 1 \(0\.95 for 95%\), got '95'/);
    const zero = await run(["run", SUITE, "--repeat", "0"]);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--repeat must be a whole number >= 1 or MIN\.\.MAX \(3\.\.20\), got '0'/);
    const many = await run(["run", SUITE, "--threads", "0", "--repeat", "1001"]);
    assert.equal(many.code, 2);
    assert.equal(many.stderr, "error: repeat must be a whole number from 1 to 1000, got 1001\n");
  });

  test("an invalid dataset: every bad row on its own line with file, line and field; exit 2; nothing runs", async () => {
    const o = io();
    const code = await main(["run", INVALID, "--threads", "0"], o);
    assert.equal(code, 2);
    assert.equal(o.stdout.text, "");
    const lines = o.stderr.text.trimEnd().split("\n");
    assert.match(lines[0]!, /^error: .*invalid-dataset-suite\.ts: 3 problems in the suite's data, nothing was run:$/);
    assert.deepEqual(lines.slice(1), [
      "  test/fixtures/data/invalid.jsonl:2: inputs: is required (a prompt, or a list of {role, content} messages)",
      "  test/fixtures/data/invalid.jsonl:3: expected_ouput: unknown field (did you mean expected_output?); put extra data under metadata",
      "  test/fixtures/data/invalid.jsonl:4: name: duplicate case name 'fine' (first at test/fixtures/data/invalid.jsonl:1): names identify cases in selection and reports",
    ]);
    assert.doesNotMatch(o.stderr.text, /\n\s+at /, "no stack trace");
  });
});

describe("cli(cases) scripts", () => {
  test("accept evalSets and passThreshold, and --set, --pass-threshold and --repeat", async () => {
    const agent = new StubAgent();
    const cases = [
      new Case({ name: "good", agent, input: "q", expectedOutput: "stub response" }),
      new Case({ name: "bad", agent, input: "q", expectedOutput: "something else", id: "row-bad" }),
    ];
    const o = io();
    assert.equal(await cli(cases, { argv: [], passThreshold: 0.5, ...o }), 0, o.stdout.text);
    const strict = io();
    assert.equal(await cli(cases, { argv: ["--pass-threshold", "1"], passThreshold: 0.5, ...strict }), 1, "the flag wins over the option");
    const set = io();
    assert.equal(await cli(cases, { argv: ["--set", "flaky", "--repeat", "3"], evalSets: { flaky: ["row-bad"] }, ...set }), 1);
    assert.match(set.stdout.text, /FAIL {2}bad .*0\/3 runs passed/);
    assert.equal(agent.runCount, 2 + 2 + 3);
  });
});
