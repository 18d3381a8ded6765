// Secrets never leave, through any output (issue 15). First, logs: a coordinator and two workers
// authenticate with a password (the coordinator's in its URL, nats://user:password@host; one
// worker's by flags) and an NKey seed, with an OpenAI-style API key in every environment and
// --log-level debug. The suite's judged case calls a model server that refuses the key and echoes
// it back (the reason lands in the debug log), and two more clients fail with wrong passwords.
// Then results: a suite whose cases put the model key (and the NATS token) in an output, an agent
// error, a scorer reason, a teardown error and a stream that splits it across two events, and a
// suite that throws at import with the key in its message, run locally and distributed (with a
// NATS token). Every byte the processes write, the JSON report, the JUnit file, the SQLite store
// (read back), the HTML report and, distributed, every NATS message are searched for every
// secret, and for any 12-character piece of one.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, type Proc } from "./harness/processes.ts";
import { NO_NATS_ENV, assertOneLineRefusal } from "./harness/auth-runs.ts";
import { makeNkeyUser, randomSecret } from "./harness/credentials.ts";
import Database from "better-sqlite3";
import { connect } from "@nats-io/transport-node";
import { createLogger } from "../shared/logger.ts";
import { registerSecret } from "../shared/redaction/secrets.ts";

const SUITE = fixture("security-secrets-suite.ts");
const LEAKY = fixture("secret-leak-suite.ts");
const IMPORT_ERROR = fixture("secret-import-error-suite.ts");

/** Any `size`-character piece of `secret` found in `text` (a partial leak counts), or null. */
function leakedPiece(text: string, secret: string, size = 12): string | null {
  for (let i = 0; i + size <= secret.length; i++) if (text.includes(secret.slice(i, i + size))) return secret.slice(i, i + size);
  return null;
}

