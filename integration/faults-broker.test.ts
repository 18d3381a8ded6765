// The broker fails under a running run: a single server killed and restarted on the same port and
// store, and the stream leader of a three-node cluster killed. Real nats-server processes, real
// coordinator and worker processes. Every case must be reported exactly once, and the run must end.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNatsServer } from "./harness/nats-server.ts";
import { startNatsCluster } from "./harness/nats-cluster.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, waitFor } from "./harness/processes.ts";
import { CASES_STREAM } from "../shared/broker/subjects.ts";

after(killLeftovers);

/** How often each case ran, from the runs.<pid>.log files of test/fixtures/steady-suite.ts. */
function runCounts(dir: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const f of readdirSync(dir).filter((f) => f.startsWith("runs."))) {
    for (const name of readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean)) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

function assertEveryCaseOnce(report: { summary: { total: number }; cases: Array<{ name: string; index: number; passed: boolean; error: string | null }> }, total: number): void {
  assert.equal(report.summary.total, total);
  assert.deepEqual(
    report.cases.map((c) => c.index),
    Array.from({ length: total }, (_, i) => i),
    "declaration order, every index once",
  );
  assert.equal(new Set(report.cases.map((c) => c.name)).size, total, "no case twice");
  const failed = report.cases.filter((c) => !c.passed);
  assert.deepEqual(failed.map((c) => `${c.name}: ${c.error}`), [], "every case passed");
}

describe("broker faults", () => {
  test("the NATS server killed and restarted mid-run: everyone reconnects, no case lost or duplicated", async () => {
    const server = await startNatsServer();
    try {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-restart-"));
      const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_CASES: "200", EVALFLEET_CASE_MS: "40" };
      const report = join(dir, "report.json");
      const workers = [0, 1].map(() => evalfleet(["worker", fixture("steady-suite.ts"), "--nats", server.url, "--concurrency", "6", "--run", "restart-1", "--log-level", "warn"], env));
      const coordinator = evalfleet(
        ["coordinator", "run", fixture("steady-suite.ts"), "--nats", server.url, "--run-id", "restart-1", "--ack-wait", "3", "--json-output", report, "--broker-timeout", "60"],
        env,
      );
      await waitFor(() => [...runCounts(dir).values()].length >= 60, "60 cases to have run before the restart");
      await server.kill();
      await new Promise((r) => setTimeout(r, 1500)); // the outage itself: clients must ride it out
      await server.restart();
      const c = await exitOf(coordinator, "the coordinator", 120_000);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assertEveryCaseOnce(readJson(report), 200);
      const ran = runCounts(dir);
      assert.equal(ran.size, 200, "every case ran at least once");
      for (const w of workers) assert.equal((await exitOf(w, "a worker", 60_000)).code, 0, w.stderr);
    } finally {
      await server.stop();
    }
  });

  test("the NATS server gone for good: the coordinator gives up within --broker-timeout, writes the report and exits 3", async () => {
    const server = await startNatsServer();
    try {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-gone-"));
      const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_CASES: "200", EVALFLEET_CASE_MS: "40" };
      const report = join(dir, "report.json");
      evalfleet(["worker", fixture("steady-suite.ts"), "--nats", server.url, "--concurrency", "4", "--run", "gone-1", "--log-level", "error"], env);
      const coordinator = evalfleet(
        ["coordinator", "run", fixture("steady-suite.ts"), "--nats", server.url, "--run-id", "gone-1", "--json-output", report, "--broker-timeout", "3"],
        env,
      );
      await waitFor(() => [...runCounts(dir).values()].length >= 20, "20 cases to have run before the server goes");
      await server.kill();
      const lostAt = Date.now();
      const c = await exitOf(coordinator, "the coordinator", 60_000);
      assert.equal(c.code, 3, c.stdout + c.stderr);
      assert.ok(Date.now() - lostAt < 30_000, "it gave up within a bound, not a hang");
      assert.match(c.stdout, /run incomplete: lost the NATS connection for more than 3s/);
      const payload = readJson(report) as { cases: Array<{ index: number; passed: boolean; skipped: boolean; error: string | null }> };
      assert.deepEqual(payload.cases.map((x) => x.index), Array.from({ length: 200 }, (_, i) => i), "every case once, in order");
      assert.ok(payload.cases.some((x) => x.passed), "cases finished before the loss keep their results");
      const skipped = payload.cases.filter((x) => x.skipped);
      assert.ok(skipped.length > 0);
      for (const x of skipped) assert.match(x.error!, /^skipped: lost the NATS connection for more than 3s$/);
      assert.ok(payload.cases.every((x) => x.passed || x.skipped), "nothing else happened to the cases");
    } finally {
      await killLeftovers();
      await server.stop();
    }
  });

  test("a three-node cluster with streams replicated three times: the stream leader killed mid-run, nothing lost", async () => {
    const cluster = await startNatsCluster();
    try {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-cluster-"));
      const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_CASES: "200", EVALFLEET_CASE_MS: "40", EVALFLEET_STREAM_REPLICAS: "3" };
      const report = join(dir, "report.json");
      // The coordinator creates the replicated streams first; the workers join the run after.
      const coordinator = evalfleet(
        ["coordinator", "run", fixture("steady-suite.ts"), "--nats", cluster.url, "--run-id", "leader-1", "--ack-wait", "3", "--json-output", report, "--broker-timeout", "60"],
        env,
      );
      await waitFor(() => /run id: leader-1/.test(coordinator.stdout), () => `the coordinator to start the run: ${coordinator.stderr}`, 60_000);
      const workers = [0, 1].map(() => evalfleet(["worker", fixture("steady-suite.ts"), "--nats", cluster.url, "--concurrency", "6", "--run", "leader-1", "--log-level", "warn"], env));
      await waitFor(
        () => [...runCounts(dir).values()].length >= 50,
        () => `50 cases to have run before the leader is killed; coordinator: ${coordinator.stdout.slice(-300)} ${coordinator.stderr.slice(-300)}; workers: ${workers.map((w) => w.stderr.slice(-300)).join(" | ")}`,
        90_000,
      );
      const nc = await connect({ servers: cluster.url.split(","), timeout: 5000 });
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(CASES_STREAM);
      await nc.close();
      assert.equal(info.config.num_replicas, 3, "the cases stream is replicated three times");
      const leader = info.cluster?.leader;
      assert.ok(leader, "the cases stream has a leader");
      await cluster.kill(leader);
      const c = await exitOf(coordinator, "the coordinator", 120_000);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      assertEveryCaseOnce(readJson(report), 200);
      assert.equal(runCounts(dir).size, 200);
      for (const w of workers) assert.equal((await exitOf(w, "a worker", 60_000)).code, 0, w.stderr);
    } finally {
      await cluster.stop();
    }
  });
});
