// Provider limits across a fleet: three worker processes on a real nats-server, each asking the
// run's coordinator for its permits, against the scripted OpenAI-compatible server enforcing a
// rate limit over HTTP (429 with Retry-After above it, x-ratelimit-* headers on every answer).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startScriptedOpenAI, type ScriptedOpenAIServer } from "../test/support/openai-server.ts";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, readJson } from "./harness/processes.ts";
import { maxInWindow } from "../test/support/rate-window.ts";

const SUITE = fixture("provider-suite.ts");
const nats = useNatsServer();

interface Fleet {
  server: ScriptedOpenAIServer;
  report: string;
  coordinator: Awaited<ReturnType<typeof exitOf>>;
  status: { providers: Array<{ key: string; rpm: number | null; rateLimited: number; admitted: number }> };
}

/** Three workers at --concurrency 10 and a coordinator with `limit` (rpm) on the default judge's key. */
async function runFleet(runId: string, cases: number, rpm: number, provider: { requests: number; windowMs: number; lowerTo?: { requests: number; afterAdmitted: number } }): Promise<Fleet> {
  const server = await startScriptedOpenAI();
  server.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
  server.limitRate({ ...provider, latencyMs: [50, 250] });
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-providers-fleet-"));
  const report = join(dir, "report.json");
  const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-providers-fleet", PROVIDER_CASES: String(cases) };
  const key = `127.0.0.1:${server.port}:gpt-5-mini`;
  const workers = [1, 2, 3].map(() => evalfleet(["worker", SUITE, "--nats", nats.url, "--run", runId, "--threads", "1", "--concurrency", "10", "--log-level", "warn"], env));
  const coordinator = await exitOf(
    evalfleet(["coordinator", "run", SUITE, "--nats", nats.url, "--run-id", runId, "--wait-for-workers", "120", "--limit", `${key}=rpm:${rpm}`, "--json-output", report], env),
    "the coordinator",
    150_000,
  );
  for (const w of workers) await exitOf(w, "a worker", 30_000);
  const s = await exitOf(evalfleet(["coordinator", "status", runId, "--nats", nats.url, "--json"]), "coordinator status", 30_000);
  await server.close();
  return { server, report, coordinator, status: JSON.parse(s.stdout) };
}

describe("provider limits, distributed (three workers)", { timeout: 300_000 }, () => {
  test("the fleet-wide rate never exceeds the limit by more than one burst in any 10 s window; no 429, every case passes", async () => {
    // 600 per minute as the provider enforces it: 20 per 2 s.
    const fleet = await runFleet("providers-fleet-1", 120, 600, { requests: 20, windowMs: 2000 });
    const { server, coordinator, report } = fleet;
    assert.equal(coordinator.code, 0, coordinator.stdout + coordinator.stderr);
    const json = readJson(report) as { summary: { passed: number }; cases: Array<{ worker: string }> };
    assert.equal(json.summary.passed, 120);
    assert.equal(new Set(json.cases.map((c) => c.worker)).size, 3, "every worker ran cases");
    const sent = [...server.rateLog.admitted, ...server.rateLog.refused];
    assert.equal(sent.length, 120 + server.rateLog.refused.length);
    // 100 per 10 s, plus one burst (a second's share: 10).
    assert.ok(maxInWindow(sent, 10_000) <= 110, `${maxInWindow(sent, 10_000)} requests in a 10 s window`);
    assert.ok(server.rateLog.refused.length <= 1, `${server.rateLog.refused.length} refused`);
    const p = fleet.status.providers.find((x) => x.key.endsWith(":gpt-5-mini"));
    assert.ok(p && p.admitted === 120 + server.rateLog.refused.length, `coordinator status counts the permits: ${JSON.stringify(fleet.status.providers)}`);
  });

  test("a 429 storm slows every worker: the provider's limit drops to half the configured one mid-run, and the fleet settles under it", async () => {
    // Configured 1200 per minute, as the provider allows at first (40 per 2 s); after 40 requests it
    // allows 600 (20 per 2 s) and says so: a storm of 429s, then the fleet keeps under the new limit.
    const fleet = await runFleet("providers-fleet-2", 90, 1200, { requests: 40, windowMs: 2000, lowerTo: { requests: 20, afterAdmitted: 40 } });
    const { server, coordinator, report } = fleet;
    assert.equal(coordinator.code, 0, coordinator.stdout + coordinator.stderr);
    assert.equal((readJson(report) as { summary: { passed: number } }).summary.passed, 90);
    const refused = server.rateLog.refused;
    assert.ok(refused.length > 0, "the provider refused some requests");
    const p = fleet.status.providers.find((x) => x.key.endsWith(":gpt-5-mini"))!;
    assert.ok(p.rateLimited > 0, "the coordinator saw the 429s the workers got");
    assert.ok(p.rpm !== null && p.rpm < 1200 * 0.97, `the fleet's pace came down: ${p.rpm} rpm`);
    // After the first refusal, within a few seconds every worker's requests slow to the provider's
    // limit: the later half of the run sends no more than the limit allows (plus a burst).
    const sent = [...server.rateLog.admitted, ...refused].sort((a, b) => a - b);
    const settled = sent.filter((t) => t >= refused[0]! + 4000);
    assert.ok(settled.length > 0);
    assert.ok(maxInWindow(settled, 2000) <= 20 + 2, `${maxInWindow(settled, 2000)} requests in a 2 s window after the storm`);
    assert.ok(refused.length / sent.length <= 0.25, `${refused.length} of ${sent.length} refused`);
  });

  test("--budget-tokens across the fleet: once spent, the run stops, the cases not started are skipped (budget exhausted), exit 3", async () => {
    const server = await startScriptedOpenAI();
    server.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-providers-fleet-"));
    const report = join(dir, "report.json");
    // 168 tokens a case (agent 150, judge 18); one case at a time on each of three workers.
    const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test-providers-fleet", PROVIDER_CASES: "30", PROVIDER_AGENT_USAGE: "100,50", PROVIDER_AGENT_MODEL: "gpt-5-mini" };
    const runId = "providers-fleet-budget";
    const workers = [1, 2, 3].map(() => evalfleet(["worker", SUITE, "--nats", nats.url, "--run", runId, "--threads", "1", "--concurrency", "1", "--log-level", "warn"], env));
    const c = await exitOf(evalfleet(["coordinator", "run", SUITE, "--nats", nats.url, "--run-id", runId, "--wait-for-workers", "120", "--budget-tokens", "1000", "--json-output", report], env), "the coordinator", 150_000);
    for (const w of workers) await exitOf(w, "a worker", 30_000);
    await server.close();
    assert.equal(c.code, 3, c.stdout + c.stderr);
    const json = readJson(report) as { summary: { budget: unknown; tokens: { total: number } }; cases: Array<{ skipped: boolean; error: string | null; passed: boolean }> };
    assert.deepEqual(json.summary.budget, { usd: null, tokens: 1000, exhausted: true });
    const passed = json.cases.filter((x) => x.passed).length;
    const skipped = json.cases.filter((x) => x.skipped);
    // Spent after 6 results; the cases in flight then (3 at most) finish or are cancelled.
    assert.ok(passed >= 6 && passed <= 9, `${passed} passed`);
    assert.ok(skipped.length >= 18, `${skipped.length} skipped`);
    for (const x of skipped) assert.equal(x.error, "skipped: budget exhausted");
    // The overshoot is at most what was in flight.
    assert.ok(json.summary.tokens.total >= 1000 && json.summary.tokens.total <= 1000 + 3 * 168, String(json.summary.tokens.total));
  });
});
