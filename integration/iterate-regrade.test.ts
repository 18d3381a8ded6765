// `evalfleet regrade` with real processes: a recorded run graded again with a changed criteria
// string gives the new verdicts with zero agent calls (the suite counts them), on the pool of
// worker threads and in this thread; cases without a stored output are listed and skipped with
// the reason; the regrade is recorded as a new run linked to its source.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";

const suite = fixture("iterate-suite.ts");
const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : []);
type Report = { cases: Array<{ name: string; passed: boolean; judge_passed: boolean | null; judge_reason: string | null; reliability_passed: boolean | null }> };

describe("regrade (real processes)", () => {
  test("changed criteria: new verdicts from the stored outputs, zero agent calls, on the pool and inline; skipped cases say why; recorded as a new run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-regrade-"));
    const db = `sqlite:${join(dir, "results.db")}`;
    const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_TEST_FAIL: "beta", EVALFLEET_TEST_ERROR: "delta" };
    const first = await exitOf(evalfleet(["run", suite, "--db", db, "--run-id", "graded-once", "--json-output", join(dir, "first.json")], env), "the first run", 60_000);
    assert.equal(first.code, 1, outputOf(first));
    assert.equal(lines(join(dir, "agent-calls.log")).length, 5, "the first run called each agent once");
    const judgedFirst = lines(join(dir, "judge-calls.log")).length;
    const before = readJson<Report>(join(dir, "first.json"));
    assert.deepEqual(before.cases.map((c) => [c.name, c.passed]), [["alpha", true], ["beta", false], ["gamma", true], ["delta", false], ["team_case", true]]);

    // The criteria now ask for "gamma": only gamma's stored output has it. Nothing else may change.
    const regrade = await exitOf(evalfleet(["regrade", "graded-once", "--db", db, "--json-output", join(dir, "regrade.json"), "--junit", join(dir, "regrade.xml")], { EVALFLEET_TEST_DIR: dir, EVALFLEET_TEST_WORD: "gamma" }), "the regrade", 60_000);
    assert.equal(regrade.code, 1, outputOf(regrade));
    assert.equal(lines(join(dir, "agent-calls.log")).length, 5, "zero agent calls during the regrade");
    assert.equal(lines(join(dir, "judge-calls.log")).length - judgedFirst, 4, "the judge ran once per regraded case");
    assert.match(regrade.stdout, /^regrade: 4 of 5 selected cases of run graded-once /m);
    assert.match(regrade.stdout, /^regrade: skipped delta: its agent gave no output to grade \(agent: Error: scripted failure of delta\)$/m);
    const after = readJson<Report>(join(dir, "regrade.json"));
    assert.deepEqual(
      after.cases.map((c) => [c.name, c.judge_passed, c.judge_reason, c.reliability_passed, c.passed]),
      [
        ["alpha", false, "lacks gamma", null, false],
        ["beta", false, "lacks gamma", null, false],
        ["gamma", true, "contains gamma", true, true],
        ["team_case", false, "lacks gamma", true, false],
      ],
    );
    assert.match(readFileSync(join(dir, "regrade.xml"), "utf8"), /<testcase [^>]*name="gamma"/);

    const store = await ResultsStore.open(db);
    const runs = await store.listRuns();
    const regraded = runs.find((r) => r.regradedFrom === "graded-once");
    assert.ok(regraded, "recorded as a new run linked to its source");
    assert.deepEqual([regraded.status, regraded.total, regraded.passed, regraded.suitePath], ["failed", 4, 1, suite]);
    assert.equal((await store.findRun("graded-once")).suitePath, suite, "the suite path is recorded absolute");
    assert.equal((await store.transcripts(regraded.id)).size, 4, "the regraded run keeps the outputs it graded");
    await store.close();

    // In this thread, narrowed with --name, the suite given explicitly: the same verdict, still no agent call.
    const inline = await exitOf(evalfleet(["regrade", "graded-once", suite, "--db", db, "--threads", "0", "--name", "gamma", "--json-output", join(dir, "inline.json")], { EVALFLEET_TEST_DIR: dir, EVALFLEET_TEST_WORD: "gamma" }), "the inline regrade", 60_000);
    assert.equal(inline.code, 0, outputOf(inline));
    assert.deepEqual(readJson<Report>(join(dir, "inline.json")).cases.map((c) => [c.name, c.passed]), [["gamma", true]]);
    assert.equal(lines(join(dir, "agent-calls.log")).length, 5, "zero agent calls");

    // A run recorded without transcripts has nothing to regrade: exit 2, saying why.
    await exitOf(evalfleet(["run", suite, "--db", db, "--run-id", "no-outputs", "--max-transcript-kb", "0"], { EVALFLEET_TEST_DIR: dir }), "a run without transcripts", 60_000);
    const none = await exitOf(evalfleet(["regrade", "no-outputs", "--db", db], { EVALFLEET_TEST_DIR: dir }), "a regrade of nothing", 60_000);
    assert.equal(none.code, 2, outputOf(none));
    assert.match(none.stdout, /regrade: skipped alpha: no output stored for it in run no-outputs/);
    const missing = await exitOf(evalfleet(["regrade", "nope", "--db", db]), "a regrade of an unknown run", 30_000);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: no run 'nope' in /m);
  });
});
