// Logs never contain secrets. A coordinator and two workers authenticate with a password (the
// coordinator's in its URL, nats://user:password@host; one worker's by flags) and an NKey seed,
// with an OpenAI-style API key in every environment and --log-level debug. The suite's judged case
// calls a model server that refuses the key and echoes it back (the reason lands in the debug log),
// and two more clients fail with wrong passwords. Every byte the processes write, the JSON report
// and the JUnit file are searched for every secret, and for any 12-character piece of one.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, type Proc } from "./harness/processes.ts";
import { NO_NATS_ENV, assertOneLineRefusal } from "./harness/auth-runs.ts";
import { makeNkeyUser, randomSecret } from "./harness/credentials.ts";
import { createLogger, registerSecret } from "../shared/logger.ts";

const SUITE = fixture("security-secrets-suite.ts");

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
    assert.match(workerLogs, /\[redacted\]/, "and it was redacted there");
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
    assert.match(text, /nats:\/\/\[redacted\]@nats\.example:4222/, "a URL keeps its host, loses its credentials");
    for (const line of lines) JSON.parse(line);
  });
});
