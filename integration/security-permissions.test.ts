// Least privilege: deploy/nats/evalfleet-permissions.conf, the very file deploy/ ships, on a real
// nats-server. A worker and a coordinator with its two users complete a run (the worker started
// first, on a server where nothing exists yet: it may not create the streams, so it waits for the
// coordinator to), and the worker's user is refused what a worker must never do: publish a case,
// purge the cases stream, cancel a run, write a run's records, create or delete a consumer of the
// cases stream. deploy/nats/values.yaml must grant the Helm chart's users exactly the same.
import { startScriptedOpenAI } from "../test/support/openai-server.ts";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, root, waitFor } from "./harness/processes.ts";
import { NO_NATS_ENV } from "./harness/auth-runs.ts";
import { randomSecret } from "./harness/credentials.ts";
import { CASES_STREAM, CASSETTE_BUCKET, RUNS_BUCKET, caseSubject, caseSubjects, runConsumer, runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL } from "../shared/wire/nats.ts";

const CONF = join(root, "deploy", "nats", "evalfleet-permissions.conf");
const VALUES = join(root, "deploy", "nats", "values.yaml");
const BASIC = fixture("basic-suite.ts");
const PROVIDERS = fixture("provider-suite.ts");
const CASSETTES = fixture("fleet-cassette-suite.ts");
/** The reply prefix the file lets workers subscribe to. */
const WORKER_INBOX = "_INBOX.evalfleet_worker";

