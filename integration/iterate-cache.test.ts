// The response cache of the built-in model clients, with real processes and the scripted
// OpenAI-compatible server counting requests: a second run with --cache makes no model call and
// gives the same verdicts; `evalfleet cache clear` empties it; a cache shared through NATS
// (--cache shared) written by one worker serves another.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useScriptedOpenAI, type RecordedRequest, type ScriptedReply } from "../test/support/openai-server.ts";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";

const KEY = "sk-cache-tests-0123456789abcdef";
const COUNTRIES: Record<string, string> = { paris: "France", rome: "Italy", oslo: "Norway" };
const server = useScriptedOpenAI((started) => started.handle(reply));

function reply(req: RecordedRequest): ScriptedReply {
  if (req.body?.model === "agent-model") {
    const city = /is (\w+) in\?/.exec(req.lastUserText)?.[1] ?? "?";
    return { content: `${city} is in ${COUNTRIES[city] ?? "nowhere"}.` };
  }
  // The judge passes every answer: what matters here is whether it was asked.
  return { content: JSON.stringify({ passed: true, reason: "names the country" }) };
}

const suite = fixture("cached-model-suite.ts");
const modelEnv = (): Record<string, string> => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: KEY, EVALFLEET_JUDGE_MODEL: "judge-model" });
type Report = { summary: { passed: number; model_cache?: { hits: number; misses: number } }; cases: Array<{ name: string; passed: boolean; judge_reason: string | null; output: string; worker: string }> };
const verdicts = (r: Report): unknown => r.cases.map((c) => [c.name, c.passed, c.judge_reason, c.output]);

describe("response cache (real processes, scripted model server)", () => {
  test("--cache: the second run makes no model call and gives the same verdicts; cache clear empties it", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "evalfleet-cache-"));
    const run = async (name: string, extra: string[] = ["--cache"]): Promise<Report> => {
      const r = await exitOf(evalfleet(["run", suite, ...extra, "--json-output", join(cwd, `${name}.json`)], modelEnv(), { cwd }), name, 60_000);
      assert.equal(r.code, 0, outputOf(r));
      return readJson<Report>(join(cwd, `${name}.json`));
    };
    const before = server.requests.length;
    const first = await run("first");
    assert.equal(server.requests.length - before, 6, `three agent calls and three judge calls: ${JSON.stringify(server.requests.slice(before).map((r) => [r.body?.model, r.lastUserText.slice(0, 60)]))}`);
    assert.deepEqual(first.summary.model_cache, { hits: 0, misses: 6 });
    assert.ok(readdirSync(join(cwd, ".evalfleet", "cache")).length > 0, "answers kept in .evalfleet/cache");

    const second = await run("second");
    assert.equal(server.requests.length - before, 6, "no model call on the second run");
    assert.deepEqual(second.summary.model_cache, { hits: 6, misses: 0 });
    assert.deepEqual(verdicts(second), verdicts(first));
    assert.equal(second.summary.passed, 3);

    // Without --cache the cache is not consulted; with --repeat 2, the second repeat has answers of its own.
    await run("uncached", []);
    assert.equal(server.requests.length - before, 12);
    const repeated = await run("repeated", ["--cache", "--repeat", "2"]);
    assert.equal(server.requests.length - before, 18, "the second repeat of each case called the model");
    assert.deepEqual(repeated.summary.model_cache, { hits: 6, misses: 6 });

    const cleared = await exitOf(evalfleet(["cache", "clear"], {}, { cwd }), "cache clear", 30_000);
    assert.equal(cleared.code, 0, outputOf(cleared));
    assert.match(cleared.stdout, /^cache cleared: .*\.evalfleet\/cache$/m);
    await run("after-clear");
    assert.equal(server.requests.length - before, 24, "after clear, every call goes to the model again");
  });

  describe("--cache shared", () => {
    const nats = useNatsServer();
    test("answers one worker kept serve another worker: the second run makes no model call", async () => {
      const dirs = [1, 2].map(() => mkdtempSync(join(tmpdir(), "evalfleet-shared-cache-")));
      const before = server.requests.length;
      const runWith = async (runId: string, workerDir: string): Promise<Report> => {
        const env = { ...modelEnv(), NATS_URL: nats.url };
        // Each worker in a folder of its own: only the shared bucket can carry answers between them.
        const worker = evalfleet(["worker", suite, "--run", runId, "--threads", "1", "--concurrency", "3"], env, { cwd: workerDir });
        const c = await exitOf(evalfleet(["coordinator", "run", suite, "--run-id", runId, "--cache", "shared", "--json-output", join(workerDir, `${runId}.json`)], env), `coordinator ${runId}`, 120_000);
        assert.equal(c.code, 0, outputOf(c));
        assert.equal((await exitOf(worker, `worker of ${runId}`, 60_000)).code, 0);
        const report = readJson<Report>(join(workerDir, `${runId}.json`));
        assert.ok(report.cases.every((x) => x.worker.startsWith(worker.label)), "that worker ran every case");
        return report;
      };
      const first = await runWith("shared-cache-a", dirs[0]!);
      assert.equal(server.requests.length - before, 6);
      assert.deepEqual(first.summary.model_cache, { hits: 0, misses: 6 });
      const second = await runWith("shared-cache-b", dirs[1]!);
      assert.equal(server.requests.length - before, 6, "the other worker made no model call");
      assert.deepEqual(second.summary.model_cache, { hits: 6, misses: 0 });
      assert.deepEqual(verdicts(second), verdicts(first));
      for (const d of dirs) assert.throws(() => readdirSync(join(d, ".evalfleet", "cache")), "no local cache was used");
    });
  });
});