describe("security: secrets never reach logs, errors or reports", () => {
  let nats: TestNatsServer;
  let modelServer: Server;
  let modelUrl: string;
  const authorizations: string[] = [];

  before(async () => {
    // A model server that refuses every key and echoes it, and the Authorization header, back.
    modelServer = createServer((req, res) => {
      const auth = req.headers.authorization ?? "";
      authorizations.push(auth);
      req.resume();
      req.on("end", () => {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth.replace(/^Bearer /, "")} (header: ${auth})`, type: "invalid_request_error", code: "invalid_api_key" } }));
      });
    });
    await new Promise<void>((r) => modelServer.listen(0, "127.0.0.1", r));
    modelUrl = `http://127.0.0.1:${(modelServer.address() as { port: number }).port}/v1`;
  });
  after(async () => {
    await killLeftovers();
    await nats?.stop();
    await new Promise((r) => modelServer?.close(r));
  });

  test("password, NKey seed and API key appear nowhere in stdout, stderr, the JSON report or JUnit, at debug level", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-secrets-"));
    const password = randomSecret("pw-");
    const nkey = makeNkeyUser(dir, "worker");
    const apiKey = `sk-${randomSecret("", 24)}`;
    const wrongUrlPassword = randomSecret("pw-");
    const wrongEnvPassword = randomSecret("pw-");
    nats = await startNatsServer({ config: `authorization { users: [ { user: "alice", password: "${password}" }, { nkey: ${nkey.publicKey} } ] }` });
    const port = new URL(nats.url.replace(/^nats:/, "http:")).port;
    const urlWith = (pw: string): string => `nats://alice:${encodeURIComponent(pw)}@127.0.0.1:${port}`;
    const base = { ...NO_NATS_ENV, OPENAI_API_KEY: apiKey, OPENAI_BASE_URL: modelUrl };
    const runId = "secrets";
    const report = join(dir, "report.json");
    const junit = join(dir, "junit.xml");

    const procs: Proc[] = [
      evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--log-level", "debug"], { ...base, NATS_URL: nats.url, NATS_NKEY: nkey.seedFile }),
      evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--log-level", "debug", "--nats", nats.url, "--nats-user", "alice", "--nats-password", password], base),
    ];
    const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", runId, "--nats", urlWith(password), "--log-level", "debug", "-v", "--json-output", report, "--junit", junit], base);
    const wrongUrl = evalfleet(["coordinator", "run", SUITE, "--run-id", "wrong-url", "--nats", urlWith(wrongUrlPassword), "--log-level", "debug"], base);
    const wrongEnv = evalfleet(["worker", SUITE, "--run", "wrong-env", "--log-level", "debug"], { ...base, NATS_URL: nats.url, NATS_USER: "alice", NATS_PASSWORD: wrongEnvPassword });
    procs.push(coordinator, wrongUrl, wrongEnv);

    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 1, `the judged case fails (the model refused the key): ${c.stdout}${c.stderr}`);
    for (const w of procs.slice(0, 2)) assert.equal((await exitOf(w, "a worker", 30_000)).code, 0, w.stderr);
    const refusedAlice = /Authorization Violation: the server refused user 'alice' with the given password/;
    assertOneLineRefusal(await exitOf(wrongUrl, "the coordinator with a wrong password in its URL", 30_000), refusedAlice, "wrong password in the URL");
    assertOneLineRefusal(await exitOf(wrongEnv, "the worker with a wrong NATS_PASSWORD", 30_000), refusedAlice, "wrong NATS_PASSWORD");

    // The paths that could leak were taken: the judge sent the key, the server echoed it, the
    // reason was logged at debug, the URL's credentials authenticated the coordinator.
    assert.ok(authorizations.includes(`Bearer ${apiKey}`), "the default judge called the model server with the key");
    const report_ = readJson(report);
    assert.deepEqual(report_.cases.map((x: { name: string; error: string | null }) => [x.name, x.error]), [["judged", "judge: returned no result"], ["plain", null]]);
    const workerLogs = procs.slice(0, 2).map((p) => p.stderr).join("");
    assert.match(workerLogs, /"msg":"judge returned no result"/, "the judge's failure reason is in a worker's debug log");
    assert.match(workerLogs, /\[REDACTED\]/, "and it was redacted there");
    assert.match(c.stdout, /worker .* joined/);

    const texts: Array<[string, string]> = [
      ...procs.flatMap((p): Array<[string, string]> => [[`stdout of pid ${p.pid}`, p.stdout], [`stderr of pid ${p.pid}`, p.stderr]]),
      ["the JSON report", readFileSync(report, "utf8")],
      ["the JUnit file", readFileSync(junit, "utf8")],
    ];
    const secrets: Array<[string, string]> = [
      ["the password", password],
      ["the wrong password in a URL", wrongUrlPassword],
      ["the wrong NATS_PASSWORD", wrongEnvPassword],
      ["the NKey seed", nkey.seed],
      ["the API key", apiKey],
    ];
    for (const [where, text] of texts) {
      for (const [what, secret] of secrets) {
        const piece = leakedPiece(text, secret);
        assert.equal(piece, null, `${what} leaks into ${where} ('${piece}')`);
      }
    }
  });

  test("the logger scrubs every line: registered secrets and secret environment variables in any field or message, URL credentials, keys, seeds", () => {
    const registered = randomSecret("reg-");
    const fromEnv = randomSecret("env-");
    const seed = makeNkeyUser(mkdtempSync(join(tmpdir(), "evalfleet-sec-log-")), "x").seed;
    process.env.EVALFLEET_SECURITY_TEST_TOKEN = fromEnv;
    registerSecret(registered);
    const lines: string[] = [];
    const log = createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(s) } });
    delete process.env.EVALFLEET_SECURITY_TEST_TOKEN;
    // None of these field names is on the redaction list: only the line-level scrub can catch them.
    log.debug({ cause: { deep: { text: `retrying with ${registered}` } }, url: "nats://bob:hunter2-hunter2@nats.example:4222" }, `lost nats://tok3n-value-xyz@10.0.0.1:4222 and ${fromEnv}`);
    log.error({ err: `401 from https://api.example/v1: Incorrect API key provided: sk-${"a".repeat(40)} (Bearer sk-${"b".repeat(40)})`, quoted: `say "${registered}"` }, `seed ${seed}`);
    const text = lines.join("");
    for (const secret of [registered, fromEnv, "hunter2-hunter2", "tok3n-value-xyz", "a".repeat(40), "b".repeat(40), seed]) {
      assert.ok(!text.includes(secret), `'${secret.slice(0, 8)}...' was logged: ${text}`);
    }
    assert.match(text, /nats:\/\/\[REDACTED\]@nats\.example:4222/, "a URL keeps its host, loses its credentials");
    for (const line of lines) JSON.parse(line);
  });

  test("local mode: the key in an output, an agent error, a scorer reason, a teardown error and an import error is in no output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-leak-local-"));
    const key = `k3y-${randomSecret("", 16)}`;
    const token = randomSecret("tok-", 12);
    const env = { ...NO_NATS_ENV, OPENAI_API_KEY: key, NATS_TOKEN: token };
    const files = { report: join(dir, "report.json"), junit: join(dir, "junit.xml"), db: join(dir, "results.db"), html: join(dir, "report.html") };
    const run = evalfleet(["run", LEAKY, "-v", "--threads", "2", "--log-level", "debug", "--json-output", files.report, "--junit", files.junit, "--db", `sqlite:${files.db}`], env);
    const r = await exitOf(run, "evalfleet run", 90_000);
    assert.equal(r.code, 1, `three cases fail: ${r.stdout}${r.stderr}`);
    const report = await exitOf(evalfleet(["report", "--html", files.html, "--db", `sqlite:${files.db}`], env), "evalfleet report --html", 60_000);
    assert.equal(report.code, 0, report.stderr);
    const show = await exitOf(evalfleet(["show", readJson(files.report).summary.run_id, "--json", "--db", `sqlite:${files.db}`], env), "evalfleet show --json", 60_000);
    assert.equal(show.code, 0, show.stderr);
    const procs = [run, evalfleet(["run", IMPORT_ERROR], env), evalfleet(["list", IMPORT_ERROR], env)];
    for (const p of procs.slice(1)) {
      const failed = await exitOf(p, "a run of a suite that throws at import", 60_000);
      assert.equal(failed.code, 2, failed.stderr);
      assert.match(failed.stderr, /^error: .*secret-import-error-suite\.ts: .*cannot reach the model with key \[REDACTED\]: connection refused\n$/);
    }

    // The paths that could leak were taken, and say so with [REDACTED].
    assertLeakyReport(readJson(files.report));
    assert.match(r.stdout, /here is the key: \[REDACTED\] and the token \[REDACTED\]/, "-v printed the output");
    assert.match(r.stdout, /\u21b3 streamed: text_delta/, "-v printed the streamed events");
    assertNoLeak([key, token], [...procOutputs(procs), ["show --json", show.stdout], ...reportFiles(files)]);
  });

  test("distributed mode with a NATS token: no secret in any output, nor in any NATS message, a key split across two events included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-leak-nats-"));
    const key = `k3y-${randomSecret("", 16)}`;
    const token = randomSecret("tok-", 12);
    const server = await startNatsServer({ config: `authorization { token: "${token}" }` });
    const messages: Array<[string, string]> = [];
    const spy = await connect({ servers: server.url, token });
    try {
      for (const subject of ["evalfleet.>", "$KV.>"]) {
        const sub = spy.subscribe(subject);
        void (async () => {
          for await (const m of sub) messages.push([m.subject, m.string()]);
        })();
      }
      await spy.flush();
      const env = { ...NO_NATS_ENV, OPENAI_API_KEY: key, NATS_URL: server.url, NATS_TOKEN: token };
      const files = { report: join(dir, "report.json"), junit: join(dir, "junit.xml"), db: join(dir, "results.db"), html: join(dir, "report.html") };
      const runId = "leaky";
      const worker = evalfleet(["worker", LEAKY, "--run", runId, "--threads", "2", "--log-level", "debug"], env);
      const broken = evalfleet(["worker", IMPORT_ERROR, "--run", runId, "--log-level", "debug"], env);
      const coordinator = evalfleet(["coordinator", "run", LEAKY, "--run-id", runId, "-v", "--log-level", "debug", "--json-output", files.report, "--junit", files.junit, "--db", `sqlite:${files.db}`], env);
      const c = await exitOf(coordinator, "the coordinator", 120_000);
      assert.equal(c.code, 1, `three cases fail: ${c.stdout}${c.stderr}`);
      assert.equal((await exitOf(worker, "the worker", 60_000)).code, 0, worker.stderr);
      const b = await exitOf(broken, "the worker whose suite throws at import", 60_000);
      assert.equal(b.code, 2, b.stderr);
      assert.match(b.stderr, /cannot reach the model with key \[REDACTED\]: connection refused/);
      const report = await exitOf(evalfleet(["report", "--html", files.html, "--db", `sqlite:${files.db}`], env), "evalfleet report --html", 60_000);
      assert.equal(report.code, 0, report.stderr);
      await spy.flush();

      assertLeakyReport(readJson(files.report));
      assert.match(c.stdout, /\u21b3 streamed: text_delta/, "-v printed the streamed events");
      const results = messages.filter(([s]) => /\.results\./.test(s));
      // A worker's batch (events.batch) carries its events in a list; a single event is its own message.
      const events = messages
        .filter(([s]) => /\.events\./.test(s))
        .flatMap(([, body]) => {
          const m = JSON.parse(body) as { events?: unknown[] };
          return (Array.isArray(m.events) ? m.events : [m]) as Array<{ kind: string; event?: { type?: string; delta?: string } }>;
        });
      assert.equal(results.length, 5, "every result crossed the broker");
      const deltas = events.filter((e) => e.event?.type === "text_delta").map((e) => e.event!.delta);
      assert.equal(deltas.length, 2, "both halves of the streamed key crossed the broker as events");
      assert.equal(deltas.join(""), "The key starts [REDACTED] and ends there.");
      assertNoLeak(
        [key, token],
        [...procOutputs([coordinator, worker, broken]), ...reportFiles(files), ...messages.map(([subject, body]): [string, string] => [`the NATS message on ${subject}`, body])],
      );
    } finally {
      await spy.close();
      await server.stop();
    }
  });
});

