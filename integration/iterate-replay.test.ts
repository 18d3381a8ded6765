// Record and replay with real processes and worker threads: `evalfleet run --record DIR` keeps one
// redacted cassette per case (the built-in agent's and the default judge's model calls), and
// `--replay DIR` gives the same verdicts with no request reaching the scripted model server
// (counted); a cassette that lacks a request fails that case (exit 1, kind check); bad flag
// combinations exit 2 with a clear message and no stack trace.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useScriptedOpenAI, type RecordedRequest, type ScriptedReply } from "../test/support/openai-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";

const KEY = "sk-replay-tests-0123456789abcdef";
const COUNTRIES: Record<string, string> = { paris: "France", rome: "Italy", oslo: "Norway" };
const server = useScriptedOpenAI((started) => started.handle(reply));

function reply(req: RecordedRequest): ScriptedReply {
  if (req.body?.model === "agent-model") {
    const city = /is (\w+) in\?/.exec(req.lastUserText)?.[1] ?? "?";
    return { content: `${city} is in ${COUNTRIES[city] ?? "nowhere"}.` };
  }
  return { content: JSON.stringify({ passed: true, reason: "names the country" }) };
}

const suite = fixture("cached-model-suite.ts");
const modelEnv = (): Record<string, string> => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: KEY, EVALFLEET_JUDGE_MODEL: "judge-model" });
type Report = { summary: { passed: number }; cases: Array<{ name: string; passed: boolean; judge_reason: string | null; output: string; error: string | null; error_kind: string | null }> };
const verdicts = (r: Report): unknown => r.cases.map((c) => [c.name, c.passed, c.judge_reason, c.output]);

describe("record and replay (real processes, worker threads, scripted model server)", () => {
  test("--record then --replay: same verdicts, no model request on replay, no key in a cassette; a missing cassette fails its case", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "evalfleet-replay-"));
    const tapes = join(cwd, "tapes");
    const run = async (name: string, extra: string[], code = 0): Promise<Report> => {
      const r = await exitOf(evalfleet(["run", suite, "--threads", "2", ...extra, "--json-output", join(cwd, `${name}.json`)], modelEnv(), { cwd }), name, 90_000);
      assert.equal(r.code, code, outputOf(r));
      return readJson<Report>(join(cwd, `${name}.json`));
    };
    const before = server.requests.length;
    const recorded = await run("record", ["--record", "tapes"]);
    assert.equal(server.requests.length - before, 6, "three agent calls and three judge calls");
    assert.equal(recorded.summary.passed, 3);
    const files = readdirSync(tapes).sort();
    assert.equal(files.length, 3, files.join(", "));
    for (const f of files) {
      const text = readFileSync(join(tapes, f), "utf8");
      assert.ok(!text.includes(KEY), `no API key in ${f}`);
      const c = JSON.parse(text) as { exchanges: Array<{ headers: Record<string, string>; url: string }> };
      assert.equal(c.exchanges.length, 2, `${f}: the agent's call and the judge's`);
      assert.equal(c.exchanges[0]!.headers.authorization, "[REDACTED]");
    }

    const replayed = await run("replay", ["--replay", "tapes"]);
    assert.equal(server.requests.length - before, 6, "no model request on replay");
    assert.deepEqual(verdicts(replayed), verdicts(recorded));

    // One cassette gone: that case fails with the replay's message; the others still replay.
    rmSync(join(tapes, files.find((f) => f.startsWith("rome-"))!));
    const partial = await run("partial", ["--replay", "tapes"], 1);
    assert.equal(server.requests.length - before, 6, "still nothing sent");
    const rome = partial.cases.find((c) => c.name === "rome")!;
    assert.equal(rome.passed, false);
    assert.equal(rome.error_kind, "check");
    assert.match(rome.error!, /replay: no recorded answer for POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(case rome, request 1\)/);
    assert.equal(partial.cases.filter((c) => c.passed).length, 2);

    // --record-missing fills the gap: the one missing case calls the model, then all replay.
    await run("fill", ["--replay", "tapes", "--record-missing"]);
    assert.equal(server.requests.length - before, 8, "only rome's two calls were sent");
    await run("full", ["--replay", "tapes"]);
    assert.equal(server.requests.length - before, 8);
  });

  test("--record with --replay, and --record-missing alone, exit 2 naming the flags", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "evalfleet-replay-flags-"));
    for (const [args, message] of [
      [["--record", "a", "--replay", "b"], /--record\) and replay \(--replay\) cannot both be set/],
      [["--record-missing"], /--record-missing\) needs replay/],
      [["--record", ""], /--record must be a folder/],
    ] as const) {
      const r = await exitOf(evalfleet(["run", suite, ...args], modelEnv(), { cwd }), args.join(" "), 60_000);
      assert.equal(r.code, 2, outputOf(r));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
    }
  });
});
