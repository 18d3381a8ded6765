// Record and replay (worker/cassette, through runCases): a case's context.fetch, its context.tool
// calls and the built-in OpenAI-compatible agent recorded into one redacted JSON cassette per case
// and trial, then replayed with no request reaching the server (counted); a changed or extra request
// fails the case with the replay's message (kind `check`) even when the agent swallows the error;
// --record-missing records what is missing; concurrent and repeated requests match.
import { test, describe, before, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, openAIAgent, runCases, type Agent, type RunContext } from "../../../index.ts";
import { registerSecret } from "../../../shared/redaction/secrets.ts";
import { cassetteFileName } from "../../../shared/cassette/cassette.ts";
import { useScriptedOpenAI } from "../../support/openai-server.ts";

const SECRET = "sk-live-cassette-9f8e7d6c5b4a";
const passes = { score: () => ({ value: 1, passed: true }) };

/** A weather service on a free port that counts what reaches it. */
let weather: Server;
let base = "";
const hits: { method: string; url: string; body: string; auth: string | undefined }[] = [];
before(async () => {
  registerSecret(SECRET);
  weather = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      hits.push({ method: req.method!, url: req.url!, body, auth: req.headers.authorization });
      const city = new URL(req.url!, "http://x").searchParams.get("city") ?? (body ? (JSON.parse(body) as { city: string }).city : "?");
      // A slow Paris: concurrent requests come back in another order than they went out.
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json", "set-cookie": `session=${SECRET}` });
        res.end(JSON.stringify({ city, tempC: city.length, n: hits.length }));
      }, city === "Paris" ? 40 : 0);
    });
  });
  await new Promise<void>((r) => weather.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(weather.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => weather.close(() => r())));
beforeEach(() => void (hits.length = 0));

const dir = (): string => mkdtempSync(join(tmpdir(), "evalfleet-cassette-"));

/** Asks for Paris and London at once, Paris again, posts a report with the key in the header and URL, and calls a wrapped tool. */
const forecaster = (log: string[] = []): Agent => ({
  id: "forecaster",
  async run(_input, ctx: RunContext) {
    const f = ctx.fetch!;
    const get = async (city: string) => (await (await f(`${base}/weather?city=${city}`, { signal: ctx.signal })).json()) as { tempC: number; n: number };
    const [paris, london] = await Promise.all([get("Paris"), get("London")]);
    const again = await get("Paris");
    const post = await f(`${base}/report?key=${SECRET}`, { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, body: JSON.stringify({ note: "x", city: "Paris" }) });
    const lookup = ctx.tool!("lookup", async (args: { q: string }) => {
      log.push(args.q);
      return { answer: `${args.q}!` };
    });
    const looked = await lookup({ q: "paris" });
    return { content: `${paris.tempC} ${london.tempC} ${again.n} ${(await post.json() as { n: number }).n} ${looked.answer}` };
  },
});

const caseOf = (agent: Agent, name = "paris"): Case => new Case({ name, input: "forecast", agent, scorer: passes });

