/**
 * Trials spread over the fleet (issue 28): 50 cases x 10 trials of a 200 ms agent over 3 workers
 * (50 slots each), each trial its own delivery (`--repeat 10`), against every trial of a case run
 * one after another on the worker that took it (the same cases, no --repeat, an agent that waits
 * its 200 ms ten times in a row: what a worker did when it ran all of a case's trials itself).
 * Real processes: a private nats-server, a coordinator, three workers of the compiled package.
 * The workers are started first and the coordinator once every worker's `/readyz` answers (a
 * standing fleet, as a nightly run meets it), so the workers' start-up is in neither figure; the
 * figure is the coordinator's own run time (`summary.duration_seconds` of its JSON report), the
 * fastest of ROUNDS. Prints both and their ratio, then a
 * JSON line: `{ repeat_spread_seconds, repeat_one_worker_seconds, repeat_spread_speedup, ... }`.
 * Run: `node --import tsx bench/repeat-spread.ts [--quick]` (after `npm run build`).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer } from "../integration/harness/nats-server.ts";

const quick = process.argv.includes("--quick");
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin", "evalfleet.mjs");
const suite = join(root, "bench", "spread-suite.mjs");
const CASES = 50;
const TRIALS = 10;
const LATENCY_MS = 200;
const WORKERS = 3;
const SLOTS = 50;
const ROUNDS = quick ? 1 : 3;

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, err })));
}

/** A port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Waits until the worker on `port` says it is ready (60 s at most: a loaded machine starts slowly). */
async function ready(port: number): Promise<void> {
  for (const until = Date.now() + 60_000; Date.now() < until; ) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the worker on port ${port} was not ready within 60 s`);
}

/** One run: the coordinator's run time in seconds. */
async function timed(url: string, runId: string, repeat: number, inner: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-spread-"));
  try {
    const env = { NATS_URL: url, BENCH_CASES: String(CASES), BENCH_LATENCY_MS: String(LATENCY_MS), BENCH_INNER: String(inner) };
    const json = join(dir, "r.json");
    const ports = await Promise.all(Array.from({ length: WORKERS }, () => freePort()));
    const workers = ports.map((port) => run(["worker", suite, "--run", runId, "--threads", "1", "--concurrency", String(SLOTS), "--http-port", String(port), "--log-level", "error"], env));
    await Promise.all(ports.map((port) => ready(port)));
    const c = await run(["coordinator", "run", suite, "--run-id", runId, ...(repeat > 1 ? ["--repeat", String(repeat)] : []), "--json-output", json, "--log-level", "error"], env);
    await Promise.all(workers);
    if (c.code !== 0) throw new Error(`the coordinator exited ${c.code}: ${c.err.trim().split("\n").slice(-3).join(" | ")}`);
    const report = JSON.parse(readFileSync(json, "utf8")) as { summary: { duration_seconds: number; passed: number } };
    if (report.summary.passed !== CASES) throw new Error(`${report.summary.passed} of ${CASES} cases passed`);
    return report.summary.duration_seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const server = await startNatsServer();
try {
  let spread = Infinity;
  let oneWorker = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    spread = Math.min(spread, await timed(server.url, `spread-${round}`, TRIALS, 1));
    oneWorker = Math.min(oneWorker, await timed(server.url, `one-worker-${round}`, 1, TRIALS));
  }
  console.log(`${CASES} cases x ${TRIALS} trials of ${LATENCY_MS} ms over ${WORKERS} workers x ${SLOTS} slots`);
  console.log(`  trials spread (each its own delivery)   ${spread.toFixed(2)} s`);
  console.log(`  a case's trials on the worker that took it ${oneWorker.toFixed(2)} s`);
  console.log(`  speedup ${(oneWorker / spread).toFixed(2)} (target >= 2)`);
  console.log(JSON.stringify({ repeat_spread_seconds: spread, repeat_one_worker_seconds: oneWorker, repeat_spread_speedup: oneWorker / spread, repeat_spread_cases: CASES, repeat_spread_trials: TRIALS }));
} finally {
  await server.stop();
}
