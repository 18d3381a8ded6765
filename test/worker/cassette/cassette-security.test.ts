// The adversarial pass over cassettes (issue 32): a cassette is a file a team commits, so it must
// hold no credential, known or shaped, wherever a case put one (a URL, a header, a body, an answer,
// a wrapped tool's arguments, result or error); and a replay must answer a case only from its own
// cassette: a file copied from another case, or another trial's, is refused (CASSETTE_INVALID),
// never replayed. Real HTTP over a loopback socket, through runCases.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, runCases, type Agent } from "../../../index.ts";
import { cassetteFileName } from "../../../shared/cassette/cassette.ts";
import { shapedTokens } from "../../support/token-shapes.ts";

const passes = { score: () => ({ value: 1, passed: true }) };
/** One line per shape, so a URL, a header and a JSON body can each carry all of them. */
const shaped = shapedTokens().filter((t) => !t.token.includes("\n"));
const secretsOf = (): string[] => shapedTokens().map((t) => t.secret);

let server: Server;
let base = "";
let hits = 0;
before(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits++;
      // The answer carries credentials too: in a header and in the body.
      res.writeHead(200, { "content-type": "application/json", "x-issued": shaped[0]!.token });
      res.end(JSON.stringify({ ok: true, issued: shapedTokens().map((t) => t.token) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

/** Puts every shaped token everywhere a case can: URL, headers, body, and a wrapped tool's arguments, result and error. */
const leaky: Agent = {
  id: "leaky",
  async run(_input, ctx) {
    const f = ctx.fetch!;
    const query = shaped.map((t, i) => `t${i}=${encodeURIComponent(t.token)}`).join("&");
    const headers: Record<string, string> = { "content-type": "application/json", "x-note": shaped.map((t) => t.token).join(" ") };
    const answer = await f(`${base}/api?${query}`, { method: "POST", headers, body: JSON.stringify({ tokens: shapedTokens().map((t) => t.token) }) });
    const body = (await answer.json()) as { ok: boolean };
    const echo = ctx.tool!("echo", async (args: { tokens: string[] }) => ({ back: args.tokens }));
    await echo({ tokens: shapedTokens().map((t) => t.token) });
    const fails = ctx.tool!("fails", async () => {
      throw new Error(`refused with ${shaped.map((t) => t.token).join(", ")}`);
    });
    await fails({}).catch(() => undefined);
    return { content: `ok=${body.ok}` };
  },
};

describe("security: cassettes", () => {
  test("a recorded cassette holds no credential of any shape: URL, headers, body, answer, tool arguments, results and errors", async () => {
    const d = mkdtempSync(join(tmpdir(), "evalfleet-sec-cassette-"));
    hits = 0;
    const recorded = await runCases([new Case({ name: "leaky", input: "go", agent: leaky, scorer: passes })], { record: d });
    assert.equal(recorded.results[0]!.error, null, String(recorded.results[0]!.error));
    assert.equal(hits, 1);
    const files = readdirSync(d);
    assert.deepEqual(files, [cassetteFileName("leaky", 1)]);
    const text = readFileSync(join(d, files[0]!), "utf8");
    const cassette = JSON.parse(text);
    assert.equal(cassette.exchanges.length, 1);
    assert.equal(cassette.tools.length, 2, "both tool calls were recorded");
    // JSON escapes a newline in a key block as \n: look for each secret as written and as escaped.
    for (const secret of secretsOf()) {
      for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)]) {
        assert.ok(!text.includes(form), `no piece of a shaped token in the cassette: ${form.slice(0, 12)}...`);
      }
    }
    assert.match(text, /\[REDACTED\]/);

    // Redacted on both sides, the replay still matches, sends nothing and gives the same output.
    hits = 0;
    const replayed = await runCases([new Case({ name: "leaky", input: "go", agent: leaky, scorer: passes })], { replay: d });
    assert.equal(replayed.results[0]!.error, null, String(replayed.results[0]!.error));
    assert.equal(replayed.results[0]!.output, recorded.results[0]!.output);
    assert.equal(hits, 0, "nothing reached the server");
  });

  test("a replay answers a case only from its own cassette: another case's file, or another trial's, is refused", async () => {
    const d = mkdtempSync(join(tmpdir(), "evalfleet-sec-cassette-swap-"));
    const asker = (city: string): Agent => ({
      async run(_input, ctx) {
        const r = await ctx.fetch!(`${base}/weather?city=${city}`);
        return { content: `${city}: ${r.status}` };
      },
    });
    await runCases([new Case({ name: "other", input: "x", agent: asker("Paris"), scorer: passes })], { record: d });
    // The attacker's (or a careless rename's) cassette: case other's file under case victim's name, and trial 1's as trial 2's.
    copyFileSync(join(d, cassetteFileName("other", 1)), join(d, cassetteFileName("victim", 1)));
    copyFileSync(join(d, cassetteFileName("other", 1)), join(d, cassetteFileName("other", 2)));
    hits = 0;
    const victim = (await runCases([new Case({ name: "victim", input: "x", agent: asker("Paris"), scorer: passes })], { replay: d })).results[0]!;
    assert.notEqual(victim.passed, true, "the copied cassette did not answer for the victim");
    assert.match(String(victim.error), /is case "other" trial 1's, not case "victim" trial 1's: re-record it/);
    const repeated = await runCases([new Case({ name: "other", input: "x", agent: asker("Paris"), scorer: passes })], { replay: d, repeat: 2 });
    const trials = repeated.results[0]!.repeats ?? [];
    assert.equal(trials.length, 2);
    assert.equal(trials[0]!.error, null, "trial 1 replays from its own cassette");
    assert.match(String(trials[1]!.error), /is case "other" trial 1's, not case "other" trial 2's/);
    assert.equal(hits, 0, "a refused cassette sends nothing either");
  });
});