describe("security: the least-privilege NATS users deploy/ ships", () => {
  const passwords = { coordinator: randomSecret("coord-"), worker: randomSecret("worker-") };
  let nats: TestNatsServer;
  let asWorker: NatsConnection;
  const coordinatorEnv = (): Record<string, string> => ({ ...NO_NATS_ENV, NATS_URL: nats.url, NATS_USER: "evalfleet-coordinator", NATS_PASSWORD: passwords.coordinator });
  const workerEnv = (): Record<string, string> => ({ ...NO_NATS_ENV, NATS_URL: nats.url, NATS_USER: "evalfleet-worker", NATS_PASSWORD: passwords.worker, NATS_INBOX_PREFIX: WORKER_INBOX });

  before(async () => {
    // Exactly the shipped file: included, with the passwords it names taken from the server's environment.
    nats = await startNatsServer({
      config: `include ${CONF}\n`,
      env: { EVALFLEET_COORDINATOR_NATS_PASSWORD: passwords.coordinator, EVALFLEET_WORKER_NATS_PASSWORD: passwords.worker },
    });
  });
  after(async () => {
    await asWorker?.close().catch(() => undefined);
    await killLeftovers();
    await nats?.stop();
  });

  test("a worker (started first, on a fresh server) and a coordinator complete a run with their own users", async () => {
    const runId = "least-privilege";
    const worker = evalfleet(["worker", BASIC, "--run", runId, "--threads", "1", "--log-level", "info"], workerEnv());
    await waitFor(
      () => /stream EVALFLEET_CASES does not exist yet and this NATS user may not create it: waiting for a coordinator to create it/.test(worker.stderr),
      () => `the worker to wait for the streams:\n${worker.stderr}`,
    );
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-perm-"));
    const c = await exitOf(evalfleet(["coordinator", "run", BASIC, "--run-id", runId, "--name", "alpha", "--name", "beta", "--json-output", join(dir, "r.json")], coordinatorEnv()), "the coordinator", 90_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /^2\/2 passed/m);
    assert.deepEqual(readJson(join(dir, "r.json")).cases.map((x: { worker: string }) => x.worker), [worker.label, worker.label]);
    const w = await exitOf(worker, "the worker", 30_000);
    assert.equal(w.code, 0, w.stderr);
    assert.doesNotMatch(w.stderr, /Permissions Violation/i, "the worker did nothing it is not allowed to, once the streams existed");

    // The coordinator's user serves `coordinator status` too.
    const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], coordinatorEnv()), "coordinator status", 30_000);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    assert.equal(JSON.parse(s.stdout).phase, "completed");
  });

  test("the worker's user is refused publishing a case, purging, cancelling, writing run records and managing consumers of the cases stream", async () => {
    asWorker = await connect({ servers: nats.url, user: "evalfleet-worker", pass: passwords.worker, inboxPrefix: WORKER_INBOX, maxReconnectAttempts: 0, timeout: 5000 });
    const js = jetstream(asWorker, { timeout: 5000 });
    const jsm = await jetstreamManager(asWorker, { timeout: 5000 });
    const kv = await new Kvm(js).open(RUNS_BUCKET);
    const runId = "least-privilege";
    const denied = async (what: string, subject: string, attempt: () => Promise<unknown>): Promise<void> => {
      await assert.rejects(attempt, (err: Error) => {
        assert.match(err.message, new RegExp(`^Permissions Violation for Publish to "${subject.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"$`), what);
        return true;
      }, `${what} is refused`);
    };
    const forgedCase = JSON.stringify({ v: NATS_PROTOCOL, runId, index: 0, name: "alpha", fingerprint: "0".repeat(64) });
    await denied("publishing a case message", caseSubject(runId, 0), () => js.publish(caseSubject(runId, 0), forgedCase));
    await denied("purging EVALFLEET_CASES", `$JS.API.STREAM.PURGE.${CASES_STREAM}`, () => jsm.streams.purge(CASES_STREAM, { filter: caseSubjects(runId) }));
    await denied("creating the cancel key", `$KV.${RUNS_BUCKET}.${runKeys.cancel(runId)}`, () => kv.create(runKeys.cancel(runId), JSON.stringify({ v: NATS_PROTOCOL, at: "now", by: "a worker", reason: "mischief" })));
    await denied("writing the run's state", `$KV.${RUNS_BUCKET}.${runKeys.state(runId)}`, () => kv.put(runKeys.state(runId), "{}"));
    await denied("writing a manifest", `$KV.${RUNS_BUCKET}.${runKeys.manifest("another-run")}`, () => kv.put(runKeys.manifest("another-run"), "{}"));
    await denied("creating a consumer of EVALFLEET_CASES", `$JS.API.CONSUMER.CREATE.${CASES_STREAM}.thief.evalfleet.*.cases.*`, () =>
      jsm.consumers.add(CASES_STREAM, { durable_name: "thief", ack_policy: AckPolicy.Explicit, filter_subject: "evalfleet.*.cases.*" }),
    );
    await denied("deleting a run's consumer", `$JS.API.CONSUMER.DELETE.${CASES_STREAM}.${runConsumer(runId)}`, () => jsm.consumers.delete(CASES_STREAM, runConsumer(runId)));
    // Not a blanket refusal: what a worker needs still works for the same connection.
    assert.equal((await kv.get(runKeys.state(runId)))?.json<{ phase: string }>().phase, "completed", "reading the run's state");
    await kv.put(runKeys.worker(runId, "probe"), JSON.stringify({ v: NATS_PROTOCOL }));
  });

  test("provider permits with the shipped users: the worker asks on evalfleet.<run>.limits.acquire and is answered on its own inbox", async () => {
    const model = await startScriptedOpenAI();
    try {
      model.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
      const runId = "least-privilege-permits";
      const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-test-permits-0123456789", PROVIDER_CASES: "3" };
      const worker = evalfleet(["worker", PROVIDERS, "--run", runId, "--threads", "1", "--log-level", "info"], { ...workerEnv(), ...env });
      const key = `127.0.0.1:${model.port}:gpt-5-mini`;
      const c = await exitOf(evalfleet(["coordinator", "run", PROVIDERS, "--run-id", runId, "--limit", `${key}=rpm:600`], { ...coordinatorEnv(), ...env }), "the coordinator", 90_000);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      const w = await exitOf(worker, "the worker", 30_000);
      assert.doesNotMatch(w.stderr, /Permissions Violation|grants no provider permits/i, "the permits came from the coordinator, within the worker's permissions");
      assert.doesNotMatch(c.stderr, /Permissions Violation/i);
      const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], coordinatorEnv()), "coordinator status", 30_000);
      const providers = JSON.parse(s.stdout).providers as Array<{ key: string; admitted: number }>;
      assert.deepEqual(providers.map((p) => [p.key, p.admitted]), [[key, 3]]);
    } finally {
      await model.close();
    }
  });

  test("a run with a budget with the shipped users: the worker asks on evalfleet.<run>.starts, is answered, and is refused once the budget is spent", async () => {
    const model = await startScriptedOpenAI();
    try {
      model.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
      const runId = "least-privilege-budget";
      // 168 tokens a case (agent 150, judge 18), one at a time: spent after the 3rd result.
      const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: "sk-test-budget-0123456789", PROVIDER_CASES: "12", PROVIDER_AGENT_USAGE: "100,50", PROVIDER_AGENT_MODEL: "gpt-5-mini" };
      const worker = evalfleet(["worker", PROVIDERS, "--run", runId, "--threads", "1", "--concurrency", "1", "--log-level", "info"], { ...workerEnv(), ...env });
      const report = join(mkdtempSync(join(tmpdir(), "evalfleet-sec-perm-")), "r.json");
      const c = await exitOf(evalfleet(["coordinator", "run", PROVIDERS, "--run-id", runId, "--budget-tokens", "500", "--json-output", report], { ...coordinatorEnv(), ...env }), "the coordinator", 90_000);
      assert.equal(c.code, 3, c.stdout + c.stderr);
      const w = await exitOf(worker, "the worker", 30_000);
      assert.doesNotMatch(w.stderr, /Permissions Violation|did not answer whether a case may start/i, "the coordinator answered, within both users' permissions");
      assert.doesNotMatch(c.stderr, /Permissions Violation/i);
      const json = readJson(report) as { summary: { budget: { exhausted: boolean }; tokens: { total: number } }; cases: Array<{ skipped: boolean; error: string | null }> };
      assert.equal(json.summary.budget.exhausted, true);
      // The run told its workers to ask (a worker may read the manifest).
      const asker = await connect({ servers: nats.url, user: "evalfleet-worker", pass: passwords.worker, inboxPrefix: WORKER_INBOX, maxReconnectAttempts: 0, timeout: 5000 });
      try {
        const manifest = await (await new Kvm(jetstream(asker)).open(RUNS_BUCKET)).get(runKeys.manifest(runId));
        assert.equal(manifest?.json<{ startGate: boolean }>().startGate, true);
      } finally {
        await asker.close();
      }
      // One worker at --concurrency 1: the case in flight when the 3rd result was counted, at most.
      assert.ok(json.summary.tokens.total >= 500 && json.summary.tokens.total <= 3 * 168 + 168, String(json.summary.tokens.total));
      assert.ok(json.cases.filter((x) => x.skipped && x.error === "skipped: budget exhausted").length >= 8);
    } finally {
      await model.close();
    }
  });

  test("the fleet's cassettes with the shipped users: a worker records into EVALFLEET_CASSETTES and replays from it, and may not create or delete the bucket", async () => {
    let hits = 0;
    const service = createServer((req, res) => {
      hits++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tempC: 20.4, served: hits }));
    });
    await new Promise<void>((r) => service.listen(0, "127.0.0.1", r));
    try {
      const env = { EVALFLEET_TEST_HTTP: `http://127.0.0.1:${(service.address() as AddressInfo).port}` };
      const run = async (runId: string, flags: string[]) => {
        const worker = evalfleet(["worker", CASSETTES, "--run", runId, "--threads", "1", "--concurrency", "2", "--log-level", "warn"], { ...workerEnv(), ...env });
        const report = join(mkdtempSync(join(tmpdir(), "evalfleet-sec-perm-tapes-")), "r.json");
        const c = await exitOf(evalfleet(["coordinator", "run", CASSETTES, "--run-id", runId, ...flags, "--json-output", report], { ...coordinatorEnv(), ...env }), "the coordinator", 90_000);
        const w = await exitOf(worker, "the worker", 30_000);
        assert.equal(c.code, 0, c.stdout + c.stderr + w.stderr);
        for (const out of [c.stderr, w.stderr]) assert.doesNotMatch(out, /Permissions Violation/i);
        return readJson(report) as { cases: Array<{ name: string; output: string; passed: boolean }> };
      };
      await run("least-privilege-record-1", ["--record", "nats"]);
      assert.equal(hits, 6);
      // Recording again replaces each cassette (the old object's chunks go).
      const recorded = await run("least-privilege-record", ["--record", "nats"]);
      assert.equal(hits, 12);
      hits = 0;
      const replayed = await run("least-privilege-replay", ["--replay", "nats"]);
      assert.equal(hits, 0, "replayed from the bucket, nothing sent");
      assert.deepEqual(replayed.cases.map((x) => x.output), recorded.cases.map((x) => x.output));
      // The bucket is the coordinator's to create and remove; its objects are every worker's.
      const nc = await connect({ servers: nats.url, user: "evalfleet-worker", pass: passwords.worker, inboxPrefix: WORKER_INBOX, maxReconnectAttempts: 0, timeout: 5000 });
      try {
        const jsm = await jetstreamManager(nc, { timeout: 5000 });
        // Re-recording left no old chunks behind: one chunk and one meta per case.
        assert.equal((await jsm.streams.info(`OBJ_${CASSETTE_BUCKET}`)).state.messages, 12);
        assert.equal((await new Objm(jetstream(nc, { timeout: 5000 })).open(CASSETTE_BUCKET).then((os) => os.list())).length, 6);
        await assert.rejects(() => jsm.streams.delete(`OBJ_${CASSETTE_BUCKET}`), /Permissions Violation for Publish to "\$JS\.API\.STREAM\.DELETE\.OBJ_EVALFLEET_CASSETTES"/);
        await assert.rejects(() => jsm.streams.add({ name: "OBJ_OTHER", subjects: ["$O.OTHER.>"] }), /Permissions Violation for Publish to "\$JS\.API\.STREAM\.CREATE\.OBJ_OTHER"/);
      } finally {
        await nc.close();
      }
    } finally {
      await new Promise<void>((r) => service.close(() => r()));
    }
  });

  test("a worker that does not use its reply prefix is told which option to set", async () => {
    const env = { ...workerEnv(), NATS_INBOX_PREFIX: "" };
    const r = await exitOf(evalfleet(["worker", BASIC, "--run", "no-prefix", "--log-level", "warn"], env), "the worker without its prefix", 30_000);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^worker: the NATS user may not use JetStream on .*: Permissions Violation for Subscription to "_INBOX\.[^"]+" \(if the server allows this user only its own reply prefix, set --nats-inbox-prefix or NATS_INBOX_PREFIX to it\)$/m);
  });

  test("deploy/nats/values.yaml gives the Helm chart's least-privilege users exactly the file's permissions", () => {
    const conf = parseNatsConf(readFileSync(CONF, "utf8"));
    const fromConf = (conf.accounts as any).EVALFLEET;
    const values = parseYaml(readFileSync(VALUES, "utf8")) as any;
    const fromValues = values.config.merge.accounts.EVALFLEET;
    assert.equal(fromConf.jetstream, "enabled");
    assert.equal(fromValues.jetstream, "enabled");
    // The chart spells a server variable << $NAME >>; the file, $NAME.
    const chartUsers = (fromValues.users as any[])
      .filter((u) => u.permissions)
      .map((u) => ({ ...u, password: { env: /^<< \$(\w+) >>$/.exec(u.password)?.[1] } }));
    assert.deepEqual(chartUsers, fromConf.users);
    assert.deepEqual(fromConf.users.map((u: { user: string }) => u.user), ["evalfleet-coordinator", "evalfleet-worker"]);
    // Every password comes from the server's environment, none is written down.
    for (const u of fromConf.users) assert.ok(u.password.env, `${u.user}: the password is a variable`);
    // The Helm chart passes those variables from the nats-evalfleet Secret.
    for (const u of fromConf.users) assert.ok(values.container.env[u.password.env]?.valueFrom?.secretKeyRef, `values.yaml sets ${u.password.env} from a Secret`);
  });
});

