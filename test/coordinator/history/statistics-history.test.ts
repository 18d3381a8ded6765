// The run's statistics (issue 28) through the results store: the summary's new keys (pass_rate_ci,
// confidence, pass_hat_k, case_pass_rate, ...) are stored and read back as written; `show` prints the
// interval, pass@k and pass^k from the stored trials; the HTML report shows them. Real SQLite store,
// cases inline through cli(cases) in this process.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, cli, type Agent } from "../../../index.ts";
import { main } from "../../../coordinator/cli/program.ts";
import { ResultsStore } from "../../../coordinator/history/store/store.ts";
import { renderHtmlReport } from "../../../coordinator/history/html/report.ts";
import { MemoryStream } from "../../support/doubles.ts";

/** Every fourth answer is wrong: 3 of 4 trials pass. */
function flakyAgent(): Agent {
  let calls = 0;
  return { id: "flaky", run: async () => ({ content: calls++ % 4 === 3 ? "wrong" : "right", status: "completed" }) };
}

describe("statistics in the results store", () => {
  test("the summary round-trips; show and the HTML report print the interval and pass^k from the stored trials", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-stats-history-"));
    const db = `sqlite:${join(dir, "r.db")}`;
    const json = join(dir, "report.json");
    const cases = [
      new Case({ name: "flaky", agent: flakyAgent(), input: "q", expectedOutput: "right" }),
      new Case({ name: "steady", agent: { id: "s", run: async () => ({ content: "right", status: "completed" }) }, input: "q", expectedOutput: "right" }),
    ];
    const out = new MemoryStream();
    const code = await cli(cases, { argv: ["--repeat", "4", "--case-pass-rate", "0.75", "--confidence", "0.9", "--db", db, "--json-output", json], stdout: out, stderr: new MemoryStream(), handleSignals: false });
    assert.equal(code, 0, out.text);
    const report = JSON.parse(readFileSync(json, "utf8"));
    assert.equal(report.summary.confidence, 0.9);
    assert.equal(report.summary.case_pass_rate, 0.75);
    assert.equal(report.summary.pass_rate_method, "clustered");

    const store = await ResultsStore.open(db);
    let records;
    let run;
    try {
      run = await store.findRun(report.summary.run_id);
      // Stored verbatim: every key, in its order, with its value.
      assert.deepEqual(Object.keys(run.summary!), Object.keys(report.summary));
      assert.deepEqual(run.summary, report.summary);
      records = await store.caseRecords(run.id);
      assert.deepEqual(records[0]!.report.pass_rate_ci, report.cases[0].pass_rate_ci);
      assert.equal(records[0]!.report.case_pass_rate, 0.75);
    } finally {
      await store.close();
    }

    const stdout = new MemoryStream();
    const shown = await main(["show", run.id, "--db", db], { stdout, stderr: new MemoryStream(), handleSignals: false });
    assert.equal(shown, 0);
    // The line the run printed, recomputed from the stored trials at the stored confidence.
    const line = /^pass rate .*confidence\)$/m.exec(out.text)?.[0];
    assert.ok(line, out.text);
    assert.match(line, /^pass rate 87\.5% \[\d+\.\d%, \d+\.\d%\] \(mean of per-case pass rates, cases as clusters; 90% confidence\)$/);
    assert.ok(stdout.text.includes(line), stdout.text);
    assert.match(stdout.text, /4 runs per case: pass@1 87\.5%, pass@4 100%, pass\^4 50%/);
    assert.match(stdout.text, /^2\/2 passed/m, "the verdicts are the recorded ones (the 0.75 rule)");

    const html = renderHtmlReport({ run, cases: records, history: [run] });
    const [low, high] = report.summary.pass_rate_ci as [number, number];
    const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
    assert.ok(html.includes(`Pass rate, 90% interval (mean of cases&#39; rates)`) || html.includes("Pass rate, 90% interval (mean of cases' rates)"), "the interval card");
    assert.ok(html.includes(`87.5% [${pct(low)}, ${pct(high)}]`), "the interval's value");
    assert.ok(html.includes("pass^4") && html.includes("50.0%"), "pass^k");
  });

  test("an adaptive run's trials spent and saved and its undecided cases: stored, and printed again by show", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-stats-adaptive-"));
    const db = `sqlite:${join(dir, "r.db")}`;
    const json = join(dir, "report.json");
    const sure = new Case({ name: "sure", agent: { id: "s", run: async () => ({ content: "right", status: "completed" }) }, input: "q", expectedOutput: "right" });
    // Trials 4 and 8 fail: 8 of 10 sits on 0.8 at MAX, undecided.
    let calls = 0;
    const edge = new Case({ name: "edge", agent: { id: "e", run: async () => ({ content: [3, 7].includes(calls++) ? "wrong" : "right", status: "completed" }) }, input: "q", expectedOutput: "right" });
    const out = new MemoryStream();
    const code = await cli([sure, edge], { argv: ["--repeat", "3..10", "--case-pass-rate", "0.8", "--concurrency", "1", "--db", db, "--json-output", json], stdout: out, stderr: new MemoryStream(), handleSignals: false });
    assert.equal(code, 0, out.text);
    const report = JSON.parse(readFileSync(json, "utf8"));
    assert.deepEqual(report.summary.adaptive_repeats, { min: 3, max: 10, trials_spent: 16, trials_max: 20, trials_saved: 4, undecided_cases: 1 });
    const line = /^adaptive repeats .*$/m.exec(out.text)?.[0];
    assert.equal(line, "adaptive repeats 3..10: 16 trials run of 20 (4 saved, 20%); 1 case undecided (judged on the point estimate)");
    const stdout = new MemoryStream();
    assert.equal(await main(["show", report.summary.run_id, "--db", db], { stdout, stderr: new MemoryStream(), handleSignals: false }), 0);
    assert.ok(stdout.text.includes(line), stdout.text);
  });
});