/** The report of the leaky suite: each way the key could travel was taken, and shows [REDACTED]. */
function assertLeakyReport(report: { cases: Array<{ name: string; output: string | null; error: string | null; score_reason: string | null }> }): void {
  const byName = new Map(report.cases.map((c) => [c.name, c]));
  assert.equal(byName.get("output")?.output, "here is the key: [REDACTED] and the token [REDACTED]");
  assert.match(byName.get("agent-error")?.error ?? "", /^agent: Error: 401 Unauthorized: Incorrect API key provided: \[REDACTED\]$/);
  assert.equal(byName.get("scorer-reason")?.score_reason, "the reply used the key [REDACTED]");
  assert.match(byName.get("teardown-error")?.error ?? "", /^cleanup: Error: could not revoke session with \[REDACTED\]$/);
  assert.equal(byName.get("streamed")?.output, "done");
}

/** Each process's stdout and stderr (logs included), labelled. */
function procOutputs(procs: readonly Proc[]): Array<[string, string]> {
  return procs.flatMap((p): Array<[string, string]> => [[`stdout of pid ${p.pid}`, p.stdout], [`stderr of pid ${p.pid}`, p.stderr]]);
}

/** The JSON report, JUnit, the HTML report, and the SQLite store read back (every row of every table) and as bytes. */
function reportFiles(files: { report: string; junit: string; db: string; html: string }): Array<[string, string]> {
  const db = new Database(files.db, { readonly: true });
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
  const rows = tables.map((t) => JSON.stringify(db.prepare(`SELECT * FROM ${t}`).all())).join("\n");
  const caseRows = db.prepare("SELECT count(*) AS n FROM case_results").get() as { n: number };
  db.close();
  assert.equal(caseRows.n, 5, "every case was recorded");
  return [
    ["the JSON report", readFileSync(files.report, "utf8")],
    ["the JUnit file", readFileSync(files.junit, "utf8")],
    ["the HTML report", readFileSync(files.html, "utf8")],
    ["the store, read back", rows],
    ...[files.db, `${files.db}-wal`].filter((f) => existsSync(f)).map((f): [string, string] => [`the bytes of ${f}`, readFileSync(f, "latin1")]),
  ];
}

/** No secret, nor any 12-character piece of one, in any of the texts. */
function assertNoLeak(secrets: readonly string[], texts: ReadonlyArray<[string, string]>): void {
  for (const [where, text] of texts) {
    for (const secret of secrets) {
      const piece = leakedPiece(text, secret);
      assert.equal(piece, null, `a secret leaks into ${where} ('${piece}')`);
    }
  }
}
