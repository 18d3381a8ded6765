// Distributed mode end to end: a private nats-server (integration/harness/nats-server.ts), real
// `evalfleet coordinator` and `evalfleet worker` processes, real reports. The faults (killed
// workers and coordinators, cancel, drain) are in distributed-faults.test.ts.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { comparableReport } from "./harness/comparable-report.ts";
import { closedPort, evalfleet, exitOf, fixture, markers, readJson, waitFor, type Proc, outputOf } from "./harness/processes.ts";

const FLEET = fixture("fleet-suite.ts");
const FAULTS = fixture("fleet-faults-suite.ts");
const BASIC = fixture("basic-suite.ts");

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-dist-${what}-`));
const noStack = (text: string): void => assert.doesNotMatch(text, /\n\s+at /, "no stack trace");

describe("distributed mode (coordinator and worker processes on NATS JetStream)", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;

  before(async () => {
    // Every child gets the private server, so nothing can fall back to a shared one on 4222.
    env = { NATS_URL: nats.url };
  });

  test("300 cases on three workers: declaration order, each case run once, the local run's report", async () => {
    const dir = tmp("parity");
    const distDir = join(dir, "dist");
    const localDir = join(dir, "local");
    mkdirSync(distDir);
    mkdirSync(localDir);
    const runId = "parity-300";
    const workers = [1, 2, 3].map(() =>
      evalfleet(["worker", FLEET, "--run", runId, "--threads", "1", "--concurrency", "4", "--log-level", "warn"], { ...env, EVALFLEET_TEST_DIR: distDir }),
    );
    const coordinator = evalfleet(["coordinator", "run", FLEET, "--run-id", runId, "--json-output", join(dir, "dist.json")], { ...env, EVALFLEET_TEST_DIR: distDir });
    const local = evalfleet(["run", FLEET, "--concurrency", "8", "--threads", "2", "--json-output", join(dir, "local.json")], { EVALFLEET_TEST_DIR: localDir });

    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 1, c.stdout + c.stderr); // the suite has failing cases on purpose
    assert.match(c.stdout, new RegExp(`^run id: ${runId}$`, "m"));
    for (const w of workers) {
      const r = await exitOf(w, "a worker whose run is over");
      assert.equal(r.code, 0, `a --run worker exits 0 once its run is over: ${r.stderr}`);
    }
    const l = await exitOf(local, "the local run", 90_000);
    assert.equal(l.code, 1, l.stdout + l.stderr);

    const dist = readJson(join(dir, "dist.json"));
    const loc = readJson(join(dir, "local.json"));
    // Declaration order, every case exactly once.
    assert.equal(dist.cases.length, 300);
    assert.deepEqual(
      dist.cases.map((x: { index: number; name: string }) => [x.index, x.name]),
      Array.from({ length: 300 }, (_, i) => [i, `fleet_${String(i).padStart(3, "0")}`]),
    );
    // Every agent ran exactly once (setup failures never reach the agent), in both modes.
    const runs = (d: string): string[] => readFileSync(join(d, "runs.log"), "utf8").trim().split("\n").sort();
    const distRuns = runs(distDir);
    assert.equal(new Set(distRuns).size, distRuns.length, "no case ran twice");
    assert.deepEqual(distRuns, runs(localDir));
    assert.equal(distRuns.length, 300 - dist.cases.filter((x: { error: string | null }) => x.error?.startsWith("setup:")).length);

    // The fields that may differ, checked for what they should be.
    const labels = new Set(workers.map((w) => w.label));
    const used = new Set<string>();
    assert.equal(dist.summary.run_id, runId);
    dist.cases.forEach((d: Record<string, any>, i: number) => {
      const lc = loc.cases[i];
      assert.ok(labels.has(d.worker), `case ${i} ran on a worker process, got ${d.worker}`);
      used.add(d.worker);
      assert.equal(d.attempts, 1, `case ${i} was delivered once`);
      assert.match(lc.worker, /^thread-\d+$/);
      assert.equal(typeof d.duration_seconds, "number");
      const session = new RegExp(`^eval-${d.name}-[0-9a-f]{8}$`);
      assert.match(d.session_id, session);
      assert.match(lc.session_id, session);
    });
    assert.ok(used.size >= 2, `the cases were shared between workers, got ${[...used].join(", ")}`);

    // Everything else is identical, keys in the same order.
    const [a, b] = [comparableReport(dist), comparableReport(loc)];
    assert.deepEqual(Object.keys(dist.summary), Object.keys(loc.summary));
    a.cases.forEach((x: object, i: number) => assert.deepEqual(Object.keys(x), Object.keys(b.cases[i]), `key order of case ${i}`));
    assert.deepEqual(a, b);
    // The suite covers what it claims to: passes and every kind of failure.
    const errors = dist.cases.map((x: { error: string | null }) => x.error ?? "");
    for (const kind of [/^timeout: exceeded 0\.2s$/, /^setup: Error: no fixture for/, /^agent: run paused/]) assert.ok(errors.some((e: string) => kind.test(e)), String(kind));
    assert.ok(dist.cases.some((x: { judge_passed: boolean | null }) => x.judge_passed === false));
    assert.ok(dist.cases.some((x: { reliability_passed: boolean | null }) => x.reliability_passed === false));
    // The reliability check's reason and steps cross NATS with the result (the same as local, above).
    const failedTools = dist.cases.find((x: { reliability_passed: boolean | null }) => x.reliability_passed === false) as { reliability_reason: string | null; trajectory: { failures: unknown[] } | null };
    assert.ok(failedTools.reliability_reason && failedTools.trajectory && failedTools.trajectory.failures.length > 0, JSON.stringify(failedTools));
    assert.ok(dist.cases.some((x: { team_id: string | null }) => x.team_id === "fleet-team"));
    assert.ok(dist.summary.passed > 200 && dist.summary.failed > 20, JSON.stringify(dist.summary));
  });

  describe("selection, --list and exit codes through `coordinator run`", () => {
    let worker: Proc;
    before(() => {
      // One standing worker (no --run) serves every run of basic-suite.ts.
      worker = evalfleet(["worker", BASIC, "--threads", "1", "--log-level", "warn"], env);
    });
    after(async () => {
      if (!worker || worker.exited) return;
      worker.child.kill("SIGTERM");
      const r = await exitOf(worker, "the standing worker");
      assert.equal(r.code, 0, `a standing worker stopped with nothing in flight exits 0: ${r.stderr}`);
    });

    const coordinatorRun = async (runId: string, args: string[], extraEnv: Record<string, string> = {}) => {
      const dir = tmp(runId);
      const report = join(dir, "report.json");
      const r = await exitOf(evalfleet(["coordinator", "run", ...args, "--run-id", runId, "--json-output", report], { ...env, ...extraEnv }), `coordinator run ${runId}`, 60_000);
      return { ...r, report, dir };
    };
    const names = (report: string): string[] => readJson(report).cases.map((x: { name: string }) => x.name);

    test("--name: exit 0 when every selected case passes", async () => {
      const r = await coordinatorRun("sel-name", [BASIC, "--name", "alpha"]);
      assert.equal(r.code, 0, outputOf(r));
      assert.deepEqual(names(r.report), ["alpha"]);
      assert.match(r.stdout, /1\/1 passed/);
    });

    test("--tag: exit 1 when a selected case fails; declaration order", async () => {
      const r = await coordinatorRun("sel-tag", [BASIC, "--tag", "smoke"]);
      assert.equal(r.code, 1, outputOf(r));
      const report = readJson(r.report);
      assert.deepEqual(names(r.report), ["alpha", "gamma"]);
      assert.deepEqual(report.cases.map((x: { passed: boolean }) => x.passed), [true, false]);
      assert.deepEqual(report.cases.map((x: { index: number }) => x.index), [0, 2]);
    });

    test("--tag and --name are ANDed; --name repeats", async () => {
      const r = await coordinatorRun("sel-and", [BASIC, "--tag", "regression", "--name", "alpha", "--name", "beta"]);
      assert.equal(r.code, 0, outputOf(r));
      assert.deepEqual(names(r.report), ["beta"]);
    });

    test("no selection: the whole suite, exit 1", async () => {
      const r = await coordinatorRun("sel-all", [BASIC]);
      assert.equal(r.code, 1, outputOf(r));
      assert.deepEqual(names(r.report), ["alpha", "beta", "gamma"]);
      assert.match(r.stdout, /2\/3 passed, 1 failed/);
    });

    test("nothing selected: one line, exit 2, and no run is created", async () => {
      const r = await coordinatorRun("sel-none", [BASIC, "--tag", "nope"]);
      assert.equal(r.code, 2, outputOf(r));
      assert.equal(r.stderr.trim(), "no cases selected (name=None, tag='nope')\n  available: alpha, beta, gamma");
      assert.equal(r.stdout, "");
      const s = await exitOf(evalfleet(["coordinator", "status", "sel-none", "--json"], env), "coordinator status");
      assert.equal(s.code, 2, s.stdout + s.stderr);
      assert.equal(s.stderr.trim(), "error: no run 'sel-none' on this NATS server");
    });

    test("--list prints what `evalfleet list` prints, writes the case list, exit 0, and publishes nothing", async () => {
      const r = await coordinatorRun("sel-list", [BASIC, "--list", "--tag", "smoke"]);
      assert.equal(r.code, 0, outputOf(r));
      const listed = await exitOf(evalfleet(["list", BASIC, "--tag", "smoke"]), "evalfleet list");
      assert.equal(r.stdout, `${listed.stdout}json output: ${r.report}\n`);
      assert.deepEqual(readJson(r.report), {
        cases: [
          { name: "alpha", agent_id: "echo", team_id: null, tags: ["smoke"], timeout_seconds: 120 },
          { name: "gamma", agent_id: "echo", team_id: null, tags: ["smoke", "regression"], timeout_seconds: 120 },
        ],
      });
      const s = await exitOf(evalfleet(["coordinator", "status", "sel-list"], env), "coordinator status");
      assert.equal(s.code, 2, "--list created no run");
    });

    test("a usage error: exit 2, one line", async () => {
      const r = await coordinatorRun("sel-usage", [BASIC, "--max-attempts", "0"]);
      assert.equal(r.code, 2, outputOf(r));
      assert.match(r.stderr.trim(), /^error: .*--max-attempts must be a whole number >= 1, got '0'$/);
    });

    test("no worker for the suite: every case skipped, exit 3", async () => {
      const r = await coordinatorRun("sel-noworker", [FAULTS, "--wait-for-workers", "1"]);
      assert.equal(r.code, 3, outputOf(r));
      const report = readJson(r.report);
      assert.equal(report.summary.total, 8);
      assert.equal(report.summary.skipped, 8);
      assert.match(r.stdout, /run incomplete: no compatible worker joined within 1s \(suite fingerprint [0-9a-f]{12}\)/);
    });
  });

  test("coordinator status --json: consistent counts during and after a run", async () => {
    const dir = tmp("status");
    const runId = "status-1";
    const steer = { ...env, EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const report = join(dir, "report.json");
    const coordinator = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--json-output", report], steer);
    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "2", "--log-level", "warn"], steer);
    const status = async (): Promise<Record<string, any>> => {
      const r = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], env), "coordinator status");
      assert.equal(r.code, 0, outputOf(r));
      return JSON.parse(r.stdout);
    };

    // Two cases in flight; let one pass and one fail, then two more are in flight and four queued.
    await waitFor(() => markers(dir, "started").length === 2, "two cases in flight");
    const [first, second] = markers(dir, "started").map((m) => m.name);
    writeFileSync(join(dir, `fail.${first}`), "");
    writeFileSync(join(dir, `release.${first}`), "");
    writeFileSync(join(dir, `release.${second}`), "");
    await waitFor(() => (coordinator.stdout.match(/^(PASS|FAIL) /gm) ?? []).length === 2, () => `two results at the coordinator: ${coordinator.stdout}`);
    await waitFor(() => markers(dir, "started").length === 4, "the next two cases in flight");

    const during = await status();
    assert.equal(during.runId, runId);
    assert.equal(during.phase, "running");
    assert.equal(during.cancel, null);
    assert.equal(during.suite, "fleet-faults");
    assert.match(during.fingerprint, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      { selected: during.selected, done: during.done, passed: during.passed, failed: during.failed, running: during.running, queued: during.queued },
      { selected: 8, done: 2, passed: 1, failed: 1, running: 2, queued: 4 },
    );
    assert.deepEqual(during.workers.map((w: { workerId: string; accepted: boolean; slots: number }) => [w.workerId, w.accepted, w.slots]), [[worker.label, true, 2]]);

    writeFileSync(join(dir, "release-all"), "");
    const c = await exitOf(coordinator, "the coordinator");
    assert.equal(c.code, 1, c.stdout + c.stderr);
    assert.equal((await exitOf(worker, "the worker")).code, 0);

    const done = await status();
    const summary = readJson(report).summary;
    assert.equal(done.phase, "completed");
    assert.deepEqual(
      { selected: done.selected, done: done.done, passed: done.passed, failed: done.failed, running: done.running, queued: done.queued },
      { selected: 8, done: 8, passed: summary.passed, failed: summary.failed, running: 0, queued: 0 },
    );
    assert.deepEqual([summary.passed, summary.failed], [7, 1]);
  });

  test("a worker with another suite is refused: it exits non-zero saying why, the coordinator exits 3", async () => {
    const dir = tmp("refused");
    const runId = "refused-1";
    const report = join(dir, "report.json");
    const worker = evalfleet(["worker", BASIC, "--run", runId, "--threads", "1"], { ...env, EVALFLEET_TEST_DIR: dir });
    // Started first so that its refusal is on record before the coordinator's wait runs out.
    await waitFor(() => worker.stderr.includes("worker starting"), () => `the worker to load its suite: ${worker.stderr}`);
    const coordinator = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--wait-for-workers", "3", "--json-output", report], { ...env, EVALFLEET_TEST_DIR: dir });

    const w = await exitOf(worker, "the refused worker");
    assert.equal(w.code, 2, `a refused worker exits 2: ${w.stderr}`);
    const why = new RegExp(`^worker: run ${runId} is for suite 'fleet-faults' with fingerprint [0-9a-f]{12}, this worker loaded .*basic-suite\\.ts with fingerprint [0-9a-f]{12}$`, "m");
    assert.match(w.stderr, why);

    const c = await exitOf(coordinator, "the coordinator");
    assert.equal(c.code, 3, c.stdout + c.stderr);
    assert.match(c.stdout, new RegExp(`worker ${worker.label} refused the run: run ${runId} is for suite 'fleet-faults'`));
    assert.match(c.stdout, /^run incomplete: no compatible worker joined within 3s \(suite fingerprint [0-9a-f]{12}\); refused by /m);
    const r = readJson(report);
    assert.equal(r.summary.skipped, 8);
    assert.ok(r.cases.every((x: { error: string }) => x.error.startsWith("skipped: no compatible worker joined within 3s")));
    assert.equal(markers(dir, "started").length, 0, "no case ran");
  });

  test("the broker unreachable at coordinator start: one clear line, exit 3, within seconds", async () => {
    const port = await closedPort();
    const t0 = Date.now();
    const r = await exitOf(evalfleet(["coordinator", "run", BASIC, "--run-id", "unreachable", "--nats", `nats://127.0.0.1:${port}`], env), "the coordinator", 15_000);
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(r.code, 3, outputOf(r));
    assert.match(r.stderr, new RegExp(`^error: cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}: .+\\n$`));
    noStack(r.stderr);
    assert.ok(seconds < 10, `gave up after ${seconds}s`);
  });
});
