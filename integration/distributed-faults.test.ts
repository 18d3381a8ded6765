// Distributed mode under faults, with real processes on a private nats-server: a worker killed
// mid-case, a case that kills every worker that runs it, a cancel from another process, the
// coordinator killed and resumed, a worker drained with SIGTERM. The cases of
// test/fixtures/fleet-faults-suite.ts hold until the test releases them, so every "mid-case" is
// a state the test waits for, not a moment it guesses.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { countByName, evalfleet, exitOf, fixture, markers, queuedCaseMessages, readJson, waitFor, type Proc, outputOf } from "./harness/processes.ts";

const FAULTS = fixture("fleet-faults-suite.ts");
const ALL = Array.from({ length: 8 }, (_, i) => `case_${String(i).padStart(2, "0")}`);

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-faults-${what}-`));
const release = (dir: string, name = "all"): void => writeFileSync(join(dir, name === "all" ? "release-all" : `release.${name}`), "");
const startedBy = (dir: string, p: Proc): string[] => markers(dir, "started").filter((m) => m.pid === p.pid).map((m) => m.name).sort();

/** Every selected case exactly once, in declaration order. */
function assertEachOnce(report: { cases: Array<{ name: string; index: number }> }, names: readonly string[] = ALL): void {
  assert.deepEqual(report.cases.map((c) => c.name), names);
  assert.deepEqual(report.cases.map((c) => c.index), names.map((n) => Number(n.slice(5))));
}

describe("distributed mode under faults (real processes)", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;

  before(async () => {
    env = { NATS_URL: nats.url };
  });

  const worker = (dir: string, runId: string, extra: string[] = [], extraEnv: Record<string, string> = {}): Proc =>
    evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "2", ...extra], { ...env, EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1", ...extraEnv });
  const coordinator = (dir: string, runId: string, extra: string[] = [], command: string[] = ["coordinator", "run", FAULTS, "--run-id", runId]): Proc =>
    evalfleet([...command, "--json-output", join(dir, "report.json"), ...extra], { ...env, EVALFLEET_TEST_DIR: dir });

  test("a worker SIGKILLed mid-case: its cases are redelivered and finish on another worker, once each in the report", async () => {
    const dir = tmp("sigkill");
    const runId = "sigkill-1";
    const c = coordinator(dir, runId, ["--ack-wait", "2"]);
    const [victim, survivor] = [worker(dir, runId), worker(dir, runId)];
    await waitFor(() => startedBy(dir, victim).length === 2 && startedBy(dir, survivor).length === 2, "two cases in flight on each worker");
    const lost = startedBy(dir, victim);

    victim.child.kill("SIGKILL");
    assert.equal((await exitOf(victim, "the killed worker")).signal, "SIGKILL");
    release(dir);

    const r = await exitOf(c, "the coordinator");
    assert.equal(r.code, 0, outputOf(r));
    assert.equal((await exitOf(survivor, "the surviving worker")).code, 0);
    const report = readJson(join(dir, "report.json"));
    assertEachOnce(report);
    for (const x of report.cases) {
      assert.equal(x.passed, true, `${x.name}: ${x.error}`);
      assert.equal(x.worker, survivor.label, `${x.name} finished on the surviving worker`);
      assert.equal(x.attempts, lost.includes(x.name) ? 2 : 1, x.name);
    }
    // The killed worker's cases ran twice (once on each worker), the others once; teardowns once each.
    const started = countByName(markers(dir, "started"));
    for (const name of ALL) assert.equal(started.get(name), lost.includes(name) ? 2 : 1, name);
    const teardowns = markers(dir, "teardown");
    assert.deepEqual(teardowns.map((m) => m.name).sort(), ALL);
    assert.ok(teardowns.every((m) => m.pid === survivor.pid));
  });

  test("a case that kills its worker every time is recorded as lost after --max-attempts; the run completes, exit 3", async () => {
    const dir = tmp("poison");
    const runId = "poison-1";
    const poison = "case_02";
    const c = coordinator(dir, runId, ["--ack-wait", "1", "--max-attempts", "2"]);
    // One case per worker, so a dying worker takes only the poison case down with it; a worker
    // killed by the poison is replaced while the run goes on.
    const workers: Proc[] = [];
    const spawn = (): void => {
      const w = worker(dir, runId, ["--concurrency", "1"], { EVALFLEET_HOLD: "0", EVALFLEET_KILL_CASE: poison });
      workers.push(w);
      void w.done.then((end) => {
        if (end.signal === "SIGKILL" && !c.exited && workers.length < 6) spawn();
      });
    };
    spawn();
    spawn();

    const r = await exitOf(c, "the coordinator", 60_000);
    assert.equal(r.code, 3, outputOf(r));
    assert.match(r.stdout, /^run incomplete: 1 case\(s\) lost after all deliveries$/m);
    const report = readJson(join(dir, "report.json"));
    assertEachOnce(report);
    for (const x of report.cases) {
      if (x.name !== poison) {
        assert.equal(x.passed, true, `${x.name}: ${x.error}`);
        continue;
      }
      assert.equal(x.error, "worker lost: delivered 2 times without a result");
      assert.equal(x.passed, false);
      assert.equal(x.skipped, false);
      assert.equal(x.attempts, 2);
      assert.equal(x.agent_id, "steered");
    }
    assert.match(r.stdout, /case_02: worker lost: delivered 2 times without a result/);
    const started = countByName(markers(dir, "started"));
    for (const name of ALL) assert.equal(started.get(name), name === poison ? 2 : 1, name);
    const killers = markers(dir, "started").filter((m) => m.name === poison).map((m) => m.pid);
    assert.notEqual(killers[0], killers[1], "each delivery killed a different worker");
    for (const w of workers) {
      const end = await exitOf(w, "a worker");
      if (killers.includes(w.pid)) assert.equal(end.signal, "SIGKILL");
      else assert.equal(end.code, 0, `a surviving worker exits 0 once the run is over: ${end.stderr}`);
    }
  });

  test("cancel from another process: in-flight cases torn down, the rest skipped and listed, queue purged, workers exit 0, coordinator 3", async () => {
    const dir = tmp("cancel");
    const runId = "cancel-1";
    const c = coordinator(dir, runId);
    const workers = [worker(dir, runId), worker(dir, runId)];
    await waitFor(() => markers(dir, "started").length === 4, "four cases in flight");
    const inFlight = markers(dir, "started").map((m) => m.name).sort();

    const cancel = await exitOf(evalfleet(["coordinator", "cancel", runId, "--reason", "stop the test run"], env), "coordinator cancel");
    assert.equal(cancel.code, 0, cancel.stdout + cancel.stderr);
    assert.equal(cancel.stdout, `cancel requested for run ${runId}: queued cases purged; the coordinator finalises the report\n`);
    assert.equal(await queuedCaseMessages(nats.url, runId), 0, "the run's queue is purged at once");

    const r = await exitOf(c, "the coordinator");
    assert.equal(r.code, 3, outputOf(r));
    for (const w of workers) {
      const end = await exitOf(w, "a worker");
      assert.equal(end.code, 0, `a --run worker exits 0 once its run is cancelled: ${end.stderr}`);
    }
    const report = readJson(join(dir, "report.json"));
    assertEachOnce(report);
    assert.equal(report.summary.skipped, 4);
    for (const x of report.cases) {
      if (inFlight.includes(x.name)) {
        assert.equal(x.skipped, false, x.name);
        assert.match(x.error, /^cancelled: suite cancelled while the case was running/, x.name);
      } else {
        assert.equal(x.skipped, true, x.name);
        assert.match(x.error, /^skipped: run cancelled \(cancelled by evalfleet coordinator cancel \(.+\): stop the test run\)$/, x.name);
        assert.equal(x.session_id, "");
        assert.match(r.stdout, new RegExp(`^SKIP  ${x.name}  skipped: run cancelled`, "m"), `${x.name} is listed as skipped`);
      }
    }
    assert.match(r.stdout, /^run incomplete: run cancelled: cancelled by evalfleet coordinator cancel \(.+\): stop the test run$/m);
    // The in-flight cases were torn down; nothing queued ever started.
    assert.deepEqual(markers(dir, "teardown").map((m) => m.name).sort(), inFlight);
    assert.deepEqual(markers(dir, "started").map((m) => m.name).sort(), inFlight);
    assert.equal(await queuedCaseMessages(nats.url, runId), 0);
  });

  test("the coordinator SIGKILLed mid-run, then `coordinator resume`: the run finishes, nothing with a result runs again", async () => {
    const dir = tmp("resume");
    const runId = "resume-1";
    const first = coordinator(dir, runId);
    const w = worker(dir, runId);
    // Two cases finish while the first coordinator watches.
    await waitFor(() => markers(dir, "started").length === 2, "two cases in flight");
    const early = markers(dir, "started").map((m) => m.name);
    for (const name of early) release(dir, name);
    await waitFor(() => (first.stdout.match(/^PASS /gm) ?? []).length === 2, () => `two results at the first coordinator: ${first.stdout}`);
    await waitFor(() => markers(dir, "started").length === 4, "the next two cases in flight");

    first.child.kill("SIGKILL");
    assert.equal((await exitOf(first, "the killed coordinator")).signal, "SIGKILL");
    // One more case finishes while no coordinator is running.
    const orphan = markers(dir, "started").map((m) => m.name).find((n) => !early.includes(n))!;
    release(dir, orphan);
    await waitFor(async () => {
      const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], env), "coordinator status");
      return s.code === 0 && JSON.parse(s.stdout).done === 3;
    }, "a third result while the coordinator is down");

    const second = coordinator(dir, runId, [], ["coordinator", "resume", runId, FAULTS]);
    await waitFor(() => second.stdout.includes(`run id: ${runId}`), () => `the resumed coordinator to start: ${second.stdout}${second.stderr}`);
    release(dir);
    const r = await exitOf(second, "the resumed coordinator");
    assert.equal(r.code, 0, outputOf(r));
    assert.equal((await exitOf(w, "the worker")).code, 0);

    const report = readJson(join(dir, "report.json"));
    assertEachOnce(report);
    assert.equal(report.summary.run_id, runId);
    for (const x of report.cases) {
      assert.equal(x.passed, true, `${x.name}: ${x.error}`);
      assert.equal(x.attempts, 1, x.name);
    }
    const started = countByName(markers(dir, "started"));
    for (const name of ALL) assert.equal(started.get(name), 1, `${name} ran exactly once`);
  });

  test("SIGTERM on a worker: it stops pulling, finishes (or after --drain hands back) its cases, exits 0 only if the run is over", async () => {
    const dir = tmp("sigterm");
    const runId = "sigterm-1";
    const first = ALL.slice(0, 4);
    const c = coordinator(dir, runId, ["--tag", "first"]);
    const draining = (p: Proc) => () => p.stderr.includes('"msg":"draining"');

    // 1. Its two cases finish after SIGTERM; it pulls no more and exits non-zero: the run is not over.
    const w1 = worker(dir, runId);
    await waitFor(() => startedBy(dir, w1).length === 2, "two cases in flight on the first worker");
    const finished = startedBy(dir, w1);
    w1.child.kill("SIGTERM");
    await waitFor(draining(w1), "the first worker to drain");
    for (const name of finished) release(dir, name);
    const e1 = await exitOf(w1, "the first worker");
    assert.equal(e1.code, 1, e1.stderr);
    assert.match(e1.stderr, /^worker: stopped before the run was over$/m);
    assert.deepEqual(startedBy(dir, w1), finished, "it pulled nothing after SIGTERM");

    // 2. Its cases do not finish within --drain 1: they are aborted, torn down and handed back.
    // A third slot has a pull outstanding at SIGTERM: it must not take the handed-back cases again.
    const w2 = worker(dir, runId, ["--drain", "1", "--concurrency", "3"]);
    await waitFor(() => startedBy(dir, w2).length === 2, "two cases in flight on the second worker");
    const handedBack = startedBy(dir, w2);
    w2.child.kill("SIGTERM");
    const e2 = await exitOf(w2, "the second worker");
    assert.equal(e2.code, 1, e2.stderr);
    assert.match(e2.stderr, /^worker: 2 case\(s\) handed back at shutdown$/m);
    assert.deepEqual(markers(dir, "teardown").filter((m) => m.pid === w2.pid).map((m) => m.name).sort(), handedBack);
    assert.deepEqual(startedBy(dir, w2), handedBack, "it started nothing after SIGTERM");

    // 3. The handed-back cases are the last of the run: SIGTERM mid-case, they finish, the run is over, exit 0.
    const w3 = worker(dir, runId);
    await waitFor(() => startedBy(dir, w3).length === 2, "the handed-back cases on the third worker");
    assert.deepEqual(startedBy(dir, w3), handedBack);
    w3.child.kill("SIGTERM");
    await waitFor(draining(w3), "the third worker to drain");
    release(dir);
    const e3 = await exitOf(w3, "the third worker");
    assert.equal(e3.code, 0, `the run is over, so the drained worker exits 0: ${e3.stderr}`);

    const r = await exitOf(c, "the coordinator");
    assert.equal(r.code, 0, outputOf(r));
    const report = readJson(join(dir, "report.json"));
    assertEachOnce(report, first);
    for (const x of report.cases) {
      assert.equal(x.passed, true, `${x.name}: ${x.error}`);
      const [label, attempts] = finished.includes(x.name) ? [w1.label, 1] : [w3.label, 2];
      assert.equal(x.worker, label, x.name);
      assert.equal(x.attempts, attempts, x.name);
    }
    assert.equal(markers(dir, "started").length, 6, "four cases, two of them twice");
  });
});
