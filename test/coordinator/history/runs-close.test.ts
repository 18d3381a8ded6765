// Runs left `running` in the results store (their process died, or could not record the end):
// the heartbeat a recording writes, `evalfleet runs close RUN_ID` (refused for a run that looks
// alive unless --force), the automatic close as `abandoned` after RUN_ABANDONED_SECONDS when the
// store is next opened (a history command, a recorded run's start), and a resumed run's start.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../../coordinator/cli/program.ts";
import { ResultsStore } from "../../../coordinator/history/store/store.ts";
import type { RunStart } from "../../../coordinator/history/store/run-record.ts";
import { caseRow } from "../../../coordinator/history/store/case-row.ts";
import { RunRecorder } from "../../../coordinator/history/recording/recorder.ts";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import { RUN_ABANDONED_SECONDS, STORE_HEARTBEAT_SECONDS } from "../../../coordinator/history/store/run-heartbeat.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { fixture } from "../../support/paths.ts";

const ago = (seconds: number): string => new Date(Date.now() - seconds * 1000).toISOString();

async function run(args: string[]) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(args, { stdout, stderr, handleSignals: false });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A run left `running`: started `startedAgo` seconds ago, its last heartbeat `silentFor` seconds ago, `recorded` of its 3 cases recorded (the first passed). */
async function leftRunning(store: ResultsStore, id: string, startedAgo: number, silentFor: number, recorded = 2): Promise<RunStart> {
  const start: RunStart = {
    id,
    kind: "suite",
    suiteName: "nightly",
    suiteFingerprint: null,
    suitePath: null,
    selection: { cases: ["a", "b", "c"] },
    config: { mode: "distributed" },
    judgeModel: null,
    timeoutSeconds: 60,
    startedAt: ago(startedAgo),
    gitCommit: null,
    gitBranch: null,
    host: "ci-7/4242",
  };
  await store.beginRun(start);
  const results = ["a", "b", "c"].slice(0, recorded).map((name, index) => {
    const r = new CaseResult({ name, index, agentId: "x", sessionId: `eval-${name}-00000000`, durationSeconds: 1, attempts: 1, worker: "w/1" });
    r.judgePassed = index === 0;
    return r;
  });
  await store.writeCases(results.map((r) => caseRow(id, r, start.startedAt)));
  await store.heartbeat(id, ago(silentFor));
  return start;
}

describe("runs left running in the results store", () => {
  test("runs close: closes a dead run as abandoned at its last heartbeat, refuses a live one without --force, says when there is nothing to close", async () => {
    const db = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-runs-close-")), "h.db")}`;
    const store = await ResultsStore.open(db);
    await leftRunning(store, "dead-1", 300, 120);
    await leftRunning(store, "alive-1", 300, 5);
    const lastSeen = (await store.findRun("dead-1")).heartbeatAt!;
    await store.close();

    const dead = await run(["runs", "close", "dead-1", "--db", db]);
    assert.equal(dead.code, 0, dead.stderr);
    assert.equal(dead.stdout, `run dead-1 closed as abandoned: last seen alive at ${lastSeen} (2 of 3 case results recorded, 1 passed)\n`);
    const again = await run(["runs", "close", "dead-1", "--db", db]);
    assert.deepEqual([again.code, again.stdout], [0, "run dead-1 is already abandoned: nothing to close\n"]);

    const alive = await run(["runs", "close", "alive-1", "--db", db]);
    assert.equal(alive.code, 2);
    assert.match(alive.stderr, new RegExp(`^error: run alive-1 looks alive: ci-7/4242 wrote its heartbeat \\d+s ago \\(every ${STORE_HEARTBEAT_SECONDS}s while it runs\\); pass --force to close it anyway\\n$`));
    const forced = await run(["runs", "close", "alive-1", "--db", db, "--force", "--json"]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(JSON.parse(forced.stdout).status, "abandoned");

    const check = await ResultsStore.open(db);
    const closed = await check.findRun("dead-1");
    await check.close();
    assert.deepEqual([closed.status, closed.finishedAt, closed.total, closed.passed, closed.failed, closed.skipped], ["abandoned", lastSeen, 3, 1, 2, 0]);
    assert.ok(Math.abs(closed.durationSeconds! - 180) < 1, `from its start to its last heartbeat: ${closed.durationSeconds}`);
    const missing = await run(["runs", "close", "nope", "--db", db]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no run 'nope'/);
  });

  test(`a run silent for more than ${RUN_ABANDONED_SECONDS}s is closed as abandoned when the store is next opened: by a history command, by a recorded run`, async () => {
    const db = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-runs-auto-")), "h.db")}`;
    const store = await ResultsStore.open(db);
    await leftRunning(store, "stale-1", RUN_ABANDONED_SECONDS + 600, RUN_ABANDONED_SECONDS + 5);
    await leftRunning(store, "quiet-1", RUN_ABANDONED_SECONDS + 600, RUN_ABANDONED_SECONDS - 60);
    await store.close();

    const runs = await run(["runs", "--db", db, "--json"]);
    assert.equal(runs.code, 0, runs.stderr);
    const byId = new Map((JSON.parse(runs.stdout) as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]));
    assert.deepEqual([byId.get("stale-1"), byId.get("quiet-1")], ["abandoned", "running"], "only the run silent for longer than the bound");

    // A recorded run's start closes them too.
    const again = await ResultsStore.open(db);
    await leftRunning(again, "stale-2", RUN_ABANDONED_SECONDS * 3, RUN_ABANDONED_SECONDS * 2);
    await again.close();
    const recorded = await run(["run", fixture("basic-suite.ts"), "--threads", "0", "--db", db, "--name", "alpha"]);
    assert.match(recorded.stdout, /results store: run .* recorded/);
    const after = await ResultsStore.open(db);
    const stale = await after.findRun("stale-2");
    await after.close();
    assert.equal(stale.status, "abandoned");
  });

  test("a recording's heartbeat, and the end of a resumed run recording the whole run's start", async () => {
    const store = await ResultsStore.open(`sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-heartbeat-")), "h.db")}`);
    try {
      const start = await leftRunning(store, "resumed-1", 3600, 3000, 0);
      // The resume reopens it: its heartbeat is fresh again.
      const recorder = await RunRecorder.begin(store, { ...start, startedAt: new Date().toISOString() }, { onWarning: () => undefined, resume: true, flushTimeoutSeconds: 10 });
      const reopened = await store.findRun("resumed-1");
      assert.ok(Date.now() - Date.parse(reopened.heartbeatAt!) < 5_000, "reopening writes a heartbeat");
      // The suite's start (the first coordinator's) is the run's; a later one never moves it.
      await recorder.finish(new SuiteResult([], { runId: "resumed-1", startedAt: ago(7200), durationSeconds: 7200 }), "passed");
      const ended = await store.findRun("resumed-1");
      assert.deepEqual([ended.status, ended.durationSeconds], ["passed", 7200]);
      assert.ok(Math.abs(Date.parse(ended.startedAt) - (Date.now() - 7_200_000)) < 5_000, `the first start: ${ended.startedAt}`);
      await store.finishRun("resumed-1", { finishedAt: new Date().toISOString(), status: "passed", total: 0, passed: 0, failed: 0, skipped: 0, durationSeconds: 1, summary: null, startedAt: new Date().toISOString() });
      assert.equal((await store.findRun("resumed-1")).startedAt, ended.startedAt);
      // A closed run's heartbeat does not reopen it.
      await store.heartbeat("resumed-1");
      assert.equal((await store.findRun("resumed-1")).status, "passed");
    } finally {
      await store.close();
    }
  });
});
