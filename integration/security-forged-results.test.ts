// The threat model of docs/security.md, claim by claim, on a real nats-server configured with the
// very permissions deploy/ ships (deploy/nats/evalfleet-permissions.conf): a real coordinator and
// worker run with their own users, and an attacker holding only the worker's (shared) credentials
// tries to forge results, read what it must not, and learn the delivery tokens.
//
// - A forged result without the case's token, or with a wrong one, is dropped (said once per run
//   and reason) and the run's verdict is the real one, in the summary, JSON, JUnit and store.
// - The worker's user can forge the result of a case delivered to it (and, with shared
//   credentials, to any worker using them: it can read the shared reply prefix), and nothing else;
//   a result naming a worker not present in the run is not accepted.
// - The worker's user cannot read a case message without taking it, nor results, events or run
//   keys; it can read manifests, which carry no token. No token appears anywhere but in its case
//   message and its result: not in the manifest, the run records, the events, the reports, the
//   store or the logs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection, type Msg } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, markers, outputOf, readJson, root, waitFor } from "./harness/processes.ts";
import { NO_NATS_ENV } from "./harness/auth-runs.ts";
import { randomSecret } from "./harness/credentials.ts";
import { CASES_STREAM, RESULTS_STREAM, RUNS_BUCKET, RUN_KEYS_BUCKET, caseSubject, eventSubjects, resultSubject, runConsumer, runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL, RunKeyRecordSchema, type ResultMessage } from "../shared/wire/nats.ts";
import { RunTokens, resultSeal } from "../shared/wire/case-token.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { CaseResult } from "../shared/result/result.ts";
import { resultToWire } from "../worker/pool/result-wire.ts";

const CONF = join(root, "deploy", "nats", "evalfleet-permissions.conf");
const FAULTS = fixture("fleet-faults-suite.ts");
const WORKER_INBOX = "_INBOX.evalfleet_worker";
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A passing result for a case of fleet-faults-suite.ts, as a forger would write it. */
function forgedResult(runId: string, index: number, token: string, workerId: string, trial = 1): ResultMessage {
  const name = `case_${String(index).padStart(2, "0")}`;
  const result = new CaseResult({ name, index, tags: [index < 4 ? "first" : "second"], agentId: "steered", output: `done ${name}`, worker: workerId });
  result.score = { value: 1, passed: true, reason: null, detail: null };
  return { v: NATS_PROTOCOL, runId, index, trial, name, workerId, token, result: resultToWire(result, { response: false }) };
}