describe("record and replay: context.fetch and context.tool", () => {
  test("record then replay: same output, no request reaches the server, no secret in the cassette", async () => {
    const d = dir();
    const toolCalls: string[] = [];
    const recorded = await runCases([caseOf(forecaster(toolCalls))], { record: d });
    assert.equal(recorded.results[0]!.error, null);
    assert.equal(hits.length, 4);
    assert.equal(hits[3]!.auth, `Bearer ${SECRET}`, "recording sends the real request");
    assert.deepEqual(toolCalls, ["paris"]);
    const files = readdirSync(d);
    assert.deepEqual(files, [cassetteFileName("paris", 1)]);
    const text = readFileSync(join(d, files[0]!), "utf8");
    assert.ok(!text.includes(SECRET), "the key appears nowhere: header, URL, cookie");
    const cassette = JSON.parse(text);
    assert.equal(cassette.case, "paris");
    assert.equal(cassette.trial, 1);
    assert.equal(cassette.exchanges.length, 4);
    assert.deepEqual(cassette.exchanges.map((e: { request: number }) => e.request), [1, 2, 3, 4]);
    // Recorded in the order the requests went out (Paris first), though London answered first.
    assert.match(cassette.exchanges[0].url, /city=Paris/);
    assert.equal(cassette.exchanges[3].headers.authorization, "[REDACTED]");
    assert.match(cassette.exchanges[3].url, /key=\[REDACTED\]/);
    assert.equal(cassette.exchanges[3].response.headers["set-cookie"], "[REDACTED]");
    assert.deepEqual(cassette.tools, [{ name: "lookup", args: { q: "paris" }, result: { answer: "paris!" }, error: null }]);

    hits.length = 0;
    toolCalls.length = 0;
    const replayed = await runCases([caseOf(forecaster(toolCalls))], { replay: d });
    assert.equal(replayed.results[0]!.error, null);
    assert.equal(replayed.results[0]!.output, recorded.results[0]!.output, "the same answers, so the same output");
    assert.equal(hits.length, 0, "no request reached the server");
    assert.deepEqual(toolCalls, [], "the wrapped tool was not called");
    assert.equal(readFileSync(join(d, files[0]!), "utf8"), text, "a replay leaves the cassette as it was");
  });

  test("a changed request fails the case clearly (kind check), even when the agent swallows the error; nothing is sent", async () => {
    const d = dir();
    await runCases([caseOf(forecaster())], { record: d });
    hits.length = 0;
    let caught = "";
    const changed: Agent = {
      async run(_i, ctx) {
        try {
          await ctx.fetch!(`${base}/weather?city=Rome`);
        } catch (err) {
          caught = (err as Error).message;
        }
        return { content: "fine" };
      },
    };
    const r = (await runCases([caseOf(changed)], { replay: d })).results[0]!;
    const message = `replay: no recorded answer for GET ${base}/weather?city=Rome (case paris, request 1)`;
    assert.equal(caught, message, "the agent's fetch throws the replay's error");
    assert.equal(r.passed, false);
    assert.equal(r.error, message);
    assert.equal(r.errorKind, "check");
    assert.equal(hits.length, 0);
  });

  test("a case with no cassette fails on its first request; a broken cassette fails before the agent runs", async () => {
    const d = dir();
    const r = (await runCases([caseOf(forecaster(), "nowhere")], { replay: d })).results[0]!;
    assert.equal(r.errorKind, "check");
    assert.match(r.error!, /^replay: no recorded answer for GET http:\/\/127\.0\.0\.1:\d+\/weather\?city=(Paris|London) \(case nowhere, request [12]\)/);
    writeFileSync(join(d, cassetteFileName("broken", 1)), "{ not json");
    let ran = false;
    const b = (await runCases([caseOf({ async run() { ran = true; return { content: "x" }; } }, "broken")], { replay: d })).results[0]!;
    assert.equal(ran, false);
    assert.equal(b.errorKind, "check");
    assert.match(b.error!, /^replay: the cassette .*broken-[0-9a-f]{8}\.t1\.json is not JSON/);
    assert.equal(hits.length, 0);
  });

  test("--record-missing: what the cassette has is replayed, what it lacks is sent and added", async () => {
    const d = dir();
    await runCases([caseOf(forecaster())], { record: d });
    hits.length = 0;
    const more: Agent = {
      async run(_i, ctx) {
        const a = await (await ctx.fetch!(`${base}/weather?city=London`)).json();
        const b = await (await ctx.fetch!(`${base}/weather?city=Oslo`)).json();
        return { content: `${(a as { city: string }).city} ${(b as { city: string }).city}` };
      },
    };
    const r = (await runCases([caseOf(more)], { replay: d, recordMissing: true })).results[0]!;
    assert.equal(r.error, null);
    assert.equal(r.output, "London Oslo");
    assert.deepEqual(hits.map((h) => h.url), ["/weather?city=Oslo"], "only the missing request was sent");
    const cassette = JSON.parse(readFileSync(join(d, cassetteFileName("paris", 1)), "utf8"));
    assert.equal(cassette.exchanges.length, 5);
    assert.match(cassette.exchanges[4].url, /city=Oslo/);
    hits.length = 0;
    const again = (await runCases([caseOf(more)], { replay: d })).results[0]!;
    assert.equal(again.error, null, "the added exchange replays");
    assert.equal(hits.length, 0);
  });

  test("repeats: each trial has its own cassette", async () => {
    const d = dir();
    let n = 0;
    const counting: Agent = { async run(_i, ctx) { const r = await (await ctx.fetch!(`${base}/weather?city=Oslo`)).json(); return { content: `${++n}:${(r as { n: number }).n}` }; } };
    await runCases([caseOf(counting)], { record: d, repeat: 2 });
    assert.deepEqual(readdirSync(d).sort(), [cassetteFileName("paris", 1), cassetteFileName("paris", 2)].sort());
    hits.length = 0;
    const r = await runCases([caseOf(counting)], { replay: d, repeat: 2 });
    assert.equal(r.results[0]!.error, null);
    assert.equal(hits.length, 0);
  });

  test("record and replay together, or record-missing alone, is a usage error naming them", async () => {
    await assert.rejects(runCases([caseOf(forecaster())], { record: dir(), replay: dir() }), (e: Error & { code?: string }) => e.code === "USAGE" && /record \(--record\) and replay \(--replay\) cannot both be set/.test(e.message));
    await assert.rejects(runCases([caseOf(forecaster())], { recordMissing: true }), (e: Error & { code?: string }) => e.code === "USAGE" && /recordMissing \(--record-missing\) needs replay/.test(e.message));
  });
});

