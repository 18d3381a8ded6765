// The per-case pass rule and the report's intervals through the command line (issue 28), in-process
// through cli(cases): --case-pass-rate, Case({ passRate }) and the suite default (precedence case >
// flag > suite > 1), --confidence, the console's interval line, JUnit's properties, bad input (exit 2).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, cli, type Agent } from "../../../index.ts";
import { wilsonInterval } from "../../../shared/stats/wilson.ts";
import { MemoryStream } from "../../support/doubles.ts";

/** An agent whose every fourth answer is wrong: a case run 4 times passes 3 of them (75%). */
function flakyAgent(): Agent {
  let calls = 0;
  return { id: "flaky", run: async () => ({ content: calls++ % 4 === 3 ? "wrong" : "right", status: "completed" }) };
}

async function run(cases: readonly Case[], argv: string[], options: { casePassRate?: number } = {}): Promise<{ code: number; stdout: string; stderr: string; report: any; junit: string }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-cpr-"));
  const json = join(dir, "report.json");
  const junit = join(dir, "junit.xml");
  const code = await cli(cases, { argv: [...argv, "--json-output", json, "--junit", junit], stdout, stderr, handleSignals: false, ...options });
  const read = (p: string): string | null => {
    try {
      return readFileSync(p, "utf8");
    } catch {
      return null; // a usage error writes no report
    }
  };
  const text = read(json);
  return { code, stdout: stdout.text, stderr: stderr.text, report: text ? JSON.parse(text) : null, junit: read(junit) ?? "" };
}

const flaky = (passRate?: number): Case => new Case({ name: "flaky", agent: flakyAgent(), input: "q", expectedOutput: "right", ...(passRate === undefined ? {} : { passRate }) });

describe("the per-case pass rule", () => {
  test("default 1: a case with one failed trial of 4 fails; its pass rate and Wilson interval are reported", async () => {
    const r = await run([flaky()], ["--repeat", "4"]);
    assert.equal(r.code, 1, r.stdout);
    const c = r.report.cases[0];
    assert.equal(c.passed, false);
    assert.equal(c.pass_rate, 0.75);
    assert.equal(c.case_pass_rate, 1);
    assert.deepEqual(c.pass_rate_ci, [...wilsonInterval(3, 4, 0.95)]);
    assert.equal(r.report.summary.case_pass_rate, 1);
    assert.match(r.stdout, /FAIL {2}flaky .*3\/4 runs passed/);
  });

  test("--case-pass-rate 0.75: the same trials pass; the console says what the case needed", async () => {
    const r = await run([flaky()], ["--repeat", "4", "--case-pass-rate", "0.75"]);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.report.cases[0].passed, true);
    assert.equal(r.report.cases[0].case_pass_rate, 0.75);
    assert.equal(r.report.summary.case_pass_rate, 0.75);
    assert.equal(r.report.summary.passed, 1);
    assert.match(r.stdout, /PASS {2}flaky .*3\/4 runs passed \(needs 75%\)/);
  });

  test("precedence: the case's passRate over the flag, the flag over the suite's, the suite's over 1", async () => {
    const caseWins = await run([flaky(0.5)], ["--repeat", "4", "--case-pass-rate", "1"]);
    assert.equal(caseWins.code, 0, "passRate 0.5 beats --case-pass-rate 1");
    assert.equal(caseWins.report.cases[0].case_pass_rate, 0.5);
    const flagWins = await run([flaky()], ["--repeat", "4", "--case-pass-rate", "0.8"], { casePassRate: 0.7 });
    assert.equal(flagWins.code, 1, "--case-pass-rate 0.8 beats the suite's 0.7");
    assert.equal(flagWins.report.cases[0].case_pass_rate, 0.8);
    const suiteWins = await run([flaky()], ["--repeat", "4"], { casePassRate: 0.7 });
    assert.equal(suiteWins.code, 0, "the suite's 0.7 beats the default 1");
    assert.equal(suiteWins.report.summary.case_pass_rate, 0.7);
  });

  test("bad input exits 2 naming the flag and the value; a case's passRate outside 0-1 is refused when built", async () => {
    const rate = await run([flaky()], ["--repeat", "4", "--case-pass-rate", "1.5"]);
    assert.equal(rate.code, 2);
    assert.match(rate.stderr, /--case-pass-rate must be a fraction between 0 and 1 \(0\.95 for 95%\), got '1\.5'/);
    assert.doesNotMatch(rate.stderr, /\n\s+at /, "no stack trace");
    for (const level of ["1", "0", "95"]) {
      const confidence = await run([flaky()], ["--confidence", level]);
      assert.equal(confidence.code, 2, level);
      assert.match(confidence.stderr, new RegExp(`--confidence must be a fraction strictly between 0 and 1 \\(0\\.95 for 95%\\), got '${level}'`));
    }
    assert.throws(() => flaky(1.5), /case 'flaky': passRate must be a fraction between 0 and 1 \(0\.8 for 80%\), got 1\.5/);
  });
});

