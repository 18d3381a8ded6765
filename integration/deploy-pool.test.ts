// The autoscaled pool without Kubernetes: deploy/kubernetes/pool's queue-metrics and worker
// containers run as plain processes (entry point, args, environment and Secret of the manifests)
// against a private nats-server. KEDA itself cannot run here; what it reads can: queue-metrics'
// `lag` is checked against the run consumers' counts on the server's monitoring endpoint (the
// very numbers KEDA's nats-jetstream scaler reads for one consumer), and the ScaledObject's
// settings turn it into the replica count KEDA's metrics-api scaler would ask for.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, markers, readJson, waitFor } from "./harness/processes.ts";
import { httpGet, killPods, runContainer, sample, type PodProc } from "./harness/pods.ts";
import { baseObjects, objectNamed } from "../test/support/deploy.ts";

const FAULTS = fixture("fleet-faults-suite.ts");
const BASIC = fixture("basic-suite.ts");
const AUTH = { user: "evalfleet", password: `pw-${process.pid}` };

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-pool-${what}-`));

/** A run consumer's counts as the monitoring endpoint reports them, the way KEDA's nats-jetstream scaler reads them. */
async function jszConsumer(monitorUrl: string, consumer: string): Promise<{ num_pending: number; num_ack_pending: number } | null> {
  const res = await fetch(`${monitorUrl}/jsz?acc=$G&consumers=true&config=true`, { signal: AbortSignal.timeout(5000) });
  const jsz = (await res.json()) as { account_details?: Array<{ name: string; stream_detail?: Array<{ name: string; consumer_detail?: Array<{ name: string; num_pending: number; num_ack_pending: number }> }> }> };
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) {
      if (stream.name !== "EVALFLEET_CASES") continue;
      const c = (stream.consumer_detail ?? []).find((x) => x.name === consumer);
      if (c) return c;
    }
  }
  return null;
}

describe("deploy: the pool's queue-metrics and worker containers as processes", () => {
  let nats: TestNatsServer;
  const pool = baseObjects("pool");
  const queueMetrics = objectNamed(pool, "Deployment", "evalfleet-queue-metrics");
  const workerDeployment = objectNamed(pool, "Deployment", "evalfleet-worker");
  const scaled = objectNamed(pool, "ScaledObject", "evalfleet-worker");
  let secrets: Record<string, Record<string, string>>;
  const trigger = scaled.spec.triggers[0].metadata as { targetValue: string; activationTargetValue: string; valueLocation: string };

  /** What KEDA would ask for, from the metric and the ScaledObject: 0 when not active, else ceil(lag / target), within min..max. */
  const replicasFor = (lag: number): number => {
    if (lag <= Number(trigger.activationTargetValue)) return scaled.spec.minReplicaCount;
    return Math.min(scaled.spec.maxReplicaCount, Math.max(1, Math.ceil(lag / Number(trigger.targetValue))));
  };
  // The suite is the test's, not the image's; single-node NATS here, so 1 stream replica instead of 3.
  const container = (deployment: typeof queueMetrics, env: Record<string, string> = {}): PodProc =>
    runContainer(deployment, { labels: {}, secrets, envOverrides: { EVALFLEET_SUITE: FAULTS, EVALFLEET_STREAM_REPLICAS: "1", ...env } });
  const cli = (args: string[], env: Record<string, string> = {}) => evalfleet(args, { ...secrets["evalfleet-nats"]!, ...env });

  before(async () => {
    nats = await startNatsServer({ auth: AUTH });
    secrets = { "evalfleet-nats": { NATS_URL: nats.url, NATS_USER: AUTH.user, NATS_PASSWORD: AUTH.password } };
  });
  after(async () => {
    await killPods();
    await killLeftovers();
    await nats?.stop();
  });

  test("queue-metrics reports queued and in-flight cases of its suite's runs as KEDA reads them, the pool worker's metrics count what it ran", async () => {
    assert.ok(nats.monitorUrl, "the test needs the server's monitoring endpoint");
    assert.equal(trigger.valueLocation, "lag");
    const dir = tmp("run");
    const qm = container(queueMetrics);
    const qport = await qm.httpPort();
    await waitFor(async () => (await httpGet(qport, "/readyz")).status === 200, () => `queue-metrics ready: ${qm.stderr}`);
    assert.equal((await httpGet(qport, "/healthz")).status, 200);
    let lastQueue: unknown = null;
    const queue = async () => (lastQueue = (await httpGet(qport, "/queue")).body) as { runs: number; queued: number; inFlight: number; lag: number; byRun: Array<{ runId: string }>; fingerprint: string };
    const idle = await queue();
    assert.deepEqual({ runs: idle.runs, lag: idle.lag }, { runs: 0, lag: 0 });
    assert.match(idle.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(replicasFor(idle.lag), 0, "nothing queued: the pool stays at zero");

    // A run from a developer's machine, no worker up yet (the pool is at zero).
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const coordinator = cli(["coordinator", "run", FAULTS, "--run-id", "pool-1", "--wait-for-workers", "60", "--json-output", join(dir, "report.json")], steer);
    await waitFor(async () => (await queue()).lag === 8, () => `lag 8 at queue-metrics, last ${JSON.stringify(lastQueue)}`);
    let q = await queue();
    let k = await jszConsumer(nats.monitorUrl!, "run-pool-1");
    assert.deepEqual({ runs: q.runs, queued: q.queued, inFlight: q.inFlight }, { runs: 1, queued: 8, inFlight: 0 });
    assert.deepEqual(k && { pending: k.num_pending, ackPending: k.num_ack_pending }, { pending: q.queued, ackPending: q.inFlight }, "the consumer's counts on the monitoring endpoint");
    assert.equal(replicasFor(q.lag), 2, "8 cases at 4 per worker: KEDA asks for 2 workers");
    const prom = (await httpGet(qport, "/metrics")).text;
    assert.equal(sample(prom, 'evalfleet_queue_lag{suite="fleet-faults"}'), 8);
    assert.equal(sample(prom, 'evalfleet_queue_cases{suite="fleet-faults",state="queued"}'), 8);
    assert.equal(sample(prom, 'evalfleet_queue_up{suite="fleet-faults"}'), 1);

    // Another suite's run is not this pool's work: its workers would refuse it.
    const other = cli(["coordinator", "run", BASIC, "--run-id", "other-1", "--wait-for-workers", "3"]);
    await waitFor(async () => (await jszConsumer(nats.monitorUrl!, "run-other-1")) !== null, "the other suite's run consumer");
    await new Promise((r) => setTimeout(r, 1100)); // past queue-metrics' one-second cache
    assert.deepEqual((await queue()).byRun.map((r) => r.runId), ["pool-1"]);
    assert.equal((await exitOf(other, "the other suite's coordinator")).code, 3);

    // KEDA starts a worker: four cases in flight, four queued, the lag unchanged.
    const worker = container(workerDeployment, steer);
    const wport = await worker.httpPort();
    await waitFor(() => markers(dir, "started").length === 4, "four cases in flight on the pool worker");
    await waitFor(async () => (await queue()).inFlight === 4, () => `in flight 4, last ${JSON.stringify(lastQueue)}`);
    q = await queue();
    k = await jszConsumer(nats.monitorUrl!, "run-pool-1");
    assert.deepEqual({ queued: q.queued, inFlight: q.inFlight, lag: q.lag }, { queued: 4, inFlight: 4, lag: 8 });
    assert.deepEqual(k && { pending: k.num_pending, ackPending: k.num_ack_pending }, { pending: 4, ackPending: 4 });
    assert.equal(sample((await httpGet(wport, "/metrics")).text, "evalfleet_worker_cases_in_flight"), 4);

    // One wrong answer, then everything finishes.
    const wrong = markers(dir, "started")[0]!.name;
    writeFileSync(join(dir, `fail.${wrong}`), "");
    writeFileSync(join(dir, "release-all"), "");
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 1, c.stdout + c.stderr);
    assert.deepEqual(readJson(join(dir, "report.json")).cases.filter((x: { passed: boolean }) => !x.passed).map((x: { name: string }) => x.name), [wrong]);
    await waitFor(async () => (await queue()).runs === 0, "the finished run to leave the queue");
    q = await queue();
    assert.equal(q.lag, 0);
    assert.equal(replicasFor(q.lag), 0, "the pool may scale back to zero");

    // A case that times out, in a second run the standing worker picks up by itself.
    rmSync(join(dir, "release-all"));
    const timed = await exitOf(cli(["coordinator", "run", FAULTS, "--run-id", "pool-2", "--name", "case_07", "--timeout", "1"], steer), "the second run", 60_000);
    assert.equal(timed.code, 1, timed.stdout + timed.stderr);
    assert.match(timed.stdout, /timeout: exceeded 1s/);

    const m = (await httpGet(wport, "/metrics")).text;
    assert.equal(sample(m, "evalfleet_worker_cases_run_total"), 9);
    assert.equal(sample(m, "evalfleet_worker_cases_passed_total"), 7);
    assert.equal(sample(m, "evalfleet_worker_cases_failed_total"), 2);
    assert.equal(sample(m, "evalfleet_worker_cases_timed_out_total"), 1);
    assert.equal(sample(m, "evalfleet_worker_case_duration_seconds_count"), 9);
    assert.ok(sample(m, 'evalfleet_worker_case_duration_seconds_bucket{le="+Inf"}') === 9);
    assert.ok((sample(m, "evalfleet_worker_case_duration_seconds_sum") ?? 0) >= 1, "the timed-out case alone took a second");
    assert.equal(sample(m, "evalfleet_worker_redeliveries_total"), 0);
    assert.equal(sample(m, "evalfleet_worker_cases_in_flight"), 0);
    assert.equal(sample(m, 'evalfleet_worker_cases_handed_back_total{reason="shutdown"}'), 0);
    assert.ok((sample(m, "process_resident_memory_bytes") ?? 0) > 0, "Node.js process metrics");

    // Scale-in: a standing worker with nothing in flight stops cleanly; so does queue-metrics.
    worker.child.kill("SIGTERM");
    assert.equal((await exitOf(worker, "the pool worker")).code, 0);
    qm.child.kill("SIGTERM");
    assert.equal((await exitOf(qm, "queue-metrics")).code, 0);
  });

  test("queue-metrics answers 503 on /queue and /readyz while NATS is away, never a made-up zero", async () => {
    const qm = container(queueMetrics);
    const qport = await qm.httpPort();
    await waitFor(async () => (await httpGet(qport, "/readyz")).status === 200, "queue-metrics ready");
    await nats.kill();
    try {
      await waitFor(async () => (await httpGet(qport, "/readyz")).status === 503, "not ready without NATS", 20_000);
      await new Promise((r) => setTimeout(r, 1100)); // past the one-second cache
      const q = await httpGet(qport, "/queue");
      assert.equal(q.status, 503, JSON.stringify(q.body));
      assert.ok(q.body.error, "says why");
      assert.equal((await httpGet(qport, "/healthz")).status, 200, "alive: restarting would not bring NATS back");
    } finally {
      await nats.restart();
    }
    await waitFor(async () => (await httpGet(qport, "/readyz")).status === 200, "ready again after NATS is back", 30_000);
    assert.equal((await httpGet(qport, "/queue")).status, 200);
    qm.child.kill("SIGTERM");
    assert.equal((await exitOf(qm, "queue-metrics")).code, 0);
  });
});
