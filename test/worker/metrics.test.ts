// The worker's Prometheus metrics in-process (worker/metrics.ts): what the run server reports, the
// gauges read at scrape time, the exposition deploy/README.md documents.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CASE_DURATION_BUCKETS, WorkerMetrics } from "../../worker/metrics.ts";

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

test("per provider key: permits got, in flight, 429s, failures and tokens", async () => {
  const m = new WorkerMetrics({ suite: { name: "nightly", fingerprint: FINGERPRINT }, slots: 8, inFlight: () => 0, ready: () => true, natsConnected: () => true, processMetrics: false });
  const key = "openai:gpt-5-mini";
  for (let i = 0; i < 4; i++) m.providerGranted(key);
  m.providerReleased(key, { status: 200, tokens: 120 });
  m.providerReleased(key, { status: 429 });
  m.providerReleased(key, { status: null });
  const { body } = await m.render();
  const at = (name: string): number | undefined => sample(body, `${name}{key="${key}"}`);
  assert.equal(at("evalfleet_worker_provider_requests_total"), 4);
  assert.equal(at("evalfleet_worker_provider_in_flight"), 1);
  assert.equal(at("evalfleet_worker_provider_rate_limited_total"), 1);
  assert.equal(at("evalfleet_worker_provider_failed_total"), 1);
  assert.equal(at("evalfleet_worker_provider_tokens_total"), 120);
});

test("the response cache's hits and misses of the worker's cases are counted (--cache)", async () => {
  const m = new WorkerMetrics({ suite: { name: "nightly", fingerprint: FINGERPRINT }, slots: 1, inFlight: () => 0, ready: () => true, natsConnected: () => true, processMetrics: false });
  const { body: before } = await m.render();
  assert.equal(sample(before, "evalfleet_worker_model_cache_hits_total"), 0);
  m.caseFinished({ passed: true, timedOut: false, durationSeconds: 0.1, modelCache: { hits: 2, misses: 1 } });
  m.caseFinished({ passed: true, timedOut: false, durationSeconds: 0.1, modelCache: { hits: 3, misses: 0 } });
  m.caseFinished({ passed: true, timedOut: false, durationSeconds: 0.1, modelCache: null });
  const { body } = await m.render();
  assert.equal(sample(body, "evalfleet_worker_model_cache_hits_total"), 5);
  assert.equal(sample(body, "evalfleet_worker_model_cache_misses_total"), 1);
});
