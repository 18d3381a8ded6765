// Credentials caught by their shape (issue 32): tokens that are in no environment variable
// (ghp_..., sk-..., a JWT, private keys, AWS key ids, Slack tokens and webhooks, ...; every shape of
// shared/redaction/shapes.ts, test/support/token-shapes.ts) put by a suite into an output, an agent
// error, a tool call's arguments and result, a scorer reason, a teardown error and a stream that
// splits them across events. Run locally and distributed; every byte the processes write (at
// --log-level debug), the JSON report, JUnit, the SQLite store (read back, and its bytes), the HTML
// report, `show --json`, the Exulu export and, distributed, every NATS message are searched for any
// 12-character piece of any token. Then the opt-out: a suite with `redactShapes: { except: [...] }`
// sees those shapes in its outputs, from its threads and from a worker process, and still loses
// the others and the model key; one with an unknown shape name fails to load.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { connect } from "@nats-io/transport-node";
import { startNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, outputOf, readJson, type Proc } from "./harness/processes.ts";
import { NO_NATS_ENV } from "./harness/auth-runs.ts";
import { randomSecret } from "./harness/credentials.ts";
import { shapedTokens, type ShapedToken } from "../test/support/token-shapes.ts";

const SUITE = fixture("shaped-tokens-suite.ts");
const TOKENS = shapedTokens();
const byLabel = (label: string): ShapedToken => TOKENS.find((t) => t.label === label)!;

/** Any 12-character piece of `secret` in `text`, or null. */
function leakedPiece(text: string, secret: string, size = 12): string | null {
  for (let i = 0; i + size <= secret.length; i++) if (text.includes(secret.slice(i, i + size))) return secret.slice(i, i + size);
  return null;
}

/** No piece of any of `secrets` in any of `texts`. */
function assertNoLeak(secrets: ReadonlyArray<[string, string]>, texts: ReadonlyArray<[string, string]>): void {
  for (const [where, text] of texts) {
    for (const [what, secret] of secrets) {
      const piece = leakedPiece(text, secret);
      assert.equal(piece, null, `${what} leaks into ${where} ('${piece}')`);
    }
  }
}

const tokenSecrets = (tokens: readonly ShapedToken[]): Array<[string, string]> => tokens.map((t) => [t.label, t.secret]);
const procOutputs = (procs: readonly Proc[]): Array<[string, string]> => procs.flatMap((p): Array<[string, string]> => [[`stdout of pid ${p.pid}`, p.stdout], [`stderr of pid ${p.pid}`, p.stderr]]);

/** The store read back (every row of every table) and its bytes. */
function storeTexts(db: string): Array<[string, string]> {
  const sqlite = new Database(db, { readonly: true });
  const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
  const rows = tables.map((t) => JSON.stringify(sqlite.prepare(`SELECT * FROM ${t}`).all())).join("\n");
  const transcripts = sqlite.prepare("SELECT count(*) AS n FROM case_transcripts").get() as { n: number };
  sqlite.close();
  assert.equal(transcripts.n, 6, "every case's transcript was recorded");
  assert.match(rows, /\\"repo_token\\":\\"\[REDACTED\]\\"/, "the tool call's arguments are in the stored transcript, redacted");
  return [["the store, read back", rows], ...[db, `${db}-wal`].filter((f) => existsSync(f)).map((f): [string, string] => [`the bytes of ${f}`, readFileSync(f, "latin1")])];
}

interface Report {
  cases: Array<{ name: string; output: string | null; error: string | null; score_reason: string | null }>;
  summary: { run_id: string };
}

