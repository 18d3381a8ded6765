// The nightly Kubernetes run without Kubernetes: the containers of deploy/kubernetes/nightly run
// as plain processes (the Dockerfile's entry point, the manifests' args and environment, the
// downward API's Job name, the Secret's NATS credentials) against a private nats-server that
// requires those credentials. What differs from a pod, and why, is stated where it happens.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { countByName, evalfleet, exitOf, fixture, killLeftovers, markers, readJson, waitFor } from "./harness/processes.ts";
import { httpGet, killPods, runContainer, sample, type PodProc } from "./harness/pods.ts";
import { baseObjects, objectNamed, podTemplateOf, jobSpecOf, type K8sObject } from "../test/support/deploy.ts";

const BASIC = fixture("basic-suite.ts");
const FAULTS = fixture("fleet-faults-suite.ts");
const ALL = Array.from({ length: 8 }, (_, i) => `case_${String(i).padStart(2, "0")}`);
const AUTH = { user: "evalfleet", password: `pw-${process.pid}` };
const JOB_LABEL = "batch.kubernetes.io/job-name";

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-deploy-${what}-`));
const release = (dir: string, name = "all"): void => writeFileSync(join(dir, name === "all" ? "release-all" : `release.${name}`), "");

/**
 * What the Job controller does with a pod that exited `code` (not disrupted): the first matching
 * podFailurePolicy rule decides; exit 0 completes the pod; anything else counts toward backoffLimit.
 */
function jobOutcome(cron: K8sObject, code: number): "succeeded" | "FailJob" | "retried" {
  if (code === 0) return "succeeded";
  const container = podTemplateOf(cron).spec.containers[0].name;
  for (const rule of jobSpecOf(cron).podFailurePolicy.rules) {
    const on = rule.onExitCodes;
    if (on && on.containerName === container && on.operator === "In" && on.values.includes(code)) return rule.action;
  }
  return "retried";
}

describe("deploy: the nightly CronJobs' containers as processes", () => {
  let nats: TestNatsServer;
  const nightly = baseObjects("nightly");
  const coordinatorCron = objectNamed(nightly, "CronJob", "evalfleet-nightly-coordinator");
  const workersCron = objectNamed(nightly, "CronJob", "evalfleet-nightly-workers");
  let secrets: Record<string, Record<string, string>>;

  // The suite is the test's, not the image's; the private nats-server is a single node, so the
  // manifests' 3 stream replicas (for a 3-node cluster) are 1 here.
  const overrides = (suite: string, extra: Record<string, string> = {}): Record<string, string> => ({ EVALFLEET_SUITE: suite, EVALFLEET_STREAM_REPLICAS: "1", ...extra });
  const pod = (cron: K8sObject, night: number, opts: { suite: string; reports?: string; env?: Record<string, string>; extraArgs?: string[] }): PodProc =>
    runContainer(cron, {
      // The pod's label the downward API reads: the CronJob controller names the Job <cronjob>-<scheduled minute>.
      labels: { [JOB_LABEL]: `${cron.metadata.name}-${night}` },
      secrets,
      mounts: opts.reports ? { "/reports": opts.reports } : {},
      envOverrides: overrides(opts.suite, opts.env),
      extraArgs: opts.extraArgs,
    });
  const cli = (args: string[]) => evalfleet(args, secrets["evalfleet-nats"]!);

  before(async () => {
    nats = await startNatsServer({ auth: AUTH });
    secrets = { "evalfleet-nats": { NATS_URL: nats.url, NATS_USER: AUTH.user, NATS_PASSWORD: AUTH.password } };
  });
  after(async () => {
    await killPods();
    await killLeftovers();
    await nats?.stop();
  });

  test("one night: workers ready before the coordinator, `coordinator run --tag regression`, reports on the volume, exit codes as Job results", async () => {
    const night = 29406360;
    const reports = tmp("reports");
    // Two of the Job's pods (parallelism 4 in the manifest; two show the sharing on this machine).
    const workers = [pod(workersCron, night, { suite: BASIC }), pod(workersCron, night, { suite: BASIC })];
    for (const w of workers) {
      const port = await w.httpPort();
      assert.equal((await httpGet(port, "/healthz")).status, 200);
      await waitFor(async () => (await httpGet(port, "/readyz")).status === 200, () => `worker ${w.pid} ready: ${w.stderr}`);
      const metrics = (await httpGet(port, "/metrics")).text;
      assert.equal(sample(metrics, "evalfleet_worker_ready"), 1);
      assert.equal(sample(metrics, "evalfleet_worker_nats_connected"), 1);
      assert.equal(sample(metrics, "evalfleet_worker_slots"), 4, "--concurrency=4 from the manifest");
      assert.match(metrics, /^evalfleet_worker_info\{suite="basic",fingerprint="[0-9a-f]{12}",version="[^"]+"\} 1$/m);
      assert.match(w.stderr, new RegExp(`"run":"nightly-${night}"`), "the worker serves the run its Job name names");
    }

    // The container command: the manifest's args plus a selection.
    const coordinator = pod(coordinatorCron, night, { suite: BASIC, reports, extraArgs: ["--tag", "regression"] });
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 1, c.stdout + c.stderr);
    assert.equal(jobOutcome(coordinatorCron, c.code!), "FailJob", "a failed case fails the Job without a retry");
    assert.match(c.stdout, new RegExp(`^run id: nightly-${night}$`, "m"));
    assert.match(c.stdout, /1\/2 passed, 1 failed/);
    const dir = join(reports, `evalfleet-nightly-coordinator-${night}`);
    assert.match(c.stdout, new RegExp(`^json output: ${dir}/report\\.json$`, "m"));
    const report = readJson(join(dir, "report.json"));
    assert.equal(report.summary.run_id, `nightly-${night}`);
    assert.deepEqual(report.cases.map((x: { name: string; passed: boolean }) => [x.name, x.passed]), [["beta", true], ["gamma", false]]);
    const junit = readFileSync(join(dir, "junit.xml"), "utf8");
    assert.match(junit, /<testcase [^>]*name="beta"/);
    assert.match(junit, /<testcase [^>]*name="gamma"[^]*?<failure/);
    for (const w of workers) {
      const r = await exitOf(w, "a worker pod");
      assert.equal(r.code, 0, `the run is over: the worker pod completes: ${r.stderr}`);
      assert.equal(jobOutcome(workersCron, r.code!), "succeeded");
    }
    assert.ok(new Set(report.cases.map((x: { worker: string }) => x.worker)).size >= 1);

    // The next night is another run id, and a passing selection completes the Job.
    const next = night + 1440;
    const w2 = pod(workersCron, next, { suite: BASIC });
    const c2 = await exitOf(pod(coordinatorCron, next, { suite: BASIC, reports, extraArgs: ["--name", "beta"] }), "the next night's coordinator", 60_000);
    assert.equal(c2.code, 0, c2.stdout + c2.stderr);
    assert.equal(jobOutcome(coordinatorCron, 0), "succeeded");
    assert.match(c2.stdout, new RegExp(`^run id: nightly-${next}$`, "m"));
    assert.equal(readJson(join(reports, `evalfleet-nightly-coordinator-${next}`, "report.json")).summary.status, "PASS");
    assert.equal((await exitOf(w2, "the next night's worker")).code, 0);
  });

  test("a worker pod interrupted mid-run: not ready while draining, exits non-zero, its cases finish on a replacement that counts the redeliveries", async () => {
    const night = 29410000;
    const dir = tmp("interrupted");
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const coordinator = pod(coordinatorCron, night, { suite: FAULTS, reports: tmp("reports"), env: steer });
    // --drain=1 on top of the manifest's 60 s, so the hand-back happens within the test's time.
    const first = pod(workersCron, night, { suite: FAULTS, env: steer, extraArgs: ["--drain=1"] });
    const port = await first.httpPort();
    await waitFor(() => markers(dir, "started").filter((m) => m.pid === first.pid).length === 4, () => `four cases in flight on the first pod: ${JSON.stringify(markers(dir, "started"))}\n${first.stderr}\n${coordinator.stdout}${coordinator.stderr}`);
    const held = markers(dir, "started").map((m) => m.name).sort();
    assert.equal(sample((await httpGet(port, "/metrics")).text, "evalfleet_worker_cases_in_flight"), 4);

    first.child.kill("SIGTERM");
    // Draining: alive, not ready (a Deployment would take it out of rotation).
    let sawDraining = false;
    await waitFor(async () => {
      const ready = await httpGet(port, "/readyz").catch(() => null);
      if (ready?.status === 503 && ready.body.detail === "draining") {
        sawDraining = (await httpGet(port, "/healthz").catch(() => null))?.status === 200;
        return true;
      }
      return first.exited;
    }, "the first pod to report draining");
    assert.ok(sawDraining, "readiness 503 'draining' while liveness stays 200");
    const e1 = await exitOf(first, "the interrupted pod");
    assert.equal(e1.code, 1, e1.stderr);
    assert.match(e1.stderr, /^worker: 4 case\(s\) handed back at shutdown$/m);
    assert.equal(jobOutcome(workersCron, 1), "retried", "the Job replaces an interrupted pod");

    const replacement = pod(workersCron, night, { suite: FAULTS, env: steer });
    const rport = await replacement.httpPort();
    await waitFor(() => markers(dir, "started").filter((m) => m.pid === replacement.pid).length === 4, "four cases in flight on the replacement");
    const redelivered = markers(dir, "started").filter((m) => m.pid === replacement.pid && held.includes(m.name)).length;
    assert.ok(redelivered >= 1, "the handed-back cases come back first");
    const metrics = (await httpGet(rport, "/metrics")).text;
    assert.equal(sample(metrics, "evalfleet_worker_redeliveries_total"), redelivered, "cases delivered with a delivery count above 1");
    assert.equal(sample(metrics, "evalfleet_worker_cases_in_flight"), 4);
    release(dir);

    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    const r = await exitOf(replacement, "the replacement pod");
    assert.equal(r.code, 0, r.stderr);
    const report = readJson(join(tmpdirOf(c.stdout), "report.json"));
    assert.deepEqual(report.cases.map((x: { name: string }) => x.name), ALL);
    for (const x of report.cases) {
      assert.equal(x.passed, true, `${x.name}: ${x.error}`);
      assert.equal(x.attempts, held.includes(x.name) ? 2 : 1, x.name);
      assert.equal(x.worker, replacement.label, x.name);
    }
  });

  test("the coordinator pod evicted: it leaves the run (exit 143), the run goes on, the replacement pod resumes it and the Job's result is the run's", async () => {
    const night = 29420000;
    const dir = tmp("evicted");
    const reports = tmp("reports");
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const runId = `nightly-${night}`;
    const first = pod(coordinatorCron, night, { suite: FAULTS, reports, env: steer });
    const worker = pod(workersCron, night, { suite: FAULTS, env: steer });
    await waitFor(() => markers(dir, "started").length === 4, "four cases in flight");
    const early = markers(dir, "started").map((m) => m.name).slice(0, 2);
    for (const name of early) release(dir, name);
    await waitFor(() => (first.stdout.match(/^PASS /gm) ?? []).length === 2, () => `two results at the first coordinator: ${first.stdout}`);

    first.child.kill("SIGTERM");
    const e = await exitOf(first, "the evicted coordinator");
    assert.equal(e.code, 143, e.stdout + e.stderr);
    assert.match(e.stdout, new RegExp(`^SIGTERM: leaving run ${runId} as it is for a replacement coordinator to resume \\(--on-sigterm leave\\)$`, "m"));
    assert.equal(jobOutcome(coordinatorCron, 143), "retried", "not a verdict: the Job starts a replacement pod");
    const status = await exitOf(cli(["coordinator", "status", runId, "--json"]), "coordinator status");
    assert.equal(status.code, 0, status.stderr);
    const s = JSON.parse(status.stdout);
    assert.equal(s.phase, "running", "the run was not cancelled");
    assert.equal(s.cancel, null);
    assert.equal(s.done, 2);

    // The replacement pod of the same Job: same Job name, so the same run, which exists: resumed.
    const second = pod(coordinatorCron, night, { suite: FAULTS, reports, env: steer });
    await waitFor(() => second.stdout.includes(`run ${runId} exists: resuming it`), () => `the replacement to resume: ${second.stdout}${second.stderr}`);
    release(dir);
    const c = await exitOf(second, "the replacement coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.equal((c.stdout.match(/^run id: /gm) ?? []).length, 1, "the run id is announced once");
    assert.equal((await exitOf(worker, "the worker pod")).code, 0);
    const report = readJson(join(reports, `evalfleet-nightly-coordinator-${night}`, "report.json"));
    assert.equal(report.summary.run_id, runId);
    assert.deepEqual(report.cases.map((x: { name: string }) => x.name), ALL);
    assert.ok(report.cases.every((x: { passed: boolean; attempts: number }) => x.passed && x.attempts === 1));
    const started = countByName(markers(dir, "started"));
    for (const name of ALL) assert.equal(started.get(name), 1, `${name} ran exactly once`);
    assert.ok(existsSync(join(reports, `evalfleet-nightly-coordinator-${night}`, "junit.xml")));
  });
});

/** The folder of the JSON report a coordinator announced. */
function tmpdirOf(stdout: string): string {
  const m = /^json output: (.+)\/report\.json$/m.exec(stdout);
  if (!m) throw new Error(`no json output line in:\n${stdout}`);
  return m[1]!;
}
