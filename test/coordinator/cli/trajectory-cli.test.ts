// Trajectory checks on the command line, in this process: a malformed matcher in a case or a row
// is a load error (exit 2) naming the case or the file, line and field, before anything runs; a run
// on a worker thread carries the reason and the steps across; `evalfleet regrade` applies new
// trajectory checks to a stored run: a run recorded with tool names only is graded again by a suite
// that adds argument matchers (code and data), the exact order, a forbidden call and a bound, from
// the stored tool calls (name, arguments, result), with no agent run. Real processes:
// integration/iterate-regrade.test.ts.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../../coordinator/cli/program.ts";
import { ResultsStore } from "../../../coordinator/history/store/store.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { ROOT } from "../../support/paths.ts";

const SUITE = join(ROOT, "test", "fixtures", "trajectory", "suite.ts");
const REGRADE_SUITE = join(ROOT, "test", "fixtures", "trajectory", "regrade-suite.ts");
const dir = mkdtempSync(join(tmpdir(), "evalfleet-regrade-trajectory-"));
const previous = process.env.EVALFLEET_TEST_DIR;
process.env.EVALFLEET_TEST_DIR = dir;
after(() => {
  if (previous === undefined) delete process.env.EVALFLEET_TEST_DIR;
  else process.env.EVALFLEET_TEST_DIR = previous;
});

type Entry = { name: string; passed: boolean; reliability_passed: boolean | null; reliability_reason: string | null; trajectory: { order: string; steps: { step: number; tool: string; verdict: string }[]; failures: { kind: string; step: number | null }[] } | null };

async function cli(args: string[], report: string, threads = "0"): Promise<{ code: number; stdout: string; cases: Entry[] }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main([...args, "--threads", threads, "--json-output", report], { stdout, stderr, handleSignals: false });
  const cases = existsSync(report) ? (JSON.parse(readFileSync(report, "utf8")) as { cases: Entry[] }).cases : [];
  return { code, stdout: stdout.text + stderr.text, cases };
}

const agentRuns = (): number => readFileSync(join(dir, "agent-calls.log"), "utf8").split("\n").filter(Boolean).length;

describe("a malformed matcher", () => {
  test("in a case: exit 2, naming the case and the field, nothing run", async () => {
    const r = await cli(["run", join(ROOT, "test", "fixtures", "trajectory", "invalid-matcher-suite.ts")], join(dir, "invalid.json"));
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stdout, /^error: .*invalid-matcher-suite\.ts: .*case 'bad_regex': expectedToolCalls\.0\.args\.city\.\$regex is not a valid regex \(Unterminated group\), got '\('/m);
    assert.equal(r.cases.length, 0, "no report: nothing ran");
  });

  test("in a dataset row: exit 2, naming the file, the line and the field, nothing run", async () => {
    const r = await cli(["run", join(ROOT, "test", "fixtures", "trajectory", "invalid-rows-suite.ts")], join(dir, "invalid-rows.json"));
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stdout, /1 problem in the suite's data, nothing was run:\n {2}.*invalid-rows\.jsonl:2: expected_tools\[0\]\.times: must be a whole number >= 0, got -1/);
    assert.equal(r.cases.length, 0);
  });
});

describe("regrade with new trajectory checks", () => {
  test("the stored tool calls are graded by the new matchers, order and bounds; no agent runs", async () => {
    const db = `sqlite:${join(dir, "results.db")}`;
    // On a worker thread: the reason and the steps cross to the main thread with the result.
    const first = await cli(["run", SUITE, "--db", db, "--run-id", "names-only"], join(dir, "first.json"), "1");
    assert.equal(first.code, 0, first.stdout);
    assert.deepEqual(first.cases.map((c) => [c.name, c.passed, c.reliability_reason]), [
      ["paris_trip", true, "the expected call matched (3 tool calls)"],
      ["oslo_trip", true, "the expected call matched (3 tool calls)"],
      ["rome_trip", true, "the expected call matched (3 tool calls)"],
    ]);
    assert.deepEqual(first.cases[0]!.trajectory!.steps.map((s) => [s.step, s.tool, s.verdict]), [[1, "search", "other"], [2, "get_weather", "matched"], [3, "book", "other"]]);
    assert.equal(agentRuns(), 3);

    const regrade = await cli(["regrade", "names-only", REGRADE_SUITE, "--db", db], join(dir, "regrade.json"));
    assert.equal(regrade.code, 1, regrade.stdout);
    assert.equal(agentRuns(), 3, "no agent ran: the stored calls were graded");
    const byName = new Map(regrade.cases.map((c) => [c.name, c]));
    const paris = byName.get("paris_trip")!;
    assert.equal(paris.reliability_passed, false);
    assert.equal(paris.reliability_reason, 'expected get_weather(city="London"), got get_weather(city="Paris", ...) at step 2');
    assert.deepEqual(paris.trajectory!.steps.map((s) => [s.step, s.tool, s.verdict]), [[1, "search", "other"], [2, "get_weather", "failed"], [3, "book", "other"]]);
    const oslo = byName.get("oslo_trip")!;
    assert.equal(oslo.passed, true, "a RegExp argument and the stored result, exactly in order, nothing forbidden");
    assert.equal(oslo.reliability_reason, "all 3 expected calls matched, exactly and in order; no forbidden call (3 tool calls)");
    const rome = byName.get("rome_trip")!;
    assert.equal(rome.reliability_reason, "3 tool calls, at most 2 allowed (the first one over at step 3)", "the row's $regex matched, its bound did not");
    assert.deepEqual(rome.trajectory!.failures.map((f) => [f.kind, f.step]), [["max_tool_calls", 3]]);
    // The console says why, pointing at the step, without -v.
    assert.match(regrade.stdout, /FAIL {2}paris_trip .*\n {2}reliability: expected get_weather\(city="London"\), got get_weather\(city="Paris", \.\.\.\) at step 2/);
    assert.match(regrade.stdout, /^ {2}paris_trip: reliability: expected get_weather\(city="London"\)/m);

    // The regraded run is recorded with its reasons and steps (the store keeps the case's JSON entry).
    const store = await ResultsStore.open(db);
    try {
      const regraded = (await store.listRuns()).find((r) => r.regradedFrom === "names-only")!;
      const records = await store.caseRecords(regraded.id);
      const recorded = records.find((r) => r.name === "paris_trip")!;
      assert.equal(recorded.report.reliability_reason, paris.reliability_reason);
      assert.deepEqual(recorded.report.trajectory, paris.trajectory);
      // `show` gives the recorded reason too.
      const stdout = new MemoryStream();
      const code = await main(["show", regraded.id, "--db", db], { stdout, stderr: new MemoryStream(), handleSignals: false });
      assert.equal(code, 0, stdout.text);
      assert.match(stdout.text, /^ {2}paris_trip: reliability: expected get_weather\(city="London"\), got get_weather\(city="Paris", \.\.\.\) at step 2$/m);
    } finally {
      await store.close();
    }
  });
});
