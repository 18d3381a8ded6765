// Re-running from the results store with real processes: `--rerun-failed`, `--rerun-errors` and `--rerun-incomplete`
// select exactly the failed (errors included), errored, and skipped or lost cases of a recorded run, locally and
// across two worker processes on a private nats-server; each case's transcript (messages, tool
// calls, team members) travels from the workers with its result and is stored.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson, type Proc } from "./harness/processes.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";

const suite = fixture("iterate-suite.ts");
const agentCalls = (dir: string): string[] => (existsSync(join(dir, "agent-calls.log")) ? readFileSync(join(dir, "agent-calls.log"), "utf8").split("\n").filter(Boolean).sort() : []);
const caseNames = (path: string): string[] => readJson<{ cases: Array<{ name: string }> }>(path).cases.map((c) => c.name);

describe("re-runs from the store (real processes)", () => {
  const nats = useNatsServer();
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-rerun-"));
  const db = `sqlite:${join(dir, "results.db")}`;
  // beta answers wrongly (a failed check), delta's agent throws (an error).
  const scripted = { EVALFLEET_TEST_FAIL: "beta", EVALFLEET_TEST_ERROR: "delta", EVALFLEET_GIT_BRANCH: "rerun-tests" };
  let workers: Proc[] = [];

  before(() => {
    // Standing workers of the suite: they take every run of it, one after the other.
    workers = [1, 2].map(() => evalfleet(["worker", suite, "--threads", "1", "--concurrency", "2"], { NATS_URL: nats.url, ...scripted }));
  });
  after(async () => {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => exitOf(w, "a worker", 30_000)));
  });

  test("a distributed run stores each case's transcript; --rerun-failed across two workers runs exactly the failed and errored cases; locally too, and --rerun-errors only the errored", async () => {
    const first = evalfleet(["coordinator", "run", suite, "--run-id", "rerun-src", "--db", db, "--json-output", join(dir, "first.json")], { NATS_URL: nats.url, ...scripted });
    const f = await exitOf(first, "the first coordinator", 120_000);
    assert.equal(f.code, 1, outputOf(f));
    assert.deepEqual(caseNames(join(dir, "first.json")), ["alpha", "beta", "gamma", "delta", "team_case"]);

    const store = await ResultsStore.open(db);
    const transcripts = await store.transcripts("rerun-src");
    assert.deepEqual([...transcripts.keys()], [0, 1, 2, 3, 4], "every case's transcript came back from the workers");
    const gamma = transcripts.get(2)!;
    assert.ok(!("unreadable" in gamma));
    assert.deepEqual(gamma.run!.tools, [{ toolName: "lookup", toolArgs: { q: "gamma" }, result: { found: true } }]);
    assert.deepEqual(gamma.run!.messages!.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
    assert.equal(gamma.run!.messages![1]!.toolCalls![0]!.function.name, "lookup");
    const team = transcripts.get(4)!;
    assert.ok(!("unreadable" in team));
    assert.deepEqual(team.run!.memberResponses![0]!.tools, [{ toolName: "multiply", toolArgs: { a: 6, b: 7 }, result: 42 }]);
    const delta = transcripts.get(3)!;
    assert.ok(!("unreadable" in delta));
    assert.equal(delta.run, null, "the agent threw: no output");
    assert.match(delta.error ?? "", /scripted failure of delta/);
    const records = await store.caseRecords("rerun-src");
    assert.ok(records.every((r) => workers.some((w) => r.worker?.startsWith(w.label))), "worker processes ran them");
    await store.close();

    // Across the two workers: only beta and delta run again.
    const runsDir = mkdtempSync(join(dir, "dist-"));
    const again = evalfleet(["coordinator", "run", suite, "--db", db, "--rerun-failed", "rerun-src", "--json-output", join(runsDir, "report.json")], { NATS_URL: nats.url, ...scripted });
    const a = await exitOf(again, "the re-run coordinator", 120_000);
    assert.equal(a.code, 1, outputOf(a));
    assert.match(a.stdout, /^re-run: 2 of the 2 failed cases of run rerun-src /m);
    assert.deepEqual(caseNames(join(runsDir, "report.json")), ["beta", "delta"]);

    // Locally, with the agent calls counted: exactly the failed ones, then the errored one; AND with --tag.
    const local = mkdtempSync(join(dir, "local-"));
    const l = await exitOf(evalfleet(["run", suite, "--db", db, "--rerun-failed", "rerun-src", "--json-output", join(local, "failed.json")], { ...scripted, EVALFLEET_TEST_DIR: local }), "a local re-run", 60_000);
    assert.equal(l.code, 1, outputOf(l));
    assert.deepEqual(caseNames(join(local, "failed.json")), ["beta", "delta"]);
    assert.deepEqual(agentCalls(local), ["beta", "delta"]);
    const e = await exitOf(evalfleet(["run", suite, "--db", db, "--rerun-errors", "rerun-src", "--json-output", join(local, "errors.json")], scripted), "a local errors re-run", 60_000);
    assert.equal(e.code, 1, outputOf(e));
    assert.deepEqual(caseNames(join(local, "errors.json")), ["delta"]);
    const t = await exitOf(evalfleet(["run", suite, "--db", db, "--rerun-failed", "rerun-src", "--tag", "smoke"], scripted), "a re-run with --tag", 60_000);
    assert.equal(t.code, 2, "beta and delta are not tagged smoke: nothing left");
    assert.match(t.stderr, /none left after the re-run and subset filters/);
    // Fixed: nothing failed in the newest run of this branch, nothing to re-run.
    const fixed = await exitOf(evalfleet(["run", suite, "--db", db, "--rerun-failed", "rerun-src"], { EVALFLEET_GIT_BRANCH: "rerun-tests" }), "the fixed re-run", 60_000);
    assert.equal(fixed.code, 0, outputOf(fixed));
    const last = await exitOf(evalfleet(["run", suite, "--db", db, "--last-failed"], { EVALFLEET_GIT_BRANCH: "rerun-tests" }), "--last-failed", 60_000);
    assert.equal(last.code, 0, outputOf(last));
    assert.match(last.stdout, /^nothing to re-run: run \S+ has no failed cases$/m);
  });

  test("--rerun-incomplete runs the skipped and the lost cases of a crashed run, and lists the ones the suite no longer has", async () => {
    const local = mkdtempSync(join(dir, "incomplete-"));
    const crashDb = `sqlite:${join(local, "results.db")}`;
    // A run that crashed: it selected six cases (one since removed from the suite), recorded alpha
    // (passed) and beta (skipped by the cancel), then its process died before the rest.
    const store = await ResultsStore.open(crashDb);
    await store.beginRun({ id: "crashed", kind: "suite", suiteName: "iterate", suiteFingerprint: null, suitePath: suite, selection: { cases: ["alpha", "beta", "gamma", "delta", "team_case", "removed"] }, config: { mode: "threads" }, judgeModel: null, timeoutSeconds: 120, startedAt: "2026-01-01T00:00:00.000Z", gitCommit: null, gitBranch: null, host: null });
    const { CaseResult } = await import("../shared/result/result.ts");
    const { caseRow } = await import("../coordinator/history/store/case-row.ts");
    const passed = new CaseResult({ name: "alpha", index: 0, judgePassed: true });
    const skipped = new CaseResult({ name: "beta", index: 1, skipped: true, error: "skipped: suite cancelled before the case started" });
    await store.writeCases([caseRow("crashed", passed, "2026-01-01T00:00:01.000Z"), caseRow("crashed", skipped, "2026-01-01T00:00:01.000Z")]);
    await store.close();
    const r = await exitOf(evalfleet(["run", suite, "--db", crashDb, "--rerun-incomplete", "crashed", "--json-output", join(local, "r.json")], { EVALFLEET_TEST_DIR: local }), "--rerun-incomplete", 60_000);
    assert.equal(r.code, 0, outputOf(r));
    assert.match(r.stdout, /^re-run: 4 of the 5 skipped or lost cases of run crashed /m);
    assert.match(r.stdout, /^re-run: left out, not in the suite any more: removed$/m);
    assert.deepEqual(caseNames(join(local, "r.json")), ["beta", "gamma", "delta", "team_case"]);
    assert.deepEqual(agentCalls(local), ["beta", "delta", "gamma", "team_case"]);
  });
});
