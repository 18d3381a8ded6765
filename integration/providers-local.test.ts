// The provider limiter in local mode, against the scripted OpenAI-compatible server enforcing a
// rate limit over HTTP (429 with Retry-After above it, x-ratelimit-* headers on every answer):
// one limiter in the main thread serves every worker thread, so the run stays under the limit.
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedOpenAI, type ScriptedOpenAIServer } from "../test/support/openai-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson } from "./harness/processes.ts";
import { maxInWindow } from "../test/support/rate-window.ts";

const SUITE = fixture("provider-suite.ts");

/**
 * One test's scripted provider (closed, with any process a run left behind, when the test ends), a
 * folder for its outputs with the JSON report's path, and the environment that points the suite at
 * the provider, with `env` added.
 */
async function setUp(t: TestContext, env: Record<string, string>): Promise<{ server: ScriptedOpenAIServer; dir: string; report: string; env: Record<string, string> }> {
  const server = await startScriptedOpenAI();
  t.after(() => server.close());
  t.after(killLeftovers);
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-providers-"));
  return { server, dir, report: join(dir, "report.json"), env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-providers-local", ...env } };
}

function judgeOK(server: ScriptedOpenAIServer): void {
  server.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
}

describe("provider limits, local mode (threads)", { timeout: 120_000 }, () => {
  test("a shared limit keeps four threads' judge calls under the provider's limit: no 429, every case passes", async (t) => {
    const { server, report, env } = await setUp(t, { PROVIDER_CASES: "40" });
    judgeOK(server);
    server.limitRate({ requests: 10, windowMs: 1000, latencyMs: [20, 80] });
    const key = `127.0.0.1:${server.port}:gpt-5-mini`;
    const run = await exitOf(evalfleet(["run", SUITE, "--threads", "4", "--concurrency", "40", "--limit", `${key}=rpm:600`, "--json-output", report], env), "evalfleet run", 90_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const json = readJson(report) as { summary: { passed: number; infra_errors: number } };
    assert.equal(json.summary.passed, 40);
    assert.equal(json.summary.infra_errors, 0);
    assert.equal(server.rateLog.refused.length, 0, "no request was refused");
    assert.equal(server.rateLog.admitted.length, 40);
    assert.ok(maxInWindow(server.rateLog.admitted, 1000) <= 10);
  });

  test("without a configured limit the key learns it from the headers: no case fails, few refusals", async (t) => {
    const { server, report, env } = await setUp(t, { PROVIDER_CASES: "40" });
    judgeOK(server);
    server.limitRate({ requests: 10, windowMs: 1000, latencyMs: [20, 80] });
    const run = await exitOf(evalfleet(["run", SUITE, "--threads", "4", "--concurrency", "40", "--json-output", report], env), "evalfleet run", 90_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((readJson(report) as { summary: { passed: number } }).summary.passed, 40);
    const all = server.rateLog.admitted.length + server.rateLog.refused.length;
    assert.ok(server.rateLog.refused.length / all <= 0.1, `${server.rateLog.refused.length} of ${all} refused`);
  });

  test("tokens and cost: the totals match the scripted usage (agent and judge), in the JSON report and JUnit", async (t) => {
    const { server, dir, report, env } = await setUp(t, { PROVIDER_CASES: "10", PROVIDER_AGENT_USAGE: "100,50", PROVIDER_AGENT_MODEL: "gpt-5-mini" });
    judgeOK(server);
    const junit = join(dir, "junit.xml");
    // Each agent run reports 100 + 50 tokens of gpt-5-mini; each judge call the server's 11 + 7.
    const run = await exitOf(evalfleet(["run", SUITE, "--threads", "2", "--concurrency", "10", "--json-output", report, "--junit", junit], env), "evalfleet run", 90_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const json = readJson(report) as { summary: { tokens: unknown; cost_usd: number; cost_unknown_cases: number }; cases: Array<{ tokens: unknown; cost_usd: number }> };
    assert.deepEqual(json.summary.tokens, { agent: 1500, judge: 180, total: 1680 });
    // gpt-5-mini at $0.25 / $2 per million: (100 * 0.25 + 50 * 2 + 11 * 0.25 + 7 * 2) / 1e6 per case.
    assert.equal(json.summary.cost_usd, 0.0014175);
    assert.equal(json.summary.cost_unknown_cases, 0);
    assert.deepEqual(json.cases[0]!.tokens, { agent: 150, judge: 18, total: 168 });
    assert.equal(json.cases[0]!.cost_usd, 0.00014175);
    const xml = readFileSync(junit, "utf8");
    assert.match(xml, /<property name="tokens" value="1680"\/>/);
    assert.match(xml, /<property name="cost_usd" value="0.0014175"\/>/);
    assert.match(run.stdout, /tokens 1680 \(agent 1500, judge 180\), cost \$0\.0014/);
  });

  test("--budget-tokens stops the run once spent: the cases not started are skipped (budget exhausted), exit 3", async (t) => {
    const { server, report, env } = await setUp(t, { PROVIDER_CASES: "10", PROVIDER_AGENT_USAGE: "100,50", PROVIDER_AGENT_MODEL: "gpt-5-mini" });
    judgeOK(server);
    // 168 tokens a case, one case at a time: the third reaches 500.
    const run = await exitOf(evalfleet(["run", SUITE, "--threads", "1", "--concurrency", "1", "--budget-tokens", "500", "--json-output", report], env), "evalfleet run", 90_000);
    assert.equal(run.code, 3, run.stdout + run.stderr);
    const json = readJson(report) as { summary: { skipped: number; budget: unknown; tokens: { total: number } }; cases: Array<{ skipped: boolean; error: string | null; passed: boolean }> };
    assert.equal(json.cases.filter((c) => c.passed).length, 3);
    assert.equal(json.summary.skipped, 7);
    for (const c of json.cases.filter((x) => x.skipped)) assert.equal(c.error, "skipped: budget exhausted");
    assert.deepEqual(json.summary.budget, { usd: null, tokens: 500, exhausted: true });
    assert.equal(json.summary.tokens.total, 504);
    assert.match(run.stdout, /budget exhausted \(500 tokens\)/);
  });

  test("--retries: an infra failure (a judge with no result) runs again and passes; a failed check is not retried", async (t) => {
    const { server, report, env } = await setUp(t, { PROVIDER_CASES: "2" });
    const seen = new Map<string, number>();
    server.handle((req) => {
      const n = /Question (\d+):/.exec(req.lastUserText)?.[1] ?? "?";
      seen.set(n, (seen.get(n) ?? 0) + 1);
      // Case 0: the first judge answer is unusable (no result: infra), the second passes. Case 1: a failing verdict.
      if (n === "0") return { content: seen.get(n) === 1 ? "I cannot answer that." : JSON.stringify({ passed: true, reason: "names Paris" }) };
      return { content: JSON.stringify({ passed: false, reason: "does not cite a source" }) };
    });
    const run = await exitOf(evalfleet(["run", SUITE, "--threads", "1", "--retries", "2", "--json-output", report], env), "evalfleet run", 90_000);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const json = readJson(report) as { summary: { infra_errors: number }; cases: Array<{ passed: boolean; attempts: number; error_kind: string | null }> };
    assert.deepEqual(json.cases.map((c) => [c.passed, c.attempts, c.error_kind]), [[true, 2, null], [false, 1, "check"]]);
    assert.equal(seen.get("0"), 2);
    assert.equal(seen.get("1"), 1, "a failed check is never retried");
    assert.equal(json.summary.infra_errors, 0);
  });
});
