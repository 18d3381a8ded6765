// `npm run bench` (full, several minutes) or `npm run bench -- --quick` (under two minutes);
// `npm run bench -- --only serve [--quick]` runs one scenario and merges its keys into results.json.
// Measures evalfleet side by side on this machine, prints one table, writes bench/results.json
// and renders bench/README.md from it (bench/render-readme.ts).
// Every scenario runs in a fresh process (bench/scenario.ts); workers and nats-server are real
// processes whose CPU and memory are read from /proc.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { findNatsServerBinary, startNatsServer, type TestNatsServer } from "../integration/harness/nats-server.ts";
import { cpuMs, rssBytes } from "./proc-stats.ts";
import { CASES_STREAM, runConsumer } from "../shared/broker/subjects.ts";
import { scalingModel } from "./scaling-model.ts";
import { writeBenchReadme } from "./render-readme.ts";
import { startupFigures } from "./startup.ts";

const quick = process.argv.includes("--quick");
const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin", "evalfleet.mjs");
const RUNS = quick ? 1 : 3;
const N = quick ? 10_000 : 20_000;
const MEM_N = quick ? 20_000 : 100_000;
const LAT_N = quick ? 5_000 : 10_000;
/** Cases run once in the measuring process before the clock starts (as in the team's baselines). */
const WARMUP = 2_000;

interface DatasetOut {
  rows: number;
  dataset_bytes: number;
  load_seconds: number;
  cases_per_s: number;
  heap_per_row_loaded: number;
  heap_per_row_if_materialized: number;
  heap_per_case_after_run: number;
  peak_rss_bytes: number;
}

interface ScenarioOut {
  mode: string;
  cases: number;
  seconds: number;
  cases_per_s: number;
  cpu_ms: number;
  others_cpu_ms: number[];
  rss_before: number;
  rss_after: number;
  heap_before: number;
  heap_held: number;
  heap_after_gc: number;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Runs a bench script in a fresh process and parses the JSON line it prints last. */
async function jsonScenario<T>(script: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  const child = spawn(process.execPath, ["--expose-gc", "--conditions=evalfleet-source", "--import", "tsx", join(root, "bench", script), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  const line = out.trim().split("\n").pop() ?? "";
  if (code !== 0 || !line.startsWith("{")) throw new Error(`${script} ${args.join(" ")} failed (${code}): ${err.trim().split("\n").slice(-3).join(" | ")}`);
  return JSON.parse(line) as T;
}

function scenario(args: string[], env: Record<string, string>): Promise<ScenarioOut> {
  return jsonScenario<ScenarioOut>("scenario.ts", args, env);
}

function startWorkers(count: number, url: string, env: Record<string, string>, concurrency: number, threads: number): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, [bin, "worker", join(root, "bench", "trivial-suite.ts"), "--nats", url, "--concurrency", String(concurrency), "--threads", String(threads), "--log-level", "error"], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "inherit"],
    }),
  );
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGKILL");
        }),
    ),
  );
}

/** A distributed run measured from the coordinator; workers stay up across runs of one configuration. */
async function distributed(server: TestNatsServer, workers: number, cases: number, perWorker: number, latencyMs: number, runs: number) {
  const env = { BENCH_CASES: String(cases), BENCH_LATENCY_MS: String(latencyMs) };
  const procs = startWorkers(workers, server.url, env, perWorker, 2);
  try {
    const outs: ScenarioOut[] = [];
    // The largest worker RSS after each run: a worker that serves run after run must not grow.
    const rssAfterRuns: number[] = [];
    for (let i = 0; i < runs; i++) {
      const pids = [...procs.map((p) => p.pid!), server.pid ?? 0].filter(Boolean);
      outs.push(await scenario(["--mode", "coordinator", "--nats", server.url, "--warmup", i === 0 ? String(Math.min(500, cases)) : "0", "--watch-pids", pids.join(",")], env));
      rssAfterRuns.push(Math.max(...procs.map((p) => rssBytes(p.pid!) ?? 0)));
    }
    const best = [...outs].sort((a, b) => a.seconds - b.seconds)[Math.floor(outs.length / 2)]!;
    const workerRss = procs.map((p) => rssBytes(p.pid!) ?? 0);
    return { out: best, workerRss, rssAfterRuns };
  } finally {
    await stopAll(procs);
  }
}

