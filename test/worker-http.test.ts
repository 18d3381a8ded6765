// The worker's HTTP endpoint and Prometheus metrics in-process: routes, status codes, the
// exposition the README documents. Process-level behaviour is in integration/deploy-*.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EvalfleetError, ErrorCode } from "../shared/errors.ts";
import { HealthServer, type HealthCheck } from "../worker/health-server.ts";
import { CASE_DURATION_BUCKETS, WorkerMetrics } from "../worker/metrics.ts";
import { runOfConsumer } from "../coordinator/queue-metrics.ts";

const FINGERPRINT = "ab".repeat(32);

function sample(exposition: string, series: string): number | undefined {
  for (const line of exposition.split("\n")) {
    if (line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    if (line.slice(0, at) === series) return Number(line.slice(at + 1));
  }
  return undefined;
}

test("the worker metrics count what the run server reports, and read gauges at scrape time", async () => {
  let inFlight = 3;
  let ready = true;
  const m = new WorkerMetrics({ suite: { name: "nightly", fingerprint: FINGERPRINT }, slots: 8, inFlight: () => inFlight, ready: () => ready, natsConnected: () => false, processMetrics: false });
  m.caseReceived(1);
  m.caseReceived(2);
  m.caseReceived(3);
  m.caseFinished({ passed: true, timedOut: false, durationSeconds: 0.2 });
  m.caseFinished({ passed: false, timedOut: false, durationSeconds: 3 });
  m.caseFinished({ passed: false, timedOut: true, durationSeconds: 700 });
  m.caseHandedBack("shutdown");
  m.caseHandedBack("thread_crash");
  m.caseHandedBack("shutdown");
  const { contentType, body } = await m.render();
  assert.match(contentType, /^text\/plain; version=0\.0\.4/);
  const expect: Record<string, number> = {
    evalfleet_worker_cases_run_total: 3,
    evalfleet_worker_cases_passed_total: 1,
    evalfleet_worker_cases_failed_total: 2,
    evalfleet_worker_cases_timed_out_total: 1,
    evalfleet_worker_redeliveries_total: 2,
    evalfleet_worker_cases_in_flight: 3,
    evalfleet_worker_slots: 8,
    evalfleet_worker_ready: 1,
    evalfleet_worker_nats_connected: 0,
    'evalfleet_worker_cases_handed_back_total{reason="shutdown"}': 2,
    'evalfleet_worker_cases_handed_back_total{reason="thread_crash"}': 1,
    'evalfleet_worker_cases_handed_back_total{reason="publish_failed"}': 0,
    evalfleet_worker_case_duration_seconds_count: 3,
    evalfleet_worker_case_duration_seconds_sum: 703.2,
    'evalfleet_worker_case_duration_seconds_bucket{le="0.25"}': 1,
    'evalfleet_worker_case_duration_seconds_bucket{le="5"}': 2,
    'evalfleet_worker_case_duration_seconds_bucket{le="600"}': 2,
    'evalfleet_worker_case_duration_seconds_bucket{le="+Inf"}': 3,
    'evalfleet_worker_info{suite="nightly",fingerprint="abababababab",version="0.1.0"}': 1,
  };
  for (const [series, value] of Object.entries(expect)) assert.equal(sample(body, series), value, series);
  assert.deepEqual(
    [...body.matchAll(/^evalfleet_worker_case_duration_seconds_bucket\{le="([^"]+)"\}/gm)].map((x) => x[1]),
    [...CASE_DURATION_BUCKETS.map(String), "+Inf"],
  );
  assert.doesNotMatch(body, /^process_/m, "process metrics off");
  inFlight = 0;
  ready = false;
  const later = (await m.render()).body;
  assert.equal(sample(later, "evalfleet_worker_cases_in_flight"), 0);
  assert.equal(sample(later, "evalfleet_worker_ready"), 0);
  // Every evalfleet metric has HELP and TYPE lines.
  for (const name of new Set([...later.matchAll(/^(evalfleet_worker_[a-z_]+?)(?:_bucket|_sum|_count)?(?:\{| )/gm)].map((x) => x[1]!))) {
    assert.match(later, new RegExp(`^# HELP ${name} \\S`, "m"), name);
    assert.match(later, new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, "m"), name);
  }
});

test("the health endpoint: liveness, readiness, metrics, extra routes, 404, 405, HEAD", async () => {
  let readiness: HealthCheck = { ok: false, detail: "starting: connecting to NATS" };
  const server = new HealthServer({
    port: 0,
    host: "127.0.0.1",
    live: () => ({ ok: true, detail: "running" }),
    ready: () => readiness,
    metrics: async () => ({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "x_total 1\n" }),
    routes: { "/queue": async () => ({ status: 200, body: { lag: 3 } }), "/broken": async () => Promise.reject(new Error("nope")) },
  });
  const { port } = await server.start();
  const get = async (path: string, method = "GET") => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };
  try {
    assert.deepEqual(await get("/healthz"), { status: 200, type: "application/json", text: '{"status":"ok","detail":"running"}' });
    assert.deepEqual(await get("/readyz"), { status: 503, type: "application/json", text: '{"status":"unavailable","detail":"starting: connecting to NATS"}' });
    readiness = { ok: true, detail: "running" };
    assert.equal((await get("/readyz?verbose")).status, 200, "query strings are ignored");
    assert.deepEqual(await get("/metrics"), { status: 200, type: "text/plain; version=0.0.4; charset=utf-8", text: "x_total 1\n" });
    assert.deepEqual(await get("/queue"), { status: 200, type: "application/json", text: '{"lag":3}' });
    assert.deepEqual(await get("/broken"), { status: 500, type: "application/json", text: '{"error":"nope"}' });
    assert.equal((await get("/nope")).status, 404);
    assert.equal((await get("/healthz", "POST")).status, 405);
    const head = await get("/healthz", "HEAD");
    assert.deepEqual([head.status, head.text], [200, ""]);

    // A port in use is a clear usage error naming it.
    const clash = new HealthServer({ port, host: "127.0.0.1", live: () => readiness, ready: () => readiness });
    await assert.rejects(clash.start(), (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && err.message === `cannot serve health and metrics on 127.0.0.1:${port}: the port is in use`);
  } finally {
    await server.close();
  }
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), "closed");
});

test("queue-metrics counts run consumers only", () => {
  assert.equal(runOfConsumer("run-nightly-29406360"), "nightly-29406360");
  assert.equal(runOfConsumer("run-"), null);
  assert.equal(runOfConsumer("pool"), null);
  assert.equal(runOfConsumer("KV_watcher"), null);
});
