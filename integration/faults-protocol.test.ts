// Processes speaking another NATS protocol version, on a real nats-server with real `evalfleet`
// processes. The other version's side is written by the test, as a process of that version would
// write it (its `v` is NATS_PROTOCOL + 1; only the cross-version envelopes of shared/wire/nats.ts
// are kept). A run of another version is refused the way a run of another suite is: the worker
// says why in its presence record and exits 2, the coordinator repeats the refusal when no
// compatible worker joins; results and events of another version are disposed of, said once per
// run, and the cases they name keep their real results (a message of another version cannot carry
// this run's delivery tokens, so it holds back nothing).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, outputOf, queuedCaseMessages, readJson, waitFor } from "./harness/processes.ts";
import { RUNS_BUCKET, eventSubject, resultSubject, runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL, WorkerRecordSchema } from "../shared/wire/nats.ts";
import { loadSuite } from "../shared/suite/suite.ts";

const FAULTS = fixture("fleet-faults-suite.ts");
const OTHER = NATS_PROTOCOL + 1;
const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-proto-${what}-`));

/** A manifest as a coordinator of the next protocol version might write it: only its envelope is known to this version. */
const futureManifest = (runId: string, fingerprint: string) => ({
  v: OTHER,
  runId,
  suite: { name: "fleet-faults", fingerprint, path: "/elsewhere/evals.ts" },
  plan: { shape: "unknown to this version" },
});

describe("another NATS protocol version", () => {
  const nats = useNatsServer();
  let nc: NatsConnection;
  let fingerprint: string;

  before(async () => {
    nc = await connect({ servers: nats.url, maxReconnectAttempts: 0, timeout: 5000 });
    fingerprint = (await loadSuite(FAULTS)).fingerprint;
  });
  after(async () => {
    await nc?.close().catch(() => undefined);
  });

  /** The runs bucket, once a process has created it. */
  async function runsBucket(): Promise<KV> {
    const jsm = await jetstreamManager(nc);
    await waitFor(async () => (await jsm.streams.info(`KV_${RUNS_BUCKET}`).catch(() => null)) !== null, "a process to create the runs bucket");
    return new Kvm(jetstream(nc)).open(RUNS_BUCKET);
  }

  test("a worker with --run refuses a run of another version: presence record naming both versions, exit 2", async () => {
    const runId = "proto-worker";
    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--log-level", "warn", "--nats", nats.url]);
    const kv = await runsBucket();
    await kv.put(runKeys.manifest(runId), JSON.stringify(futureManifest(runId, fingerprint)));

    const w = await exitOf(worker, "the refusing worker");
    const why = `run ${runId} speaks protocol version ${OTHER}; this worker speaks ${NATS_PROTOCOL}`;
    assert.equal(w.code, 2, `a refused worker exits 2 (a Job does not retry it): ${outputOf(w)}`);
    assert.match(w.stderr, new RegExp(`^worker: ${why}$`, "m"));
    const entry = await kv.get(runKeys.worker(runId, worker.label));
    assert.ok(entry, "the worker left a presence record");
    const record = WorkerRecordSchema.parse(entry.json());
    assert.deepEqual([record.workerId, record.accepted, record.reason], [worker.label, false, why]);
  });

  test("the coordinator repeats a refusal by a worker of another version in its 'no compatible worker' line, exit 3", async () => {
    const dir = tmp("coordinator");
    const runId = "proto-coordinator";
    const report = join(dir, "report.json");
    const coordinator = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--wait-for-workers", "3", "--json-output", report, "--nats", nats.url]);
    const kv = await runsBucket();
    await waitFor(async () => (await kv.get(runKeys.manifest(runId))) !== null, "the coordinator to write the manifest");
    // What a worker of the next version writes when it meets this run (worker/presence.ts, in its version).
    const workerId = "future-host/77";
    const why = `run ${runId} speaks protocol version ${NATS_PROTOCOL}; this worker speaks ${OTHER}`;
    await kv.put(
      runKeys.worker(runId, workerId),
      JSON.stringify({ v: OTHER, workerId, host: "future-host", pid: 77, fingerprint, accepted: false, reason: why, slots: 4, busy: 0, seenAt: new Date().toISOString(), zone: "new field" }),
    );

    const c = await exitOf(coordinator, "the coordinator");
    assert.equal(c.code, 3, outputOf(c));
    assert.match(c.stdout, new RegExp(`^worker ${workerId} refused the run: ${why}$`, "m"));
    assert.match(c.stdout, new RegExp(`^run incomplete: no compatible worker joined within 3s \\(suite fingerprint [0-9a-f]{12}\\); refused by ${workerId}: ${why}$`, "m"));
    const r = readJson(report);
    assert.equal(r.summary.skipped, 8);
  });

  test("a standing worker refuses only its own suite's runs of another version, and goes on serving runs of its version", async (t) => {
    const dir = tmp("standing");
    const worker = evalfleet(["worker", FAULTS, "--threads", "1", "--concurrency", "4", "--log-level", "warn", "--nats", nats.url], { EVALFLEET_TEST_DIR: dir });
    // A standing worker serves every run of its suite: it must not outlive this test.
    t.after(() => void worker.child.kill("SIGKILL"));
    const kv = await runsBucket();
    await kv.put(runKeys.manifest("proto-mine"), JSON.stringify(futureManifest("proto-mine", fingerprint)));
    await kv.put(runKeys.manifest("proto-theirs"), JSON.stringify(futureManifest("proto-theirs", "f".repeat(64))));
    const presence = async (runId: string) => {
      const e = await kv.get(runKeys.worker(runId, worker.label));
      return e && e.operation === "PUT" ? WorkerRecordSchema.parse(e.json()) : null;
    };
    await waitFor(async () => (await presence("proto-mine")) !== null, () => `the worker's refusal of proto-mine:\n${worker.stderr}`);
    const mine = await presence("proto-mine");
    assert.deepEqual([mine?.accepted, mine?.reason], [false, `run proto-mine speaks protocol version ${OTHER}; this worker speaks ${NATS_PROTOCOL}`]);

    // A run of this version is served as usual by the same worker.
    const report = join(dir, "report.json");
    const c = await exitOf(evalfleet(["coordinator", "run", FAULTS, "--run-id", "proto-now", "--json-output", report, "--nats", nats.url], { EVALFLEET_TEST_DIR: dir }), "a run of this version", 60_000);
    assert.equal(c.code, 0, outputOf(c));
    assert.equal(readJson(report).summary.passed, 8);
    assert.equal(await presence("proto-theirs"), null, "another suite's run is not this worker's to refuse");
    // Once per run (the earlier test's run of another version is its suite's too, and refused as well).
    const refusals = worker.stderr.split("\n").filter((l) => /refusing the run/.test(l));
    assert.equal(refusals.filter((l) => l.includes('"run":"proto-mine"')).length, 1, worker.stderr);
    assert.ok(!refusals.some((l) => /proto-theirs|proto-now/.test(l)), worker.stderr);
    worker.child.kill("SIGTERM");
    assert.equal((await exitOf(worker, "the standing worker")).code, 0);
  });

  test("results and events of another version reaching the coordinator: disposed of, said once per run; their cases keep their real results", async () => {
    const dir = tmp("messages");
    const report = join(dir, "report.json");
    const runId = "proto-messages";
    const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const worker = evalfleet(["worker", FAULTS, "--nats", nats.url, "--run", runId, "--concurrency", "16", "--log-level", "warn"], env);
    const coordinator = evalfleet(["coordinator", "run", FAULTS, "--nats", nats.url, "--run-id", runId, "--json-output", report, "--log-level", "warn"], env);
    await waitFor(() => markers(dir, "started").length === 8, "the worker to hold the 8 cases");

    const js = jetstream(nc);
    const other = (index: number) => ({ v: OTHER, runId, index, name: `case_0${index}`, workerId: "future-host/77", result: { verdict: "a shape this version does not know" } });
    // On the subjects this version's results use (a process of another version cannot seal them
    // with this run's tokens), and on the bare subjects an older version used.
    await js.publish(resultSubject(runId, 3, "0".repeat(32)), JSON.stringify(other(3)));
    await js.publish(`evalfleet.${runId}.results.5`, JSON.stringify(other(5)));
    for (const index of [1, 2]) nc.publish(eventSubject(runId, index), JSON.stringify({ v: OTHER, runId, index, workerId: "future-host/77", kind: "started" }));
    await nc.flush();
    await waitFor(() => /disposing of event messages/.test(coordinator.stderr) && /disposing of result messages/.test(coordinator.stderr), () => `the coordinator to dispose of the messages:\n${coordinator.stderr}`);
    writeFileSync(join(dir, "release-all"), "");

    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, outputOf(c));
    const cases = readJson(report).cases as Array<{ name: string; passed: boolean; error: string | null; worker: string }>;
    const why = `result message speaks protocol version ${OTHER}; this coordinator speaks ${NATS_PROTOCOL}`;
    assert.deepEqual(
      cases.map((x) => [x.name, x.passed, x.error, x.worker]),
      cases.map((x) => [x.name, true, null, worker.label]),
      "every case, 3 and 5 included, has the result its worker sent",
    );
    const lines = c.stderr.split("\n").filter((l) => /another protocol version/.test(l));
    assert.equal(lines.length, 2, lines.join("\n"));
    assert.ok(lines.some((l) => l.includes(`disposing of result messages of another protocol version (said once per run): ${why}`)));
    assert.ok(lines.some((l) => l.includes(`disposing of event messages of another protocol version (said once per run): event message speaks protocol version ${OTHER}; this coordinator speaks ${NATS_PROTOCOL}`)));
    assert.equal(await queuedCaseMessages(nats.url, runId), 0, "nothing left to be redelivered");
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0, "the worker served to the end");
  });
});
