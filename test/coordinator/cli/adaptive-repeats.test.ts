// Adaptive repeats through the command line and the library (issue 28), in-process through
// cli(cases) and runCases: --repeat MIN..MAX with --case-pass-rate, the report's per-case
// `decided`/`adaptive_stop` and `summary.adaptive_repeats`, the console line, a budget bounding the
// extra trials, and bad input (exit 2 naming the flag and the value).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Case, cli, runCases, type Agent } from "../../../index.ts";
import { MemoryStream } from "../../support/doubles.ts";

/** An agent that answers `right` when `passes(call)`; every call reports 100 tokens. */
function agent(passes: (call: number) => boolean): Agent {
  let calls = 0;
  return { id: "a", run: async () => ({ content: passes(calls++) ? "right" : "wrong", status: "completed", metrics: { inputTokens: 90, outputTokens: 10 } }) };
}
const kase = (name: string, passes: (call: number) => boolean): Case => new Case({ name, agent: agent(passes), input: "q", expectedOutput: "right" });

async function run(cases: readonly Case[], argv: string[]): Promise<{ code: number; stdout: string; stderr: string; report: any; junit: string }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const json = join(mkdtempSync(join(tmpdir(), "evalfleet-adaptive-")), "report.json");
  const junit = join(dirname(json), "junit.xml");
  const code = await cli(cases, { argv: [...argv, "--json-output", json, "--junit", junit], stdout, stderr, handleSignals: false });
  let report: any = null;
  try {
    report = JSON.parse(readFileSync(json, "utf8"));
  } catch {
    // a usage error writes no report
  }
  let xml = "";
  try {
    xml = readFileSync(junit, "utf8");
  } catch {
    // no report either
  }
  return { code, stdout: stdout.text, stderr: stderr.text, report, junit: xml };
}

describe("--repeat MIN..MAX", () => {
  test("sure cases stop early and decided, failing ones at MIN; the summary counts trials spent and saved", async () => {
    const r = await run([kase("sure", () => true), kase("never", () => false)], ["--repeat", "3..20", "--case-pass-rate", "0.8"]);
    assert.equal(r.code, 1, r.stdout);
    const [sure, never] = r.report.cases;
    assert.equal(sure.repeats.length, 6);
    assert.equal(sure.passed, true);
    assert.equal(sure.decided, true);
    assert.equal(sure.adaptive_stop, "cleared");
    assert.equal(never.repeats.length, 3);
    assert.equal(never.passed, false);
    assert.deepEqual(r.report.summary.adaptive_repeats, { min: 3, max: 20, trials_spent: 9, trials_max: 40, trials_saved: 31, undecided_cases: 0 });
    assert.equal(r.report.summary.repeat, 3);
    assert.equal(r.report.summary.tokens.total, 900, "every trial's tokens count");
    assert.match(r.stdout, /adaptive repeats 3\.\.20: 9 trials run of 40 \(31 saved, 77\.5%\)/);
    assert.match(r.junit, /<property name="trials_spent" value="9"\/>/);
    assert.match(r.junit, /<property name="trials_saved" value="31"\/>/);
    assert.match(r.junit, /<testcase name="sure"[^>]*>\s*<properties>[\s\S]*?<property name="decided" value="true"\/>\s*<property name="adaptive_stop" value="cleared"\/>/);
  });

  test("a case still around its rule at MAX is judged on its point estimate and marked undecided", async () => {
    // Calls 3 and 7 (trials 4 and 8) fail: 8 of 10 sits on 0.8.
    const r = await run([kase("edge", (c) => c !== 3 && c !== 7)], ["--repeat", "3..10", "--case-pass-rate", "0.8"]);
    const edge = r.report.cases[0];
    assert.equal(edge.repeats.length, 10);
    assert.equal(edge.passed, true);
    assert.equal(edge.decided, false);
    assert.equal(edge.adaptive_stop, "max");
    assert.equal(r.report.summary.adaptive_repeats.undecided_cases, 1);
    assert.match(r.stdout, /1 case undecided/);
  });

  test("--budget-tokens bounds the extra trials: the case stops where the budget would be spent", async () => {
    const r = await run([kase("sure", () => true)], ["--repeat", "3..20", "--case-pass-rate", "0.8", "--budget-tokens", "350"]);
    const sure = r.report.cases[0];
    assert.equal(sure.repeats.length, 3, "MIN always runs; the 4th trial would pass 350 tokens");
    assert.equal(sure.adaptive_stop, "stopped");
    assert.equal(sure.decided, false);
  });

  test("a fixed --repeat and a MIN..MAX with MIN = MAX are not adaptive", async () => {
    for (const value of ["4", "4..4"]) {
      const r = await run([kase("sure", () => true)], ["--repeat", value]);
      assert.equal(r.report.cases[0].repeats.length, 4, value);
      assert.equal(r.report.cases[0].decided, null, value);
      assert.equal(r.report.summary.adaptive_repeats, null, value);
    }
  });

  test("bad values exit 2 naming the flag and the value", async () => {
    for (const [value, message] of [
      ["5..3", /--repeat MIN\.\.MAX needs MAX >= MIN, got '5\.\.3'/],
      ["0..3", /--repeat MIN\.\.MAX needs MIN >= 1, got '0\.\.3'/],
      ["0", /--repeat must be a whole number >= 1 or MIN\.\.MAX \(3\.\.20\), got '0'/],
      ["3..x", /--repeat must be a whole number >= 1 or MIN\.\.MAX \(3\.\.20\), got '3\.\.x'/],
      ["3..2000", /repeat.*from 1 to 1000.*2000/],
    ] as const) {
      const r = await run([kase("sure", () => true)], ["--repeat", value]);
      assert.equal(r.code, 2, `${value}: ${r.stderr}`);
      assert.match(r.stderr, message, value);
      assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    }
  });
});

describe("runCases({ repeat: { min, max } })", () => {
  test("the library runs the same rule", async () => {
    const suite = await runCases([kase("sure", () => true)], { repeat: { min: 3, max: 20 }, casePassRate: 0.8 });
    assert.equal(suite.results[0]!.repeats!.length, 6);
    assert.deepEqual(suite.results[0]!.adaptive, { decided: true, stop: "cleared" });
    assert.equal(suite.adaptiveRepeats!.trialsSpent, 6);
  });

  test("MAX below MIN is a usage error naming both", async () => {
    await assert.rejects(runCases([kase("sure", () => true)], { repeat: { min: 5, max: 3 } }), /repeat \(--repeat MIN\.\.MAX\) needs MAX >= MIN, got 5\.\.3/);
  });
});