async function cancelLatency(server: TestNatsServer): Promise<number> {
  const env = { BENCH_CASES: "1500", BENCH_LATENCY_MS: "600000" };
  const procs = startWorkers(2, server.url, env, 500, 2);
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-"));
  const report = join(dir, "cancel.json");
  const runId = `bench-cancel-${Date.now().toString(36)}`;
  const coordinator = spawn(process.execPath, [bin, "coordinator", "run", join(root, "bench", "trivial-suite.ts"), "--nats", server.url, "--run-id", runId, "--json-output", report, "--cancel-grace", "10"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    const until = Date.now() + 120_000;
    for (;;) {
      const info = await jsm.consumers.info(CASES_STREAM, runConsumer(runId)).catch(() => null);
      if (info && info.num_ack_pending >= 1000) break;
      if (Date.now() > until) throw new Error("cancel scenario: 1,000 cases never got in flight");
      await new Promise((r) => setTimeout(r, 100));
    }
    await nc.close();
    // "In flight" means running: wait until the workers have gone quiet (threads up, every case
    // started and waiting on its model). A cancel during thread start-up is a different figure:
    // those cases are reported as not started after 250 ms (see docs/writing-suites.md).
    for (const quietBy = Date.now() + 60_000; Date.now() < quietBy; ) {
      const before = procs.reduce((n, p) => n + (cpuMs(p.pid!) ?? 0), 0);
      await new Promise((r) => setTimeout(r, 500));
      const used = procs.reduce((n, p) => n + (cpuMs(p.pid!) ?? 0), 0) - before;
      if (used < 50) break;
    }
    const exited = new Promise<number | null>((r) => coordinator.once("exit", r));
    const t0 = performance.now();
    coordinator.kill("SIGINT");
    const code = await exited;
    const seconds = (performance.now() - t0) / 1000;
    if (code !== 3 || !existsSync(report)) throw new Error(`cancel scenario: coordinator exited ${code}, report ${existsSync(report) ? "written" : "missing"}`);
    const payload = JSON.parse(readFileSync(report, "utf8")) as { summary: { total: number } };
    if (payload.summary.total !== 1500) throw new Error("cancel scenario: report does not hold every case");
    return seconds;
  } finally {
    await stopAll([...procs, coordinator]);
  }
}

/**
 * `evalfleet serve` over a store of 100,000 cases and 30 earlier runs of 2,000 (bench/serve.ts; in
 * the quick run 10,000 and 5 of 500): on SQLite, and on PostgreSQL too when the tests' server
 * answers (test/support/postgres.ts). Keys `serve_*` (SQLite) and `serve_pg_*`.
 */
async function serveFigures(): Promise<Record<string, number>> {
  const { postgresUnavailable } = await import("../test/support/postgres.ts");
  const pgSkip = await postgresUnavailable();
  const out: Record<string, number> = {};
  for (const backend of pgSkip ? ["sqlite"] : ["sqlite", "postgres"]) {
    const figures = await jsonScenario<Record<string, unknown>>("serve.ts", [...(quick ? ["--quick"] : []), "--backend", backend]);
    const prefix = backend === "sqlite" ? "serve_" : "serve_pg_";
    for (const [key, value] of Object.entries(figures)) if (typeof value === "number") out[`${prefix}${key}`] = value;
    const f = (key: string): string => (typeof figures[key] === "number" ? (figures[key] as number).toFixed(0) : "?");
    log(
      `  serve on ${backend}, ${figures.cases} cases: page of failures p95 ${f("cases_page_p95_ms")} ms, search p95 ${f("search_p95_ms")} ms, runs list p95 ${f("runs_list_p95_ms")} ms, ` +
        `first paint ${f("first_paint_ms")} ms, live lag ${f("live_lag_ms")} ms, RSS ${(Number(figures.rss_bytes) / 2 ** 20).toFixed(0)} MiB (store built in ${Number(figures.build_s).toFixed(0)} s)`,
    );
  }
  if (pgSkip) log(`  serve on PostgreSQL: not measured (${pgSkip})`);
  return out;
}

/**
 * `--only NAME`: one scenario alone, its keys merged into the bench/results.json already there
 * (the other figures are kept as they were), then bench/README.md rendered again.
 */
const ONLY_SCENARIOS: Record<string, () => Promise<Record<string, number>>> = { serve: serveFigures };
const onlyAt = process.argv.indexOf("--only");
if (onlyAt > 0) {
  const name = process.argv[onlyAt + 1] ?? "";
  const scenarioOf = ONLY_SCENARIOS[name];
  if (!scenarioOf) {
    log(`--only: one of ${Object.keys(ONLY_SCENARIOS).join(", ")}, not ${JSON.stringify(name)}`);
    process.exit(2);
  }
  log(`evalfleet benchmark, ${name} only (${quick ? "quick" : "full"}): ${availableParallelism()} cores, node ${process.version}`);
  const figures = await scenarioOf();
  const path = join(root, "bench", "results.json");
  const previous = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeFileSync(path, `${JSON.stringify({ ...previous, ...figures }, null, 2)}\n`);
  console.log(`${Object.entries(figures).map(([k, v]) => `${k.padEnd(34)} ${Number.isInteger(v) ? v : v.toFixed(2)}`).join("\n")}\n\nwrote bench/results.json (${name}'s keys; the others as they were)`);
  writeBenchReadme();
  console.log("wrote bench/README.md (from bench/results.json and bench/README.template.md)");
  process.exit(0);
}

// ------------------------------------------------------------------------------------------------
const natsBin = findNatsServerBinary();
const natsVersion = natsBin ? spawnSync(natsBin, ["--version"], { encoding: "utf8" }).stdout.trim() : "none";
log(`evalfleet benchmark (${quick ? "quick" : "full"}): ${availableParallelism()} cores, node ${process.version}, ${natsVersion}`);

// The compiled command's start-up first, on a quiet machine (bench/startup.ts).
const startup = await startupFigures(root, quick, log);

const inproc: Record<string, ScenarioOut[]> = { baseline: [], inline: [], local: [] };
for (let i = 0; i < RUNS; i++) {
  for (const mode of ["baseline", "inline", "local"] as const) {
    // Local mode starts a fresh pool per run, so it pays thread start-up each time; its steady rate is measured below.
    const warmup = mode === "local" ? [] : ["--warmup", String(WARMUP)];
    inproc[mode]!.push(await scenario(["--mode", mode, "--concurrency", "64", "--threads", "2", ...warmup], { BENCH_CASES: String(N) }));
    log(`  ${mode} run ${i + 1}: ${inproc[mode]!.at(-1)!.cases_per_s.toFixed(0)} cases/s`);
  }
}
const rate = (mode: string): number => median(inproc[mode]!.map((o) => o.cases_per_s));

// Local mode pays a fixed start-up (threads loading tsx and the suite) that dominates short runs.
// Its steady rate is the marginal one: runs of N and 3N cases, 2N / (t(3N) - t(N)); the start-up is
// what is left of t(N).
const localLong: number[] = [];
for (let i = 0; i < RUNS; i++) {
  localLong.push((await scenario(["--mode", "local", "--concurrency", "64", "--threads", "2"], { BENCH_CASES: String(3 * N) })).seconds);
}
const localShort = median(inproc.local!.map((o) => o.seconds));
const localSteady = (2 * N) / Math.max(1e-3, median(localLong) - localShort);
const localStartup = Math.max(0, localShort - N / localSteady);
log(`  local, steady state: ${localSteady.toFixed(0)} cases/s (start-up ${localStartup.toFixed(2)} s)`);

// A MEM_N-row JSONL dataset run in local mode: what the coordinator holds per row (bench/dataset-scenario.ts).
const ds = await datasetScenario(MEM_N);
log(`  dataset of ${MEM_N} rows: ${ds.heap_per_row_loaded.toFixed(0)} B/row held after loading (${ds.heap_per_row_if_materialized.toFixed(0)} B/row with every row in memory), ${ds.heap_per_case_after_run.toFixed(0)} B/case after the run`);

// The HTML report of a 50,000-case run: file size, render time, time until interactive in headless Chromium (bench/html-report.ts).
const htmlReport = await jsonScenario<{ html_bytes: number; html_render_s: number; html_interactive_s: number | null; html_open_case_s: number | null }>("html-report.ts", ["--cases", "50000"]);
log(`  HTML report of 50,000 cases: ${(htmlReport.html_bytes / 2 ** 20).toFixed(1)} MiB, rendered in ${htmlReport.html_render_s.toFixed(2)} s, interactive in ${htmlReport.html_interactive_s?.toFixed(2) ?? "? (no Chromium)"} s`);

// What keeping transcripts costs the process that collects the results (bench/transcript-memory.ts):
// the same run of big outputs, unrecorded and recorded with every transcript kept.
const transcripts = await jsonScenario<{ cases: number; transcript_kb: number; heap_bytes_per_case_unrecorded: number; heap_bytes_per_case_recorded_with_transcripts: number; transcript_bytes_stored_per_case: number }>(
  "transcript-memory.ts",
  [],
  { BENCH_CASES: quick ? "1000" : "2000" },
);
log(
  `  transcripts (${transcripts.cases} cases of ${transcripts.transcript_kb} KiB): collector heap ${transcripts.heap_bytes_per_case_unrecorded} B/case unrecorded, ${transcripts.heap_bytes_per_case_recorded_with_transcripts} B/case recorded with transcripts`,
);

// The trajectory check on one case of 50 tool calls and 10 matchers (bench/trajectory-check.ts).
const trajectory = await jsonScenario<{ trajectory_check_us_per_case: number; trajectory_check_median_us_per_case: number; trajectory_check_failing_us_per_case: number }>("trajectory-check.ts", []);
log(`  trajectory check, 50 tool calls and 10 matchers: ${trajectory.trajectory_check_us_per_case.toFixed(1)} us per case (failing: ${trajectory.trajectory_check_failing_us_per_case.toFixed(1)} us)`);
// Record and replay (bench/replay.ts): 2,000 cases of 5 HTTP exchanges, recorded then replayed locally.
const replay = await jsonScenario<{ replay_cases_per_s: number; record_cases_per_s: number; replay_plain_cases_per_s: number; replay_overhead_us_per_case: number; replay_cases: number; replay_exchanges_per_case: number }>("replay.ts", [], { BENCH_CASES: "2000" });
log(`  replay, ${replay.replay_cases} cases x ${replay.replay_exchanges_per_case} exchanges: ${replay.replay_cases_per_s.toFixed(0)} cases/s (recording ${replay.record_cases_per_s.toFixed(0)}; no requests ${replay.replay_plain_cases_per_s.toFixed(0)})`);
// Verdicts under nondeterminism (bench/verdict-simulation.ts): the gate's false alarms and power,
// and adaptive repeats' savings, simulated through the statistics the CLI uses (seconds, no I/O).
const verdicts = await jsonScenario<Record<string, number>>("verdict-simulation.ts", []);
log(
  `  verdicts: gate false alarms ${verdicts.gate_false_alarm_rate!.toFixed(3)} (today's flip rule ${verdicts.gate_false_alarm_rate_raw_flips!.toFixed(3)}), power ${verdicts.gate_power!.toFixed(3)}; ` +
    `adaptive repeats spend ${verdicts.adaptive_trials_ratio!.toFixed(3)} of the trials at ${(verdicts.adaptive_agreement! * 100).toFixed(1)}% agreement`,
);
// The same rule end to end through `evalfleet run` (bench/adaptive-cli.ts): 400 simulated cases, 3..20 against 20.
const adaptiveCli = await jsonScenario<Record<string, number>>("adaptive-cli.ts", []);
log(`  adaptive repeats end to end: ${adaptiveCli.adaptive_cli_trials_ratio!.toFixed(3)} of the trials, verdicts agreeing ${(adaptiveCli.adaptive_cli_agreement! * 100).toFixed(1)}% with an independent fixed run`);

// Trials spread over the fleet (bench/repeat-spread.ts): 50 cases x 10 trials of 200 ms over 3
// workers, each trial its own delivery, against a case's trials one after another on one worker.
const spread = await jsonScenario<{ repeat_spread_seconds: number; repeat_one_worker_seconds: number; repeat_spread_speedup: number; repeat_spread_cases: number; repeat_spread_trials: number }>(
  "repeat-spread.ts",
  quick ? ["--quick"] : [],
);
log(`  trials spread: ${spread.repeat_spread_seconds.toFixed(2)} s, a case's trials on one worker ${spread.repeat_one_worker_seconds.toFixed(2)} s (speedup ${spread.repeat_spread_speedup.toFixed(2)})`);

// What the unknown-option check of `new Case` costs (bench/case-construction.ts): construction with
// the check on and off side by side, and the check alone.
const construction = await jsonScenario<{ cases: number; ns_per_case_checked: number; ns_per_case_unchecked: number; key_check_ns_per_case: number; key_check_alone_ns: number; key_check_share: number }>(
  "case-construction.ts",
  quick ? ["--quick"] : [],
);
log(
  `  new Case: ${construction.ns_per_case_checked} ns/case with the key check, ${construction.ns_per_case_unchecked} without; ` +
    `the check alone ${construction.key_check_alone_ns} ns (${(construction.key_check_share * 100).toFixed(1)}%)`,
);

// The start order from history (bench/makespan-simulation.ts): 2,000 lognormal cases on 3 x 8
// slots, ordered by the real ordering code, list-scheduled (a second, no I/O).
const makespan = await jsonScenario<Record<string, number>>("makespan-simulation.ts", []);
log(`  makespan over its lower bound: ${makespan.makespan_ratio!.toFixed(3)} longest first from history, ${makespan.makespan_ratio_declared!.toFixed(3)} in declaration order`);

// The live viewer over a 100,000-case store (bench/serve.ts): its API, a page in Chromium, live lag, RSS.
const serve = await serveFigures();

function datasetScenario(rows: number): Promise<DatasetOut> {
  return jsonScenario<DatasetOut>("dataset-scenario.ts", ["--rows", String(rows)]);
}

const server = await startNatsServer();
let results: Record<string, unknown>;
try {
  // At least 4 runs on the same worker, so its RSS after each shows whether it grows once warm.
  const d1 = await distributed(server, 1, N, 64, 0, Math.max(RUNS, 4));
  log(`  worker RSS after each run: ${d1.rssAfterRuns.map((b) => `${(b / 2 ** 20).toFixed(0)} MiB`).join(", ")}`);
  log(`  distributed, 1 worker: ${d1.out.cases_per_s.toFixed(0)} cases/s`);
  const d2 = await distributed(server, 2, N, 64, 0, RUNS);
  log(`  distributed, 2 workers: ${d2.out.cases_per_s.toFixed(0)} cases/s`);
  // 1,000 in flight as one worker with 1,000 slots and as two with 500 each; the better counts.
  const ideal1000 = (LAT_N * 0.1) / 1000;
  const lat1000by = [await distributed(server, 1, LAT_N, 1000, 100, 1), await distributed(server, 2, LAT_N, 500, 100, 1)];
  lat1000by.forEach((l, i) => log(`  100 ms latency at 1,000 in flight, ${i + 1} worker${i ? "s" : ""}: ${l.out.seconds.toFixed(2)}s (ideal ${ideal1000.toFixed(2)}s)`));
  const lat1000 = lat1000by[0]!.out.seconds <= lat1000by[1]!.out.seconds ? lat1000by[0]! : lat1000by[1]!;
  const lat100 = await distributed(server, 2, LAT_N, 50, 100, 1);
  const ideal100 = (LAT_N * 0.1) / 100;
  log(`  100 ms latency at 100 in flight, 2 workers: ${lat100.out.seconds.toFixed(2)}s (ideal ${ideal100.toFixed(2)}s)`);
  const mem = await distributed(server, 2, MEM_N, 64, 0, 1);
  log(`  ${MEM_N} cases: coordinator heap held ${((mem.out.heap_held - mem.out.heap_before) / MEM_N).toFixed(0)} B/case`);
  const cancel = await cancelLatency(server);
  log(`  cancel with 1,000 in flight: ${cancel.toFixed(2)}s to the final report`);
  // The model provider as the limit (bench/provider-scenario.ts): with the fleet's shared limit, and without.
  const provider = await jsonScenario<Record<string, number>>("provider-scenario.ts", quick ? ["--quick"] : []);
  // A short window (4 per rolling second): the adaptive pace's utilisation of it.
  const shortWindow = await jsonScenario<Record<string, number>>("provider-scenario.ts", ["--short-window"]);
  log(`  provider, 4 per rolling second: utilization ${Number(shortWindow.provider_short_window_utilization).toFixed(3)}, ${shortWindow.provider_short_window_failed_cases} failed, 429 share ${Number(shortWindow.provider_short_window_429_share).toFixed(3)}`);
  log(`  provider: utilization ${Number(provider.provider_utilization).toFixed(3)}, ${provider.provider_failed_cases} failed, 429 share ${Number(provider.provider_429_share).toFixed(3)}; without the shared limit: ${provider.provider_unshared_failed_cases} failed, 429 share ${Number(provider.provider_unshared_429_share).toFixed(3)}`);

  const best = d1.out.cases_per_s >= d2.out.cases_per_s ? d1 : d2;
  const [workerCpu, serverCpu] = splitOthers(best.out, best === d1 ? 1 : 2);
  results = {
    baseline_cases_per_s: rate("baseline"),
    inline_cases_per_s: rate("inline"),
    local_cases_per_s: rate("local"),
    local_steady_cases_per_s: localSteady,
    local_startup_s: localStartup,
    distributed_cases_per_s: best.out.cases_per_s,
    distributed_1_worker_cases_per_s: d1.out.cases_per_s,
    distributed_2_workers_cases_per_s: d2.out.cases_per_s,
    latency_efficiency_1000: ideal1000 / lat1000.out.seconds,
    latency_efficiency_1000_workers: lat1000 === lat1000by[0] ? 1 : 2,
    latency_1000_cases_per_s: lat1000.out.cases_per_s,
    latency_1000_cpu_ms_per_case: (lat1000.out.cpu_ms + lat1000.out.others_cpu_ms.reduce((a, b) => a + b, 0)) / lat1000.out.cases,
    latency_efficiency_100: ideal100 / lat100.out.seconds,
    coordinator_cpu_ms_per_case: best.out.cpu_ms / best.out.cases,
    worker_cpu_ms_per_case: workerCpu / best.out.cases,
    nats_server_cpu_ms_per_case: serverCpu / best.out.cases,
    coordinator_rss_bytes_per_case: Math.max(0, mem.out.rss_after - mem.out.rss_before) / MEM_N,
    coordinator_heap_bytes_per_case: Math.max(0, mem.out.heap_after_gc - mem.out.heap_before) / MEM_N,
    worker_rss_bytes_after_long_run: Math.max(...mem.workerRss),
    worker_rss_runs: d1.rssAfterRuns.length,
    worker_rss_after_first_run_bytes: d1.rssAfterRuns[0]!,
    worker_rss_after_last_run_bytes: d1.rssAfterRuns.at(-1)!,
    // From the end of the second run (warm) to the end of the last.
    worker_rss_growth_after_warm_bytes: d1.rssAfterRuns.at(-1)! - d1.rssAfterRuns[1]!,
    cancel_to_report_s: cancel,
    ...startup,
    ...provider,
    ...shortWindow,
    ...verdicts,
    ...adaptiveCli,
    ...makespan,
    ...serve,
    cases: N,
    memory_cases: MEM_N,
    dataset_rows: ds.rows,
    dataset_bytes: ds.dataset_bytes,
    dataset_load_seconds: ds.load_seconds,
    dataset_local_cases_per_s: ds.cases_per_s,
    dataset_heap_bytes_per_row_loaded: ds.heap_per_row_loaded,
    dataset_heap_bytes_per_row_if_materialized: ds.heap_per_row_if_materialized,
    dataset_heap_bytes_per_case_after_run: ds.heap_per_case_after_run,
    dataset_peak_rss_bytes: ds.peak_rss_bytes,
    transcript_cases: transcripts.cases,
    transcript_kb: transcripts.transcript_kb,
    transcript_heap_bytes_per_case_unrecorded: transcripts.heap_bytes_per_case_unrecorded,
    transcript_heap_bytes_per_case_recorded: transcripts.heap_bytes_per_case_recorded_with_transcripts,
    transcript_bytes_stored_per_case: transcripts.transcript_bytes_stored_per_case,
    ...trajectory,
    ...replay,
    ...spread,
    case_construction_cases: construction.cases,
    case_construction_ns_checked: construction.ns_per_case_checked,
    case_construction_ns_unchecked: construction.ns_per_case_unchecked,
    case_key_check_ns: construction.key_check_alone_ns,
    case_key_check_share: construction.key_check_share,
    html_50k_bytes: htmlReport.html_bytes,
    html_render_50k_s: htmlReport.html_render_s,
    ...(htmlReport.html_interactive_s !== null ? { html_interactive_50k_s: htmlReport.html_interactive_s, html_open_case_50k_s: htmlReport.html_open_case_s } : {}),
    latency_cases: LAT_N,
    quick,
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, nats_server: natsVersion },
    measured_at: new Date().toISOString(),
  };
} finally {
  await server.stop();
}