describe("security: credentials are caught by their shape in every output", () => {
  const key = `k3y-${randomSecret("", 16)}`;
  after(killLeftovers);

  test("local mode: no token in stdout, stderr, the JSON report, JUnit, the store, the HTML report, show --json or the Exulu export", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-shapes-local-"));
    const env = { ...NO_NATS_ENV, OPENAI_API_KEY: key };
    const files = { report: join(dir, "report.json"), junit: join(dir, "junit.xml"), db: join(dir, "results.db"), html: join(dir, "report.html"), exulu: join(dir, "exulu.json") };
    const run = evalfleet(["run", SUITE, "-v", "--threads", "2", "--log-level", "debug", "--json-output", files.report, "--junit", files.junit, "--db", `sqlite:${files.db}`], env);
    const r = await exitOf(run, "evalfleet run", 90_000);
    assert.equal(r.code, 1, `three cases fail: ${outputOf(r)}`);
    const report = readJson<Report>(files.report);
    const runId = report.summary.run_id;
    const after = [
      evalfleet(["report", "--html", files.html, "--db", `sqlite:${files.db}`], env),
      evalfleet(["show", runId, "--json", "--db", `sqlite:${files.db}`], env),
      evalfleet(["export", runId, "--format", "exulu", "-o", files.exulu, "--db", `sqlite:${files.db}`], env),
    ];
    for (const p of after) assert.equal((await exitOf(p, "a history command", 60_000)).code, 0, p.stderr);

    // Each way a token could travel was taken, and says [REDACTED] there.
    const byName = new Map(report.cases.map((c) => [c.name, c]));
    assert.equal(byName.get("output")?.output, `tokens:\n${TOKENS.map((t) => t.redacted).join("\n")}\nkey [REDACTED]`);
    assert.equal(byName.get("agent-error")?.error, "agent: Error: 401 from the API: token [REDACTED] rejected ([REDACTED], [REDACTED])");
    assert.equal(byName.get("scorer-reason")?.score_reason, "the reply used [REDACTED] and [REDACTED]");
    assert.equal(byName.get("teardown-error")?.error, "cleanup: Error: could not revoke [REDACTED]");
    assert.match(r.stdout, /\u21b3 streamed: text_delta/, "-v printed the streamed events");
    assert.match(readFileSync(files.exulu, "utf8"), /\[REDACTED\]/);

    assertNoLeak(tokenSecrets(TOKENS).concat([["the model key", key]]), [
      ...procOutputs([run, ...after]),
      ["the JSON report", readFileSync(files.report, "utf8")],
      ["the JUnit file", readFileSync(files.junit, "utf8")],
      ["the HTML report", readFileSync(files.html, "utf8")],
      ["the Exulu export", readFileSync(files.exulu, "utf8")],
      ...storeTexts(files.db),
    ]);
  });

  test("distributed mode: no token in any output nor in any NATS message, one split across two events included", async () => {
    const server = await startNatsServer();
    const messages: Array<[string, string]> = [];
    const spy = await connect({ servers: server.url });
    try {
      for (const subject of ["evalfleet.>", "$KV.>"]) {
        const sub = spy.subscribe(subject);
        void (async () => {
          for await (const m of sub) messages.push([m.subject, m.string()]);
        })();
      }
      await spy.flush();
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-shapes-nats-"));
      const report = join(dir, "report.json");
      const env = { ...NO_NATS_ENV, OPENAI_API_KEY: key, NATS_URL: server.url };
      const worker = evalfleet(["worker", SUITE, "--run", "shapes", "--threads", "2", "--log-level", "debug"], env);
      const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", "shapes", "-v", "--log-level", "debug", "--json-output", report], env);
      const c = await exitOf(coordinator, "the coordinator", 120_000);
      assert.equal(c.code, 1, `three cases fail: ${outputOf(c)}`);
      assert.equal((await exitOf(worker, "the worker", 60_000)).code, 0, worker.stderr);
      await spy.flush();

      const deltas = messages
        .filter(([s]) => /\.events\./.test(s))
        // A worker's batch (events.batch) carries its events in a list; a single event is its own message.
        .flatMap(([, body]) => {
          const m = JSON.parse(body) as { events?: unknown[] };
          return (Array.isArray(m.events) ? m.events : [m]) as Array<{ event?: { type?: string; delta?: string } }>;
        })
        .map((m) => m.event)
        .filter((e) => e?.type === "text_delta")
        .map((e) => e!.delta);
      assert.equal(deltas.length, 3, "the three events crossed the broker");
      const pem = byLabel("an OpenSSH private key").redacted;
      assert.equal(deltas.join(""), `The token starts [REDACTED] and the key is\n${pem}\nthat is all.`);
      assert.equal(messages.filter(([s]) => /\.results\./.test(s)).length, 6, "every result crossed the broker");
      assert.equal(readJson<Report>(report).cases.find((x) => x.name === "agent-error")?.error, "agent: Error: 401 from the API: token [REDACTED] rejected ([REDACTED], [REDACTED])");
      assertNoLeak(tokenSecrets(TOKENS).concat([["the model key", key]]), [
        ...procOutputs([coordinator, worker]),
        ["the JSON report", readFileSync(report, "utf8")],
        ...messages.map(([subject, body]): [string, string] => [`the NATS message on ${subject}`, body]),
      ]);
    } finally {
      await spy.close();
      await server.stop();
    }
  });

  test("the opt-out: redactShapes { except: [github, jwt] } shows those, from its threads and a worker process, and still removes the others and the key; an unknown shape fails the load", async () => {
    const shown = TOKENS.filter((t) => t.shape === "github" || t.shape === "jwt");
    const still = TOKENS.filter((t) => !shown.includes(t));
    const expectedOutput = `tokens:\n${TOKENS.map((t) => (shown.includes(t) ? t.token : t.redacted)).join("\n")}\nkey [REDACTED]`;
    const gh = byLabel("a GitHub ghp_ token").token;
    const jwt = byLabel("a JWT").token;
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-shapes-optout-"));

    const local = join(dir, "local.json");
    const env = { ...NO_NATS_ENV, OPENAI_API_KEY: key, SHAPED_REDACT: "except" };
    const l = await exitOf(evalfleet(["run", SUITE, "--threads", "2", "--json-output", local], env), "evalfleet run", 90_000);
    assert.equal(l.code, 1, outputOf(l));
    const localCases = new Map(readJson<Report>(local).cases.map((c) => [c.name, c]));
    assert.equal(localCases.get("output")?.output, expectedOutput);
    assert.equal(localCases.get("agent-error")?.error, `agent: Error: 401 from the API: token ${gh} rejected ([REDACTED], ${jwt})`, "the thread kept them too");

    const server = await startNatsServer();
    const messages: string[] = [];
    const spy = await connect({ servers: server.url });
    try {
      const sub = spy.subscribe("evalfleet.>");
      void (async () => {
        for await (const m of sub) messages.push(m.string());
      })();
      await spy.flush();
      const report = join(dir, "distributed.json");
      const nenv = { ...env, NATS_URL: server.url };
      const worker = evalfleet(["worker", SUITE, "--run", "optout", "--threads", "1"], nenv);
      const c = await exitOf(evalfleet(["coordinator", "run", SUITE, "--run-id", "optout", "-v", "--json-output", report], nenv), "the coordinator", 120_000);
      assert.equal(c.code, 1, outputOf(c));
      assert.equal((await exitOf(worker, "the worker", 60_000)).code, 0, worker.stderr);
      await spy.flush();
      const cases = new Map(readJson<Report>(report).cases.map((x) => [x.name, x]));
      assert.equal(cases.get("output")?.output, expectedOutput);
      assert.equal(cases.get("agent-error")?.error, `agent: Error: 401 from the API: token ${gh} rejected ([REDACTED], ${jwt})`);
      const all = messages.join("\n");
      assert.ok(all.includes(gh), "the worker published the GitHub token: its suite said so");
      assert.ok(all.includes(`The token starts ${gh.slice(0, Math.floor(gh.length / 2))}`), "its events too");
      assertNoLeak(tokenSecrets(still).concat([["the model key", key]]), [
        ["the JSON report", readFileSync(report, "utf8")],
        ["the NATS messages", all],
        ["the local JSON report", readFileSync(local, "utf8")],
      ]);
    } finally {
      await spy.close();
      await server.stop();
    }

    const bad = await exitOf(evalfleet(["list", SUITE], { ...NO_NATS_ENV, SHAPED_REDACT: "bad" }), "evalfleet list", 60_000);
    assert.equal(bad.code, 2, outputOf(bad));
    assert.match(bad.stderr, /redactShapes\.except\[0\]: unknown shape 'jwts' \(the shapes: private-key, bearer, /);
  });
});