describe("intervals in the reports", () => {
  const cases = (): Case[] =>
    ["a", "b", "c", "d"].map((name, i) => new Case({ name, agent: { id: "fixed", run: async () => ({ content: i < 3 ? "right" : "wrong", status: "completed" }) }, input: "q", expectedOutput: "right" }));

  test("each case once: Wilson's interval in the JSON, on the console and in JUnit's properties", async () => {
    const r = await run(cases(), []);
    const [low, high] = wilsonInterval(3, 4, 0.95);
    assert.equal(r.report.summary.confidence, 0.95);
    assert.deepEqual(r.report.summary.pass_rate_ci, [low, high]);
    assert.equal(r.report.summary.pass_rate_method, "wilson");
    // Wilson 3 of 4 at 95%: [30.1%, 95.4%].
    assert.match(r.stdout, /pass rate 75\.0% \[30\.1%, 95\.4%\] \(95% confidence\)/);
    assert.match(r.junit, /<property name="confidence" value="0.95"\/>/);
    assert.match(r.junit, new RegExp(`<property name="pass_rate_ci_low" value="${low}"/>`));
    assert.match(r.junit, new RegExp(`<property name="pass_rate_ci_high" value="${high}"/>`));
  });

  test("--confidence 0.9: a narrower interval, said on the console", async () => {
    const r = await run(cases(), ["--confidence", "0.9"]);
    assert.equal(r.report.summary.confidence, 0.9);
    assert.deepEqual(r.report.summary.pass_rate_ci, [...wilsonInterval(3, 4, 0.9)]);
    assert.ok(r.report.summary.pass_rate_ci[0] > wilsonInterval(3, 4, 0.95)[0]);
    assert.match(r.stdout, /pass rate 75\.0% \[\d+\.\d%, \d+\.\d%\] \(90% confidence\)/);
  });

  test("with repeats: the clustered interval, pass^k beside pass@k, and a repeated case's properties in JUnit", async () => {
    const r = await run([flaky(), new Case({ name: "steady", agent: { id: "s", run: async () => ({ content: "right", status: "completed" }) }, input: "q", expectedOutput: "right" })], ["--repeat", "4"]);
    const s = r.report.summary;
    assert.equal(s.pass_rate_method, "clustered");
    assert.equal(s.trial_pass_rate, 0.875);
    // flaky 3/4 -> pass^4 0, pass^2 C(3,2)/C(4,2) = 0.5; steady 1 for every k.
    assert.deepEqual(s.pass_hat_k, { "1": 0.875, "2": 0.75, "3": 0.625, "4": 0.5 });
    assert.match(r.stdout, /4 runs per case: pass@1 87\.5%, pass@4 100%, pass\^4 50%/);
    assert.match(r.stdout, /pass rate 87\.5% \[\d+\.\d%, \d+\.\d%\] \(mean of per-case pass rates, cases as clusters; 95% confidence\)/);
    assert.match(r.junit, /<testcase name="flaky"[^>]*>\s*<properties>\s*<property name="pass_rate" value="0.75"\/>/);
    assert.match(r.junit, /<property name="pass_hat_4" value="0.5"\/>/);
  });
});