function splitOthers(out: ScenarioOut, workers: number): [number, number] {
  const w = out.others_cpu_ms.slice(0, workers).reduce((a, b) => a + b, 0);
  const s = out.others_cpu_ms[workers] ?? 0;
  return [w, s];
}

const r = results as Record<string, number>;
const base = r.baseline_cases_per_s!;
const rows: Array<[string, string, string]> = [
  ["baseline (p-limit, direct calls)", `${r.baseline_cases_per_s!.toFixed(0)} cases/s`, "1.000x"],
  ["runCases inline", `${r.inline_cases_per_s!.toFixed(0)} cases/s`, `${(r.inline_cases_per_s! / base).toFixed(3)}x`],
  ["evalfleet run (local, 2 threads)", `${r.local_cases_per_s!.toFixed(0)} cases/s`, `${(r.local_cases_per_s! / base).toFixed(3)}x`],
  ["evalfleet run, steady state (start-up excluded)", `${r.local_steady_cases_per_s!.toFixed(0)} cases/s`, `${(r.local_steady_cases_per_s! / base).toFixed(3)}x; start-up ${r.local_startup_s!.toFixed(2)} s`],
  ["coordinator run, 1 worker", `${r.distributed_1_worker_cases_per_s!.toFixed(0)} cases/s`, `${(r.distributed_1_worker_cases_per_s! / base).toFixed(3)}x`],
  ["coordinator run, 2 workers", `${r.distributed_2_workers_cases_per_s!.toFixed(0)} cases/s`, `${(r.distributed_2_workers_cases_per_s! / base).toFixed(3)}x`],
  ["latency efficiency, 1,000 in flight", r.latency_efficiency_1000!.toFixed(3), `target >= 0.85; ${r.latency_efficiency_1000_workers} worker(s), ${r.latency_1000_cases_per_s!.toFixed(0)} cases/s, ${r.latency_1000_cpu_ms_per_case!.toFixed(3)} ms CPU/case in all`],
  ["latency efficiency, 100 in flight", r.latency_efficiency_100!.toFixed(3), ""],
  ["coordinator CPU per case", `${r.coordinator_cpu_ms_per_case!.toFixed(3)} ms`, "target <= 0.07"],
  ["worker CPU per case (all workers)", `${r.worker_cpu_ms_per_case!.toFixed(3)} ms`, ""],
  ["nats-server CPU per case", `${r.nats_server_cpu_ms_per_case!.toFixed(3)} ms`, ""],
  [`coordinator RSS per case (${MEM_N})`, `${r.coordinator_rss_bytes_per_case!.toFixed(0)} B`, "target <= 600"],
  [`coordinator heap per case held (${MEM_N})`, `${r.coordinator_heap_bytes_per_case!.toFixed(0)} B`, ""],
  ["worker RSS after the long run", `${(r.worker_rss_bytes_after_long_run! / 2 ** 20).toFixed(0)} MiB`, ""],
  [`one worker's RSS after run 1 / after run ${r.worker_rss_runs}`, `${(r.worker_rss_after_first_run_bytes! / 2 ** 20).toFixed(0)} / ${(r.worker_rss_after_last_run_bytes! / 2 ** 20).toFixed(0)} MiB`, `growth once warm (run 2 to ${r.worker_rss_runs}): ${(r.worker_rss_growth_after_warm_bytes! / 2 ** 20).toFixed(1)} MiB`],
  ["SIGINT to final report, 1,000 in flight", `${r.cancel_to_report_s!.toFixed(2)} s`, "target <= 2"],
  [`provider utilization, shared limit (${r.provider_limit_requests} per ${r.provider_window_seconds} s)`, r.provider_utilization!.toFixed(3), "target >= 0.95"],
  ["provider utilization, 4 per rolling second (3 workers x 10)", r.provider_short_window_utilization!.toFixed(3), `target >= 0.85; 429 share ${r.provider_short_window_429_share!.toFixed(3)} (target <= 0.02), ${r.provider_short_window_failed_cases} failed`],
  ["provider: failed cases / 429 share, shared limit", `${r.provider_failed_cases} / ${r.provider_429_share!.toFixed(3)}`, "targets 0 / <= 0.01"],
  ["provider: failed cases / 429 share, no shared limit", `${r.provider_unshared_failed_cases} / ${r.provider_unshared_429_share!.toFixed(3)}`, "each process on its own, client retries only"],
  ["gate false alarms, same agent twice (--repeat 10)", r.gate_false_alarm_rate!.toFixed(3), `target <= 0.05; today's flip rule ${r.gate_false_alarm_rate_raw_flips!.toFixed(3)}`],
  ["gate power, 40 cases 0.5 worse (--repeat 10)", r.gate_power!.toFixed(3), `target >= 0.9; one trial per case ${r.gate_power_single_trial!.toFixed(3)}`],
  ["adaptive --repeat 3..20 over fixed --repeat 20, trials", r.adaptive_trials_ratio!.toFixed(3), `target <= 0.4; verdicts agree on ${(r.adaptive_agreement! * 100).toFixed(1)}% (target >= 95%)`],
  ["makespan / max(longest, work / slots), 2,000 lognormal cases on 3 x 8", r.makespan_ratio!.toFixed(3), `target <= 1.05 (--order history); declaration order ${r.makespan_ratio_declared!.toFixed(3)}, worst of 20 ${r.makespan_ratio_declared_max!.toFixed(3)}`],
  [`dataset (${MEM_N} JSONL rows): heap per row after loading`, `${r.dataset_heap_bytes_per_row_loaded!.toFixed(0)} B`, `rows in memory: ${r.dataset_heap_bytes_per_row_if_materialized!.toFixed(0)} B`],
  [`dataset (${MEM_N} JSONL rows): heap per case after the run`, `${r.dataset_heap_bytes_per_case_after_run!.toFixed(0)} B`, "target <= 1024"],
  [`dataset (${MEM_N} JSONL rows): local mode`, `${r.dataset_local_cases_per_s!.toFixed(0)} cases/s`, `load ${r.dataset_load_seconds!.toFixed(2)} s`],
  ["trajectory check, 50 tool calls and 10 matchers", `${r.trajectory_check_us_per_case!.toFixed(1)} us`, `target <= 50; failing ${r.trajectory_check_failing_us_per_case!.toFixed(1)} us`],
  [`replay, ${r.replay_cases} cases x ${r.replay_exchanges_per_case} HTTP exchanges, local`, `${r.replay_cases_per_s!.toFixed(0)} cases/s`, `target >= 2000; recording ${r.record_cases_per_s!.toFixed(0)}/s; no requests ${r.replay_plain_cases_per_s!.toFixed(0)}/s`],
];
// Item 6 of the issue: the scaling model, from this run's measured cost per case and layer.
const SLOTS_PER_MACHINE = 500;
const shape = { cases: 100_000, caseSeconds: 5, withinSeconds: 3600, slotsPerMachine: SLOTS_PER_MACHINE, coresPerMachine: 2 };
const model = scalingModel({ coordinatorMs: r.coordinator_cpu_ms_per_case!, workerMs: r.worker_cpu_ms_per_case!, brokerMs: r.nats_server_cpu_ms_per_case! }, shape);
Object.assign(results, {
  scaling_cases_per_s_needed: model.casesPerSecond,
  scaling_in_flight_needed: model.inFlight,
  scaling_worker_machines: model.workerMachines,
  scaling_coordinator_cores: model.coordinatorCores,
  scaling_broker_cores: model.brokerCores,
  scaling_coordinator_limit_cases_per_s_per_core: model.coordinatorLimitPerCore,
  scaling_broker_limit_cases_per_s_per_core: model.brokerLimitPerCore,
});
if (r.serve_cases_page_p95_ms !== undefined) {
  const ms = (key: string): string => (r[key] === undefined ? "?" : `${r[key]!.toFixed(0)} ms`);
  rows.push(
    [`serve: failed cases, a page of 50, of ${r.serve_cases} (p95)`, ms("serve_cases_page_p95_ms"), `target <= 100; PostgreSQL ${ms("serve_pg_cases_page_p95_ms")}`],
    [`serve: search across ${r.serve_cases} cases (p95)`, ms("serve_search_p95_ms"), `target <= 300; PostgreSQL ${ms("serve_pg_search_p95_ms")}`],
    ["serve: runs list (p95)", ms("serve_runs_list_p95_ms"), `target <= 50; PostgreSQL ${ms("serve_pg_runs_list_p95_ms")}`],
    ["serve: run page in Chromium until the case table shows", ms("serve_first_paint_ms"), `target <= 1000; PostgreSQL ${ms("serve_pg_first_paint_ms")}`],
    ["serve: a result written until the open page shows it", ms("serve_live_lag_ms"), `target <= 2000; PostgreSQL ${ms("serve_pg_live_lag_ms")}`],
    ["serve: server RSS after those requests", `${(r.serve_rss_bytes! / 2 ** 20).toFixed(0)} MiB`, `target <= 200 MB; PostgreSQL ${r.serve_pg_rss_bytes === undefined ? "?" : `${(r.serve_pg_rss_bytes / 2 ** 20).toFixed(0)} MiB`}`],
  );
}
const width = Math.max(...rows.map((x) => x[0].length));
console.log(`\n${N} trivial cases (${RUNS} run${RUNS > 1 ? "s, median" : ""}), concurrency 64; ${(results.machine as { cores: number }).cores} cores, node ${process.version}, ${natsVersion}`);
for (const [a, b, c] of rows) console.log(`${a.padEnd(width)}  ${b.padStart(16)}  ${c}`);
console.log(
  `\nScaling model (bench/scaling-model.ts, this run's costs): 100,000 cases of 5 s within an hour need ` +
    `${model.casesPerSecond.toFixed(1)} cases/s and ${Math.ceil(model.inFlight)} in flight: ${model.workerMachines} worker machine(s) of ` +
    `${SLOTS_PER_MACHINE} slots for I/O-bound agents (more when the agents themselves need CPU). The coordinator then uses ` +
    `${(model.coordinatorCores * 100).toFixed(2)}% of a core and nats-server ${(model.brokerCores * 100).toFixed(2)}%; ` +
    `each would fill one core at ${model.coordinatorLimitPerCore.toFixed(0)} and ${model.brokerLimitPerCore.toFixed(0)} cases/s.`,
);
writeFileSync(join(root, "bench", "results.json"), `${JSON.stringify(results, null, 2)}\n`);
console.log("\nwrote bench/results.json");
// bench/README.md shows the latest figures: render it from what was just written.
writeBenchReadme();
console.log("wrote bench/README.md (from bench/results.json and bench/README.template.md)");
process.exit(0);