/**
 * The subset of the NATS configuration format that deploy/nats/evalfleet-permissions.conf uses:
 * `#` comments, `key: value`, `key = value` and `key { ... }` entries, blocks, arrays (items
 * separated by commas or newlines), quoted strings, bare words, and `$NAME` references: resolved
 * when the file defines NAME, else `{ env: NAME }` (the server reads it from its environment).
 */
function parseNatsConf(text: string): Record<string, unknown> {
  const tokens = [...text.replace(/(^|\s)#.*$/gm, "$1").matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|([{}[\],:=;])|([^\s{}[\],:=;"']+)/g)].map((m) =>
    m[1] !== undefined ? { str: JSON.parse(`"${m[1]}"`) as string } : m[2] !== undefined ? { str: m[2] } : m[3] !== undefined ? { punct: m[3] } : { word: m[4]! },
  );
  let i = 0;
  const vars: Record<string, unknown> = {};
  const peek = (): (typeof tokens)[number] | undefined => tokens[i];
  const skipSeparators = (): void => {
    while (peek()?.punct === "," || peek()?.punct === ";") i++;
  };
  const value = (): unknown => {
    const t = tokens[i++];
    if (!t) throw new Error("unexpected end of the configuration");
    if (t.punct === "{") return entries("}");
    if (t.punct === "[") {
      const list: unknown[] = [];
      for (skipSeparators(); peek()?.punct !== "]"; skipSeparators()) list.push(value());
      i++;
      return list;
    }
    if (t.str !== undefined) return t.str;
    if (t.word?.startsWith("$")) return t.word.slice(1) in vars ? vars[t.word.slice(1)] : { env: t.word.slice(1) };
    // NATS's booleans (`allow_responses: true`).
    if (t.word === "true" || t.word === "false") return t.word === "true";
    if (t.word !== undefined) return t.word;
    throw new Error(`unexpected '${t.punct}' in the configuration`);
  };
  const entries = (close: string | null): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (skipSeparators(); i < tokens.length && peek()?.punct !== close; skipSeparators()) {
      const key = tokens[i++]!;
      const name = key.word ?? key.str;
      if (name === undefined) throw new Error(`expected a key, got '${key.punct}'`);
      if (peek()?.punct === ":" || peek()?.punct === "=") i++;
      out[name] = value();
      if (close === null) vars[name] = out[name];
    }
    if (close !== null) i++;
    return out;
  };
  return entries(null);
}