describe("security: what the shipped worker credentials can and cannot forge or read", () => {
  const passwords = { coordinator: randomSecret("coord-"), worker: randomSecret("worker-") };
  let nats: TestNatsServer;
  const open: NatsConnection[] = [];
  const coordinatorEnv = (): Record<string, string> => ({ ...NO_NATS_ENV, NATS_URL: nats.url, NATS_USER: "evalfleet-coordinator", NATS_PASSWORD: passwords.coordinator });
  const workerEnv = (): Record<string, string> => ({ ...NO_NATS_ENV, NATS_URL: nats.url, NATS_USER: "evalfleet-worker", NATS_PASSWORD: passwords.worker, NATS_INBOX_PREFIX: WORKER_INBOX });
  const asWorker = async (): Promise<NatsConnection> => {
    const nc = await connect({ servers: nats.url, user: "evalfleet-worker", pass: passwords.worker, inboxPrefix: WORKER_INBOX, maxReconnectAttempts: 0, timeout: 5000 });
    open.push(nc);
    return nc;
  };
  const asCoordinator = async (): Promise<NatsConnection> => {
    const nc = await connect({ servers: nats.url, user: "evalfleet-coordinator", pass: passwords.coordinator, maxReconnectAttempts: 0, timeout: 5000 });
    open.push(nc);
    return nc;
  };
  /** The run's delivery tokens, read with the coordinator's credentials (the test's, not the attacker's). */
  const tokensOf = async (runId: string): Promise<RunTokens> => {
    const kv = await new Kvm(jetstream(await asCoordinator())).open(RUN_KEYS_BUCKET);
    const record = RunKeyRecordSchema.parse((await kv.get(runId))!.json());
    return new RunTokens(Buffer.from(record.key, "base64"), runId);
  };

  before(async () => {
    nats = await startNatsServer({
      config: `include ${CONF}\n`,
      env: { EVALFLEET_COORDINATOR_NATS_PASSWORD: passwords.coordinator, EVALFLEET_WORKER_NATS_PASSWORD: passwords.worker },
    });
  });
  after(async () => {
    for (const nc of open) await nc.close().catch(() => undefined);
    await killLeftovers();
    await nats?.stop();
  });

  test("forged passing results without the case's token, or with a wrong one, are dropped: the run's verdict is the real one everywhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-forged-results-"));
    const runId = "forged-results";
    const db = `sqlite:${join(dir, "results.db")}`;
    const files = { json: join(dir, "report.json"), junit: join(dir, "junit.xml") };
    // The agent really fails both cases; the worker holds them until the forgeries are in.
    for (const name of ["case_00", "case_01"]) writeFileSync(join(dir, `fail.${name}`), "");
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "2", "--log-level", "warn"], { ...workerEnv(), ...steer });
    const coordinator = evalfleet(
      ["coordinator", "run", FAULTS, "--run-id", runId, "--name", "case_00", "--name", "case_01", "--db", db, "--json-output", files.json, "--junit", files.junit],
      { ...coordinatorEnv(), ...steer },
    );
    await waitFor(() => markers(dir, "started").length === 2, () => `the worker to hold both cases:\n${worker.stderr}`);

    // The attacker: the worker's credentials, a presence record of its own, and passing results.
    const nc = await asWorker();
    const js = jetstream(nc, { timeout: 5000 });
    const kv = await new Kvm(js).open(RUNS_BUCKET);
    const me = "forger/1";
    await kv.put(runKeys.worker(runId, me), JSON.stringify({ v: NATS_PROTOCOL, workerId: me, host: "forger", pid: 1, fingerprint: "0".repeat(64), accepted: true, reason: null, slots: 1, busy: 0, seenAt: new Date().toISOString() }));
    const guessed = "g".repeat(43);
    for (const index of [0, 1]) {
      // No token: the bare subject, and a body without the field.
      const { token: _none, ...withoutToken } = forgedResult(runId, index, guessed, me);
      await js.publish(`evalfleet.${runId}.results.${index}`, JSON.stringify(withoutToken));
      // A token of the right shape that is not the case's, sealed as a worker would seal it.
      await js.publish(resultSubject(runId, index, resultSeal(guessed)), JSON.stringify(forgedResult(runId, index, guessed, me)));
    }
    await waitFor(() => (coordinator.stderr.match(/dropping result messages that do not prove their delivery/g) ?? []).length === 2, () => `the drops:\n${coordinator.stderr}`);
    writeFileSync(join(dir, "release-all"), "");

    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 1, `the agent fails both cases: ${outputOf(c)}`);
    assert.match(c.stdout, /^0\/2 passed, 2 failed/m);
    const drops = c.stderr.split("\n").filter((l) => /dropping result messages/.test(l)).map((l) => JSON.parse(l).msg as string);
    assert.deepEqual(drops.map((m) => m.replace(/^.*: case \d+: /, "")).sort(), ["it carries no delivery token", "its delivery token is not the case's"], "said once per run and reason");
    const report = readJson(files.json);
    assert.deepEqual(report.cases.map((x: { name: string; passed: boolean; worker: string }) => [x.name, x.passed, x.worker]), [["case_00", false, worker.label], ["case_01", false, worker.label]]);
    assert.equal(report.summary.status, "FAIL");
    assert.match(readFileSync(files.junit, "utf8"), /<testsuite name="fleet-faults" tests="2" failures="2"/);
    const store = await ResultsStore.open(db);
    assert.deepEqual([(await store.findRun(runId)).status, (await store.caseRecords(runId)).map((r) => r.passed)], ["failed", [false, false]]);
    await store.close();
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0);
  });

  test("the worker's user forges only what was delivered to its user, reads no case, result, event or key, and no token leaks anywhere", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-threat-model-"));
    const runId = "threat-model";
    const db = `sqlite:${join(dir, "results.db")}`;
    const files = { json: join(dir, "report.json"), junit: join(dir, "junit.xml") };
    for (const name of ["case_00", "case_01", "case_02"]) writeFileSync(join(dir, `fail.${name}`), "");
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };

    // The attacker listens on the reply prefix every worker of the shared user shares, before anything runs.
    const nc = await asWorker();
    const sniffed: Msg[] = [];
    // (A delivered case keeps its own subject: the server sends it to the requester's reply subject.)
    nc.subscribe(`${WORKER_INBOX}.>`, { callback: (_err, msg) => void (msg.data.length > 0 && sniffed.push(msg)) });
    // The test watches the live events with the coordinator's user (the attacker may not: below).
    const events: string[] = [];
    (await asCoordinator()).subscribe(eventSubjects(runId), { callback: (_err, msg) => void events.push(msg.string()) });

    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "1", "--log-level", "debug"], { ...workerEnv(), ...steer });
    const coordinator = evalfleet(
      ["coordinator", "run", FAULTS, "--run-id", runId, "--name", "case_00", "--name", "case_01", "--name", "case_02", "--db", db, "--json-output", files.json, "--junit", files.junit, "-v"],
      { ...coordinatorEnv(), ...steer },
    );
    // The real worker holds case_00 (one slot); case_01 and case_02 wait in the queue.
    await waitFor(() => markers(dir, "started").length === 1, () => `the worker to hold case_00:\n${worker.stderr}`);
    const tokens = await tokensOf(runId);

    const js = jetstream(nc, { timeout: 5000 });
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const kv = await new Kvm(js).open(RUNS_BUCKET);
    const denied = async (what: string, subject: string, attempt: () => Promise<unknown>): Promise<void> => {
      await assert.rejects(attempt, (err: Error) => {
        // A direct get's subject goes on with the subject asked for.
        assert.match(err.message, new RegExp(`Permissions Violation for (Publish|Subscription) to "${escape(subject)}(\\.[^"]+)?"`), what);
        return true;
      }, `${what} is refused`);
    };
    // Reading a case without taking it: no message get, no direct get on the cases stream.
    await denied("a message get on EVALFLEET_CASES", `$JS.API.STREAM.MSG.GET.${CASES_STREAM}`, () => jsm.streams.getMessage(CASES_STREAM, { last_by_subj: caseSubject(runId, 1) }));
    await denied("a direct get on EVALFLEET_CASES", `$JS.API.DIRECT.GET.${CASES_STREAM}`, () => jsm.direct.getMessage(CASES_STREAM, { last_by_subj: caseSubject(runId, 1) }));
    // Reading results: no get of either kind, no consumer, no subscription.
    await denied("a message get on EVALFLEET_RESULTS", `$JS.API.STREAM.MSG.GET.${RESULTS_STREAM}`, () => jsm.streams.getMessage(RESULTS_STREAM, { seq: 1 }));
    await denied("a direct get on EVALFLEET_RESULTS", `$JS.API.DIRECT.GET.${RESULTS_STREAM}`, () => jsm.direct.getMessage(RESULTS_STREAM, { seq: 1 }));
    await denied("a consumer of EVALFLEET_RESULTS", `$JS.API.CONSUMER.CREATE.${RESULTS_STREAM}.peek.evalfleet.*.results.*`, () =>
      jsm.consumers.add(RESULTS_STREAM, { durable_name: "peek", ack_policy: AckPolicy.None, filter_subject: "evalfleet.*.results.*" }),
    );
    // Events and results on core NATS: the subscription is refused (the server says so to the subscription).
    for (const subject of ["evalfleet.*.results.*", eventSubjects(runId)]) {
      const refused = new Promise<string>((resolve) => nc.subscribe(subject, { callback: (err) => void (err && resolve(err.message)) }));
      const said = await Promise.race([refused, new Promise<string>((r) => setTimeout(() => r("no refusal within 5 s"), 5000))]);
      assert.match(said, new RegExp(`Permissions Violation for Subscription to "${escape(subject)}"`), `subscribing to ${subject}`);
    }
    // The run keys: no stream info, no get of either kind, no watcher.
    await denied("the stream info of EVALFLEET_RUN_KEYS", `$JS.API.STREAM.INFO.KV_${RUN_KEYS_BUCKET}`, () => jsm.streams.info(`KV_${RUN_KEYS_BUCKET}`));
    await denied("reading a run key through the KV API", `$JS.API.STREAM.MSG.GET.KV_${RUN_KEYS_BUCKET}`, async () => (await new Kvm(js).open(RUN_KEYS_BUCKET)).get(runId));
    await denied("watching the run keys", `$JS.API.CONSUMER.CREATE.KV_${RUN_KEYS_BUCKET}`, async () => (await new Kvm(js).open(RUN_KEYS_BUCKET)).watch());
    await denied("a direct get of a run key", `$JS.API.DIRECT.GET.KV_${RUN_KEYS_BUCKET}.$KV.${RUN_KEYS_BUCKET}.${runId}`, () => jsm.direct.getMessage(`KV_${RUN_KEYS_BUCKET}`, { last_by_subj: `$KV.${RUN_KEYS_BUCKET}.${runId}` }));
    await denied("a message get of a run key", `$JS.API.STREAM.MSG.GET.KV_${RUN_KEYS_BUCKET}`, () => jsm.streams.getMessage(`KV_${RUN_KEYS_BUCKET}`, { last_by_subj: `$KV.${RUN_KEYS_BUCKET}.${runId}` }));
    await denied("cancelling the run", `$KV.${RUNS_BUCKET}.${runKeys.cancel(runId)}`, () => kv.create(runKeys.cancel(runId), JSON.stringify({ v: NATS_PROTOCOL, at: "now", by: "a worker", reason: "mischief" })));
    await denied("purging the run's queue", `$JS.API.STREAM.PURGE.${CASES_STREAM}`, () => jsm.streams.purge(CASES_STREAM, { filter: `evalfleet.${runId}.cases.*` }));
    // Manifests are readable, and carry no secret.
    const manifest = (await kv.get(runKeys.manifest(runId)))!.string();
    assert.match(manifest, new RegExp(`"runId":"${runId}"`));

    // Shared credentials: the case delivered to the real worker went through the shared reply
    // prefix, token and all; the attacker saw it. It is the same user: "delivered to it".
    await waitFor(() => sniffed.some((m) => m.string().includes(tokens.token(0))), "the real worker's delivery of case_00 on the shared reply prefix");

    // A case delivered to the attacker (it takes case_01 and case_02 from the run's queue): it can
    // answer them. Its answer for case_01 names a worker present in the run (it wrote a presence
    // record, which the shared user may): accepted, a forgery the model allows. Its answer for
    // case_02 names a worker that never joined: not accepted.
    const me = "forger/1";
    await kv.put(runKeys.worker(runId, me), JSON.stringify({ v: NATS_PROTOCOL, workerId: me, host: "forger", pid: 1, fingerprint: "0".repeat(64), accepted: true, reason: null, slots: 2, busy: 0, seenAt: new Date().toISOString() }));
    const consumer = await js.consumers.get(CASES_STREAM, runConsumer(runId));
    const taken = [];
    for await (const m of await consumer.fetch({ max_messages: 2, expires: 5000 })) taken.push(m);
    assert.deepEqual(taken.map((m) => m.subject).sort(), [caseSubject(runId, 1), caseSubject(runId, 2)]);
    for (const m of taken) {
      const c = m.json<{ index: number; token: string }>();
      assert.equal(c.token, tokens.token(c.index), "the case message carries the case's token");
      await js.publish(resultSubject(runId, c.index, resultSeal(c.token)), JSON.stringify(forgedResult(runId, c.index, c.token, c.index === 1 ? me : "ghost/7")));
      m.ack();
    }
    writeFileSync(join(dir, "release-all"), "");

    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 1, outputOf(c));
    const report = readJson(files.json);
    assert.deepEqual(
      report.cases.map((x: { name: string; passed: boolean; worker: string; error: string | null }) => [x.name, x.passed, x.worker, x.error]),
      [
        ["case_00", false, worker.label, null],
        ["case_01", true, me, null],
        ["case_02", false, null, "worker: result from worker ghost/7, which is not present in the run"],
      ],
    );
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0);

    // The tokens appear nowhere but in their case messages and results.
    const store = await ResultsStore.open(db);
    const recorded = JSON.stringify([await store.findRun(runId), await store.caseRecords(runId)]);
    await store.close();
    const coordinatorKv = await new Kvm(jetstream(await asCoordinator())).open(RUNS_BUCKET);
    const records: string[] = [];
    for await (const key of await coordinatorKv.keys(`${runId}.>`)) records.push((await coordinatorKv.get(key))?.string() ?? "");
    const places: Record<string, string> = {
      manifest,
      "run records": records.join("\n"),
      events: events.join("\n"),
      "JSON report": readFileSync(files.json, "utf8"),
      "JUnit report": readFileSync(files.junit, "utf8"),
      store: recorded + readFileSync(join(dir, "results.db")).toString("latin1"),
      "coordinator output": c.stdout + c.stderr,
      "worker log": worker.stderr + worker.stdout,
    };
    assert.ok(events.length > 0 && records.length >= 3, "there was something to look at");
    for (const [where, text] of Object.entries(places)) {
      for (const index of [0, 1, 2]) assert.ok(!text.includes(tokens.token(index)), `case ${index}'s token is not in the ${where}`);
    }
  });
  test("trials: the holder of one trial's delivery answers that trial only, once; a sibling trial or an unplanned one is dropped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-forged-trials-"));
    const runId = "forged-trials";
    const json = join(dir, "report.json");
    // The agent really fails every trial: a passing trial in the report is the forger's.
    for (const name of ["case_00", "case_01"]) writeFileSync(join(dir, `fail.${name}`), "");
    const steer = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    // Three slots for four trials: the real worker holds three, the forger takes the fourth.
    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "3", "--log-level", "warn"], { ...workerEnv(), ...steer });
    const coordinator = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--name", "case_00", "--name", "case_01", "--repeat", "2", "--json-output", json], { ...coordinatorEnv(), ...steer });
    await waitFor(() => markers(dir, "started").length === 3, () => `the worker to hold three trials:\n${worker.stderr}`, 60_000);
    const tokens = await tokensOf(runId);

    const nc = await asWorker();
    const js = jetstream(nc, { timeout: 5000 });
    const kv = await new Kvm(js).open(RUNS_BUCKET);
    const me = "forger/2";
    await kv.put(runKeys.worker(runId, me), JSON.stringify({ v: NATS_PROTOCOL, workerId: me, host: "forger", pid: 2, fingerprint: "0".repeat(64), accepted: true, reason: null, slots: 1, busy: 0, seenAt: new Date().toISOString() }));
    const consumer = await js.consumers.get(CASES_STREAM, runConsumer(runId));
    const taken = [];
    for await (const m of await consumer.fetch({ max_messages: 1, expires: 5000 })) taken.push(m);
    assert.equal(taken.length, 1, "the fourth trial was delivered to the forger");
    const delivered = taken[0]!.json<{ index: number; trial: number; token: string }>();
    const { index, trial, token } = delivered;
    assert.equal(token, tokens.token(index, trial), "the delivery carries its own trial's token");
    const sibling = trial === 1 ? 2 : 1;
    assert.notEqual(token, tokens.token(index, sibling), "each trial has a token of its own");
    const seal = resultSeal(token);
    // The sibling trial, with the delivered trial's token: on the sibling's subject, and in the body.
    await js.publish(resultSubject(runId, index, seal, sibling), JSON.stringify(forgedResult(runId, index, token, me, sibling)));
    // A trial the run never planned (--repeat 2), sealed with the only token the forger has.
    await js.publish(resultSubject(runId, index, seal, 9), JSON.stringify(forgedResult(runId, index, token, me, 9)));
    // Its own trial, twice: the first answer counts, the second is a duplicate.
    await js.publish(resultSubject(runId, index, seal, trial), JSON.stringify(forgedResult(runId, index, token, me, trial)));
    await js.publish(resultSubject(runId, index, seal, trial), JSON.stringify({ ...forgedResult(runId, index, token, me, trial), workerId: worker.label }));
    taken[0]!.ack();
    await waitFor(() => /dropping result messages that do not prove their delivery/.test(coordinator.stderr), () => `the drop:\n${coordinator.stderr}`);
    writeFileSync(join(dir, "release-all"), "");

    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 1, `every real trial fails: ${outputOf(c)}`);
    const drops = c.stderr.split("\n").filter((l) => /dropping result messages/.test(l)).map((l) => JSON.parse(l).msg as string);
    assert.equal(drops.length, 1, `said once per run and reason: ${drops.join(" | ")}`);
    assert.match(drops[0]!, /its delivery token is not the case's/);
    const report = readJson(json);
    assert.deepEqual(report.cases.map((x: { name: string }) => x.name), ["case_00", "case_01"]);
    for (const x of report.cases as Array<{ index: number; passed: boolean; repeats: Array<{ repeat: number; passed: boolean; worker: string | null }> }>) {
      assert.deepEqual(x.repeats.map((t) => t.repeat), [1, 2], `case ${x.index}: each planned trial once, and no trial 9`);
      for (const t of x.repeats) {
        const forged = x.index === index && t.repeat === trial;
        assert.deepEqual([t.passed, t.worker], forged ? [true, me] : [false, worker.label], `case ${x.index} trial ${t.repeat}`);
      }
      assert.equal(x.passed, false, "a forged trial does not carry its case (every trial must pass)");
    }
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0);
  });
});
