// The provider scenario of `npm run bench` (bench/run.ts runs it in a fresh process; it prints one
// JSON line). The test suite's scripted OpenAI-compatible server behaves like a provider: a limit of
// `limit` requests per `window` (429 with Retry-After above it, rate-limit headers on every answer)
// and latencies of 200-800 ms. Judge-checked cases (test/fixtures/provider-suite.ts) run over three
// worker processes at --concurrency 100 each on a real nats-server, twice: with the shared limit
// (the coordinator's permits, --limit), and with every process on its own as other runners work
// (EVALFLEET_PROVIDER_LIMITER=off: no limiter, the clients' retries only).
//
// With --short-window: a provider admitting 4 requests per rolling second (240 per minute, the
// way OpenAI may enforce a per-minute limit), 120 judge-checked cases over three workers at
// --concurrency 10, the shared limit only: the adaptive pace's utilisation of a short window.
//
//   node --import tsx bench/provider-scenario.ts [--quick] [--short-window]
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer } from "../integration/harness/nats-server.ts";
import { startScriptedOpenAI } from "../test/support/openai-server.ts";

const quick = process.argv.includes("--quick");
const shortWindow = process.argv.includes("--short-window");
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin", "evalfleet.mjs");
const suite = join(root, "test", "fixtures", "provider-suite.ts");
/** The provider's limit: 600 per minute (full), scaled to 60 per 6 s (quick) so it reaches a steady state within a minute. */
const LIMIT = shortWindow ? { requests: 4, windowMs: 1_000 } : quick ? { requests: 60, windowMs: 6_000 } : { requests: 600, windowMs: 60_000 };
const CASES = shortWindow ? 120 : quick ? 300 : 3000;
/** Cases in flight per worker. */
const CONCURRENCY = shortWindow ? 10 : 100;
const RPM = (LIMIT.requests * 60_000) / LIMIT.windowMs;

function run(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code))));
}

interface Side {
  seconds: number;
  admitted: number;
  refused: number;
  share429: number;
  failedCases: number;
  utilization: number;
  exitCode: number | null;
}

async function scenario(shared: boolean, natsUrl: string, runId: string): Promise<Side> {
  const server = await startScriptedOpenAI();
  server.handle(() => ({ content: JSON.stringify({ passed: true, reason: "names Paris" }) }));
  server.limitRate({ ...LIMIT, latencyMs: [200, 800] });
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-provider-"));
  const report = join(dir, "report.json");
  const env: Record<string, string> = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-bench-provider", PROVIDER_CASES: String(CASES), ...(shared ? {} : { EVALFLEET_PROVIDER_LIMITER: "off" }) };
  const key = `127.0.0.1:${server.port}:gpt-5-mini`;
  const workers = [1, 2, 3].map(() => run(["worker", suite, "--nats", natsUrl, "--run", runId, "--threads", "1", "--concurrency", String(CONCURRENCY), "--log-level", "error"], env));
  const t0 = Date.now();
  const coordinator = run(["coordinator", "run", suite, "--nats", natsUrl, "--run-id", runId, "--wait-for-workers", "120", ...(shared ? ["--limit", `${key}=rpm:${RPM}`] : []), "--json-output", report], env);
  const code = await exited(coordinator);
  const seconds = (Date.now() - t0) / 1000;
  await Promise.all(workers.map((w) => Promise.race([exited(w), new Promise((r) => setTimeout(r, 30_000))])));
  for (const w of workers) if (w.exitCode === null) w.kill("SIGKILL");
  await server.close();
  const { admitted, refused } = server.rateLog;
  const json = JSON.parse(readFileSync(report, "utf8")) as { cases: Array<{ passed: boolean; error_kind: string | null }> };
  // Admitted per minute over the limit while demand exceeds it: from one window after the first
  // admitted request (the bucket's start) to two seconds before the last (the queue draining).
  const sorted = [...admitted].sort((a, b) => a - b);
  const from = sorted[0]! + LIMIT.windowMs;
  const to = sorted.at(-1)! - 2000;
  const inSpan = sorted.filter((t) => t >= from && t <= to).length;
  const utilization = to > from ? inSpan / ((to - from) / LIMIT.windowMs) / LIMIT.requests : NaN;
  return {
    seconds,
    admitted: admitted.length,
    refused: refused.length,
    share429: refused.length / (admitted.length + refused.length),
    failedCases: json.cases.filter((c) => !c.passed && c.error_kind === "infra").length,
    utilization,
    exitCode: code,
  };
}

const nats = await startNatsServer();
try {
  if (shortWindow) {
    const side = await scenario(true, nats.url, "bench-provider-short-window");
    process.stderr.write(`  provider, 4 per rolling second: ${JSON.stringify(side)}\n`);
    console.log(
      JSON.stringify({
        provider_short_window_utilization: side.utilization,
        provider_short_window_429_share: side.share429,
        provider_short_window_failed_cases: side.failedCases,
        provider_short_window_cases: CASES,
        provider_short_window_seconds: side.seconds,
      }),
    );
    await nats.stop();
    process.exit(0);
  }
  const sharedSide = await scenario(true, nats.url, "bench-provider-shared");
  process.stderr.write(`  provider, shared limit: ${JSON.stringify(sharedSide)}\n`);
  const unshared = await scenario(false, nats.url, "bench-provider-unshared");
  process.stderr.write(`  provider, no shared limit: ${JSON.stringify(unshared)}\n`);
  console.log(
    JSON.stringify({
      provider_cases: CASES,
      provider_limit_requests: LIMIT.requests,
      provider_window_seconds: LIMIT.windowMs / 1000,
      provider_utilization: sharedSide.utilization,
      provider_failed_cases: sharedSide.failedCases,
      provider_429_share: sharedSide.share429,
      provider_seconds: sharedSide.seconds,
      provider_unshared_failed_cases: unshared.failedCases,
      provider_unshared_429_share: unshared.share429,
      provider_unshared_seconds: unshared.seconds,
    }),
  );
} finally {
  await nats.stop();
}
process.exit(0);
