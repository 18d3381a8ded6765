// The results store in distributed mode, with real processes on a private nats-server: the
// coordinator records, the workers never touch the database; a coordinator killed mid-run and
// resumed finishes the same record.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, readJson, waitFor, outputOf } from "./harness/processes.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-dist-store-${what}-`));

describe("results store in distributed mode (real processes)", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;

  before(async () => {
    env = { NATS_URL: nats.url, EVALFLEET_GIT_BRANCH: "main" };
  });

  test("the coordinator records every result; workers run without any database", async () => {
    const dir = tmp("record");
    const db = `sqlite:${join(dir, "results.db")}`;
    const runId = "store-dist-1";
    // If a worker tried to use a store it would have to fail: this one does not exist.
    const workerEnv = { ...env, EVALFLEET_DB: "postgres://nobody:secret@127.0.0.1:1/none" };
    const workers = [1, 2].map(() => evalfleet(["worker", fixture("history-suite.ts"), "--run", runId, "--threads", "1", "--concurrency", "2"], workerEnv));
    const coordinator = evalfleet(["coordinator", "run", fixture("history-suite.ts"), "--run-id", runId, "--db", db, "--json-output", join(dir, "report.json")], env);
    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 1, c.stdout + c.stderr); // `broken` fails
    assert.match(c.stdout, new RegExp(`^results store: run ${runId} recorded in ${db} \\(7 of 7 case results\\)$`, "m"));
    for (const w of workers) assert.equal((await exitOf(w, "a worker")).code, 0);

    const report = readJson(join(dir, "report.json"));
    const store = await ResultsStore.open(db);
    const run = await store.findRun(runId);
    assert.deepEqual([run.status, run.config.mode, run.host], ["failed", "distributed", coordinator.label]);
    assert.deepEqual(run.summary, report.summary);
    const records = await store.caseRecords(runId);
    assert.deepEqual(records.map((r) => r.report), report.cases);
    // Worker processes ran the cases; the tokens came back with the results.
    assert.ok(records.every((r) => workers.some((w) => r.worker?.startsWith(w.label))), records.map((r) => r.worker).join(", "));
    assert.deepEqual(records.map((r) => r.inputTokens), [106, 107, 113, 106, 104, 111, null]);
    await store.close();
  });

  test("a coordinator killed mid-run and resumed with --db finishes the same record", async () => {
    const dir = tmp("resume");
    const db = `sqlite:${join(dir, "results.db")}`;
    const runId = "store-resume-1";
    const faults = fixture("fleet-faults-suite.ts");
    const w = evalfleet(["worker", faults, "--run", runId, "--threads", "1", "--concurrency", "2"], { ...env, EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" });
    const first = evalfleet(["coordinator", "run", faults, "--run-id", runId, "--db", db], { ...env, EVALFLEET_TEST_DIR: dir });
    await waitFor(() => markers(dir, "started").length === 2, "two cases in flight");
    for (const m of markers(dir, "started")) writeFileSync(join(dir, `release.${m.name}`), "");
    await waitFor(() => (first.stdout.match(/^PASS /gm) ?? []).length === 2, () => `two results at the first coordinator: ${first.stdout}`);
    first.child.kill("SIGKILL");
    assert.equal((await exitOf(first, "the killed coordinator")).signal, "SIGKILL");

    const mid = await ResultsStore.open(db);
    assert.equal((await mid.findRun(runId)).status, "running", "the killed coordinator never recorded an end");
    await mid.close();

    const second = evalfleet(["coordinator", "resume", runId, faults, "--db", db, "--json-output", join(dir, "report.json")], { ...env, EVALFLEET_TEST_DIR: dir });
    await waitFor(() => second.stdout.includes(`run id: ${runId}`), () => `the resumed coordinator to start: ${second.stdout}${second.stderr}`);
    writeFileSync(join(dir, "release-all"), "");
    const r = await exitOf(second, "the resumed coordinator", 90_000);
    assert.equal(r.code, 0, outputOf(r));
    assert.equal((await exitOf(w, "the worker")).code, 0);

    const report = readJson(join(dir, "report.json"));
    const store = await ResultsStore.open(db);
    const run = await store.findRun(runId);
    assert.deepEqual([run.status, run.total, run.passed], ["passed", 8, 8]);
    assert.deepEqual((await store.caseRecords(runId)).map((x) => x.report), report.cases);
    assert.equal((await store.listRuns()).length, 1, "one record for the run, reopened, not a second one");
    await store.close();
  });
});