describe("record and replay: the built-in OpenAI-compatible agent", () => {
  const server = useScriptedOpenAI();
  beforeEach(() => server.reset());

  test("the agent's model calls are recorded without the API key and replayed with no request to the server", async () => {
    server.handle((req) => ({ content: `echo ${req.lastUserText}` }));
    const agent = (): Agent => openAIAgent({ id: "echo", model: "echo-model", baseURL: server.url, apiKey: SECRET, limitKey: "cassette-echo", baseDelayMs: 5, maxDelayMs: 20 });
    const d = dir();
    const rec = await runCases([new Case({ name: "echo", input: "bonjour", agent: agent(), scorer: passes })], { record: d });
    assert.equal(rec.results[0]!.error, null);
    assert.equal(rec.results[0]!.output, "echo bonjour");
    assert.equal(server.requests.length, 1);
    const text = readFileSync(join(d, cassetteFileName("echo", 1)), "utf8");
    assert.ok(!text.includes(SECRET));
    const cassette = JSON.parse(text);
    assert.equal(cassette.exchanges[0].method, "POST");
    assert.equal(cassette.exchanges[0].url, `${server.url}/chat/completions`);
    assert.equal(cassette.exchanges[0].headers.authorization, "[REDACTED]");

    server.reset();
    const rep = await runCases([new Case({ name: "echo", input: "bonjour", agent: agent(), scorer: passes })], { replay: d });
    assert.equal(rep.results[0]!.error, null);
    assert.equal(rep.results[0]!.output, "echo bonjour");
    assert.equal(server.requests.length, 0, "replayed: the model server saw nothing");

    // Another prompt is another request body: a miss, said once, not retried, kind check.
    const miss = (await runCases([new Case({ name: "echo", input: "hola", agent: agent(), scorer: passes })], { replay: d })).results[0]!;
    assert.equal(server.requests.length, 0);
    assert.equal(miss.errorKind, "check");
    assert.match(miss.error!, new RegExp(`replay: no recorded answer for POST ${server.url.replace(/[.]/g, "\\.")}/chat/completions \\(case echo, request 1\\)`));
    assert.ok(!/request 2/.test(miss.error!), `not retried: ${miss.error}`);
  });
});
