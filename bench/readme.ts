/**
 * bench/README.md, rendered from bench/results.json and bench/README.template.md: the method is
 * hand-written once in the template, the figures are never hand-edited. Each figure is a row with
 * its target (issue 6's targets on the 2-core machine, issue 13's start-up targets when the bench
 * measures them) and whether this run met it. A key of results.json that no row names is still
 * shown, under "Other figures", so a new measurement is never silently left out. Pure; no I/O
 * (bench/render-readme.ts reads and writes the files).
 */
import { z } from "zod";

/** What bench/run.ts writes: a flat object of figures, plus where and when they were measured. */
export const BenchResultsSchema = z
  .object({
    machine: z.object({ cores: z.number(), cpu: z.string(), node: z.string(), nats_server: z.string() }),
    measured_at: z.string().min(1),
    quick: z.boolean(),
    cases: z.number().positive(),
  })
  .catchall(z.unknown());
export type BenchResults = z.infer<typeof BenchResultsSchema>;

/** A target a figure must meet: at least (`>=`) or at most (`<=`) `value`. */
interface Target {
  op: ">=" | "<=";
  value: number;
  /** How the target reads in the table, e.g. `10,000/s`. */
  text: string;
}

/** One row of a figures table. `keys` are the results it reads (the first is the figure the target is about); the row is left out unless every one is there. */
interface Row {
  keys: string[];
  label: (r: Figures) => string;
  value: (r: Figures) => string;
  /** Ratio to the baseline's throughput. */
  ratio?: boolean;
  target?: Target;
}

interface Section {
  title: string;
  rows: Row[];
}

type Figures = Record<string, number>;

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const fixed = (n: number, digits: number): string => n.toFixed(digits);
const mib = (bytes: number): string => `${int(bytes / 2 ** 20)} MiB`;
const perSecond = (key: string) => (r: Figures) => `${int(r[key]!)} cases/s`;

/**
 * The viewer's rows for one backend (`prefix` is `serve_` for SQLite, `serve_pg_` for PostgreSQL):
 * the issue's targets on the 2-core machine, over a store of one big run and earlier ones.
 */
function serveRows(prefix: string, backend: string): Row[] {
  const k = (key: string): string => `${prefix}${key}`;
  const store = (r: Figures): string => `${int(r[k("cases")]!)} cases and ${int(r[k("earlier_runs")]!)} earlier runs of ${int(r[k("earlier_cases")]!)}`;
  const rows: Row[] = [
    {
      keys: [k("cases_page_p95_ms"), k("cases_page_median_ms"), k("cases"), k("earlier_runs"), k("earlier_cases")],
      label: (r) => `${backend}, ${store(r)}: the failed cases a page of 50 (first page and next ones by cursor, each with its total), p95 (median)`,
      value: (r) => `${fixed(r[k("cases_page_p95_ms")]!, 1)} ms (${fixed(r[k("cases_page_median_ms")]!, 1)})`,
      target: { op: "<=", value: 100, text: "100 ms" },
    },
    {
      keys: [k("search_p95_ms"), k("search_median_ms"), k("search_matches_min"), k("search_matches_max")],
      label: (r) => `${backend}: \`q=\` across the big run (words of outputs, inputs, reasons, a name; ${int(r[k("search_matches_min")]!)} to ${int(r[k("search_matches_max")]!)} matches), p95 (median)`,
      value: (r) => `${fixed(r[k("search_p95_ms")]!, 1)} ms (${fixed(r[k("search_median_ms")]!, 1)})`,
      target: { op: "<=", value: 300, text: "300 ms" },
    },
    {
      keys: [k("runs_list_p95_ms"), k("runs_list_median_ms")],
      label: () => `${backend}: \`/api/runs\`, every run with its counts, p95 (median)`,
      value: (r) => `${fixed(r[k("runs_list_p95_ms")]!, 1)} ms (${fixed(r[k("runs_list_median_ms")]!, 1)})`,
      target: { op: "<=", value: 50, text: "50 ms" },
    },
    {
      keys: [k("first_paint_ms"), k("first_paint_max_ms")],
      label: () => `${backend}: the big run's page in headless Chromium, navigation to the first row of the case table, median of 5 (slowest)`,
      value: (r) => `${fixed(r[k("first_paint_ms")]!, 0)} ms (${fixed(r[k("first_paint_max_ms")]!, 0)})`,
      target: { op: "<=", value: 1000, text: "1,000 ms" },
    },
    {
      keys: [k("live_lag_ms"), k("live_lag_max_ms")],
      label: () => `${backend}: a result written to the store until the open page of its running run shows it, median of 5 (slowest)`,
      value: (r) => `${fixed(r[k("live_lag_ms")]!, 0)} ms (${fixed(r[k("live_lag_max_ms")]!, 0)})`,
      target: { op: "<=", value: 2000, text: "2,000 ms" },
    },
    {
      keys: [k("rss_bytes")],
      label: () => `${backend}: the server's RSS after all of the above`,
      value: (r) => `${fixed(r[k("rss_bytes")]! / 1e6, 0)} MB`,
      target: { op: "<=", value: 200e6, text: "200 MB" },
    },
    {
      keys: [k("build_s")],
      label: () => `${backend}: building the store (the store's own write path, batches of 2,000 rows)${prefix === "serve_" ? "" : ", secondary indexes made after the load"}`,
      value: (r) => `${fixed(r[k("build_s")]!, 1)} s${r[k("store_bytes")] !== undefined ? ` (${fixed(r[k("store_bytes")]! / 1e9, 2)} GB)` : ""}`,
    },
  ];
  return rows;
}

const SECTIONS: Section[] = [
  {
    title: "Throughput (trivial cases)",
    rows: [
      { keys: ["baseline_cases_per_s"], label: () => "baseline (p-limit, direct calls)", value: perSecond("baseline_cases_per_s"), ratio: true },
      { keys: ["inline_cases_per_s"], label: () => "`runCases` inline", value: perSecond("inline_cases_per_s"), ratio: true },
      {
        keys: ["local_cases_per_s"],
        label: (r) => `\`evalfleet run\`, 2 threads, ${int(r.cases!)} cases including thread start-up`,
        value: perSecond("local_cases_per_s"),
        ratio: true,
        target: { op: ">=", value: 10_000, text: "10,000/s" },
      },
      {
        keys: ["local_steady_cases_per_s", "local_startup_s"],
        label: () => "`evalfleet run`, steady state (start-up excluded)",
        value: (r) => `${int(r.local_steady_cases_per_s!)} cases/s; start-up ${fixed(r.local_startup_s!, 2)} s`,
        ratio: true,
        target: { op: ">=", value: 13_000, text: "13,000/s" },
      },
      {
        keys: ["distributed_1_worker_cases_per_s"],
        label: () => "`coordinator run`, 1 worker (durable path)",
        value: perSecond("distributed_1_worker_cases_per_s"),
        ratio: true,
        target: { op: ">=", value: 4_000, text: "4,000/s" },
      },
      {
        keys: ["distributed_2_workers_cases_per_s"],
        label: () => "`coordinator run`, 2 workers (durable path)",
        value: perSecond("distributed_2_workers_cases_per_s"),
        ratio: true,
        target: { op: ">=", value: 4_000, text: "4,000/s" },
      },
    ],
  },
  {
    title: "Latency-bound efficiency (agents that wait 100 ms)",
    rows: [
      {
        keys: ["latency_efficiency_1000", "latency_efficiency_1000_workers", "latency_1000_cases_per_s", "latency_1000_cpu_ms_per_case", "latency_cases"],
        label: (r) => `${int(r.latency_cases!)} cases, 1,000 in flight`,
        value: (r) =>
          `${fixed(r.latency_efficiency_1000!, 3)} (${r.latency_efficiency_1000_workers!} worker${r.latency_efficiency_1000_workers! === 1 ? "" : "s"}; ` +
          `${int(r.latency_1000_cases_per_s!)} cases/s, ${fixed(r.latency_1000_cpu_ms_per_case!, 2)} ms CPU per case in all)`,
        target: { op: ">=", value: 0.85, text: "0.85" },
      },
      { keys: ["latency_efficiency_100", "latency_cases"], label: (r) => `${int(r.latency_cases!)} cases, 100 in flight`, value: (r) => fixed(r.latency_efficiency_100!, 3) },
    ],
  },
  {
    title: "CPU per case",
    rows: [
      { keys: ["coordinator_cpu_ms_per_case"], label: () => "coordinator", value: (r) => `${fixed(r.coordinator_cpu_ms_per_case!, 3)} ms`, target: { op: "<=", value: 0.07, text: "0.07 ms" } },
      { keys: ["worker_cpu_ms_per_case"], label: () => "workers (all of them)", value: (r) => `${fixed(r.worker_cpu_ms_per_case!, 3)} ms` },
      { keys: ["nats_server_cpu_ms_per_case"], label: () => "nats-server", value: (r) => `${fixed(r.nats_server_cpu_ms_per_case!, 3)} ms` },
    ],
  },
  {
    title: "Memory",
    rows: [
      {
        keys: ["coordinator_heap_bytes_per_case", "memory_cases"],
        label: (r) => `coordinator heap held per case, ${int(r.memory_cases!)} cases`,
        value: (r) => `${int(r.coordinator_heap_bytes_per_case!)} B`,
        target: { op: "<=", value: 1024, text: "1 KB" },
      },
      {
        keys: ["coordinator_rss_bytes_per_case", "memory_cases"],
        label: (r) => `coordinator RSS per case, ${int(r.memory_cases!)} cases`,
        value: (r) => `${int(r.coordinator_rss_bytes_per_case!)} B`,
        target: { op: "<=", value: 600, text: "600 B" },
      },
      {
        keys: ["worker_rss_bytes_after_long_run", "memory_cases"],
        label: (r) => `largest worker RSS after the ${int(r.memory_cases!)}-case run (2 workers)`,
        value: (r) => mib(r.worker_rss_bytes_after_long_run!),
      },
      {
        keys: ["worker_rss_after_first_run_bytes", "worker_rss_after_last_run_bytes", "worker_rss_runs", "worker_rss_growth_after_warm_bytes"],
        label: (r) => `one worker's RSS after run 1 / after run ${r.worker_rss_runs!} of ${int(r.cases!)} cases`,
        value: (r) =>
          `${mib(r.worker_rss_after_first_run_bytes!)} / ${mib(r.worker_rss_after_last_run_bytes!)}; ` +
          `growth once warm (run 2 to ${r.worker_rss_runs!}): ${fixed(r.worker_rss_growth_after_warm_bytes! / 2 ** 20, 1)} MiB`,
      },
    ],
  },
  {
    title: "Cancellation",
    rows: [{ keys: ["cancel_to_report_s"], label: () => "SIGINT to the final report, 1,000 cases running", value: (r) => `${fixed(r.cancel_to_report_s!, 2)} s`, target: { op: "<=", value: 2, text: "2 s" } }],
  },
  {
    title: "The model provider as the limit (bench/provider-scenario.ts)",
    rows: [
      {
        keys: ["provider_utilization", "provider_limit_requests", "provider_window_seconds", "provider_cases"],
        label: (r) => `admitted per window over the limit, shared limit (${int(r.provider_limit_requests!)} per ${int(r.provider_window_seconds!)} s, ${int(r.provider_cases!)} judge-checked cases, 3 workers at --concurrency 100)`,
        value: (r) => fixed(r.provider_utilization!, 3),
        target: { op: ">=", value: 0.95, text: "0.95" },
      },
      {
        keys: ["provider_short_window_utilization", "provider_short_window_cases"],
        label: (r) => `utilization of a short window: 4 per rolling second (240 per minute), ${int(r.provider_short_window_cases!)} judge-checked cases, 3 workers x 10, shared limit`,
        value: (r) => fixed(r.provider_short_window_utilization!, 3),
        target: { op: ">=", value: 0.85, text: "0.85" },
      },
      {
        keys: ["provider_short_window_429_share", "provider_short_window_failed_cases"],
        label: () => "the same: 429 answers over all requests (cases failed)",
        value: (r) => `${fixed(r.provider_short_window_429_share!, 3)} (${int(r.provider_short_window_failed_cases!)})`,
        target: { op: "<=", value: 0.02, text: "0.02" },
      },
      { keys: ["provider_failed_cases"], label: () => "cases failed by rate limiting, shared limit", value: (r) => int(r.provider_failed_cases!), target: { op: "<=", value: 0, text: "0" } },
      { keys: ["provider_429_share"], label: () => "429 answers over all requests, shared limit", value: (r) => fixed(r.provider_429_share!, 3), target: { op: "<=", value: 0.01, text: "0.01" } },
      { keys: ["provider_unshared_failed_cases"], label: () => "cases failed by rate limiting, each process on its own (client retries only)", value: (r) => int(r.provider_unshared_failed_cases!) },
      { keys: ["provider_unshared_429_share"], label: () => "429 answers over all requests, each process on its own", value: (r) => fixed(r.provider_unshared_429_share!, 3) },
    ],
  },
  {
    title: "Verdicts under nondeterminism (bench/verdict-simulation.ts, simulated through the statistics the CLI uses)",
    rows: [
      {
        keys: ["gate_false_alarm_rate", "verdict_pairs", "verdict_cases", "verdict_gate_repeat"],
        label: (r) => `gate false alarms: ${int(r.verdict_pairs!)} pairs of runs of the same agent, ${int(r.verdict_cases!)} cases, --repeat ${int(r.verdict_gate_repeat!)}: share called regressed`,
        value: (r) => fixed(r.gate_false_alarm_rate!, 3),
        target: { op: "<=", value: 0.05, text: "0.05" },
      },
      { keys: ["gate_false_alarm_rate_raw_flips"], label: () => "the same pairs under today's rule (any pass-to-fail flip fails)", value: (r) => fixed(r.gate_false_alarm_rate_raw_flips!, 3) },
      {
        keys: ["gate_power", "gate_power_raw_flips"],
        label: () => "gate power: the candidate drops 40 cases by 0.5: share called regressed",
        value: (r) => `${fixed(r.gate_power!, 3)} (today's rule: ${fixed(r.gate_power_raw_flips!, 3)}, at its false-alarm rate)`,
        target: { op: ">=", value: 0.9, text: "0.9" },
      },
      {
        keys: ["gate_power_single_trial", "gate_false_alarm_rate_single_trial", "gate_false_alarm_rate_raw_flips_single_trial"],
        label: () => "one trial per case: power / false alarms (today's rule's false alarms)",
        value: (r) => `${fixed(r.gate_power_single_trial!, 3)} / ${fixed(r.gate_false_alarm_rate_single_trial!, 3)} (${fixed(r.gate_false_alarm_rate_raw_flips_single_trial!, 3)})`,
      },
      {
        keys: ["adaptive_trials_ratio", "adaptive_confidence"],
        label: (r) => `adaptive --repeat 3..20 --case-pass-rate 0.8 (stopping interval at ${fixed(r.adaptive_confidence!, 2)}): trials over a fixed --repeat 20`,
        value: (r) => fixed(r.adaptive_trials_ratio!, 3),
        target: { op: "<=", value: 0.4, text: "0.4" },
      },
      {
        keys: ["adaptive_agreement", "adaptive_undecided_share"],
        label: () => "its verdicts that are the fixed run's, on the same trials",
        value: (r) => `${fixed(r.adaptive_agreement!, 4)} (${fixed(r.adaptive_undecided_share! * 100, 1)}% of cases ran to MAX undecided)`,
        target: { op: ">=", value: 0.95, text: "0.95" },
      },
      {
        keys: ["adaptive_trials_ratio_confidence_95", "adaptive_agreement_confidence_95"],
        label: () => "the same with the stopping interval at 0.95: trials ratio / agreement",
        value: (r) => `${fixed(r.adaptive_trials_ratio_confidence_95!, 3)} / ${fixed(r.adaptive_agreement_confidence_95!, 4)}`,
      },
      { keys: ["fixed_repeat_self_agreement"], label: () => "two independent fixed runs of 20: verdicts that agree (the noise floor)", value: (r) => fixed(r.fixed_repeat_self_agreement!, 4) },
      {
        keys: ["adaptive_cli_trials_ratio", "adaptive_cli_agreement", "adaptive_cli_cases"],
        label: (r) => `end to end, \`evalfleet run\` of ${int(r.adaptive_cli_cases!)} such cases, 3..20 against 20 (independent runs): trials ratio / agreement`,
        value: (r) => `${fixed(r.adaptive_cli_trials_ratio!, 3)} / ${fixed(r.adaptive_cli_agreement!, 4)}`,
      },
    ],
  },
  {
    title: "Start order from history (bench/makespan-simulation.ts, simulated with the ordering code the CLI uses)",
    rows: [
      {
        keys: ["makespan_ratio", "makespan_cases", "makespan_slots", "makespan_ratio_history_max"],
        label: (r) => `${int(r.makespan_cases!)} lognormal cases on ${int(r.makespan_slots!)} slots, --order history: makespan over max(longest case, work / slots), mean of 20 (worst)`,
        value: (r) => `${fixed(r.makespan_ratio!, 3)} (${fixed(r.makespan_ratio_history_max!, 3)})`,
        target: { op: "<=", value: 1.05, text: "1.05" },
      },
      {
        keys: ["makespan_ratio_declared", "makespan_ratio_declared_max"],
        label: () => "the same in declaration order (worst)",
        value: (r) => `${fixed(r.makespan_ratio_declared!, 3)} (${fixed(r.makespan_ratio_declared_max!, 3)})`,
      },
    ],
  },
  {
    title: "A large dataset in local mode",
    rows: [
      {
        keys: ["dataset_heap_bytes_per_row_loaded", "dataset_rows", "dataset_bytes", "dataset_heap_bytes_per_row_if_materialized"],
        label: (r) => `${int(r.dataset_rows!)} JSONL rows (${fixed(r.dataset_bytes! / 1e6, 1)} MB): heap held per row once loaded`,
        value: (r) => `${int(r.dataset_heap_bytes_per_row_loaded!)} B (the rows' fields in memory: ${int(r.dataset_heap_bytes_per_row_if_materialized!)} B)`,
      },
      {
        keys: ["dataset_heap_bytes_per_case_after_run"],
        label: () => "heap per case after the run, every result held",
        value: (r) => `${int(r.dataset_heap_bytes_per_case_after_run!)} B`,
        target: { op: "<=", value: 1024, text: "1 KB" },
      },
      {
        keys: ["dataset_local_cases_per_s", "dataset_load_seconds"],
        label: () => "run, 2 threads",
        value: (r) => `${int(r.dataset_local_cases_per_s!)} cases/s; loading ${fixed(r.dataset_load_seconds!, 2)} s`,
      },
      { keys: ["dataset_peak_rss_bytes"], label: () => "peak RSS", value: (r) => mib(r.dataset_peak_rss_bytes!) },
    ],
  },
  {
    title: "The live viewer, `evalfleet serve` (bench/serve.ts)",
    rows: [...serveRows("serve_", "SQLite"), ...serveRows("serve_pg_", "PostgreSQL")],
  },
  {
    title: "The HTML report of 50,000 cases",
    rows: [
      { keys: ["html_interactive_50k_s"], label: () => "time until interactive in headless Chromium (first page of the table, every control)", value: (r) => `${fixed(r.html_interactive_50k_s!, 2)} s` },
      { keys: ["html_open_case_50k_s"], label: () => "search, then open the last case (its details inflated)", value: (r) => `${fixed(r.html_open_case_50k_s!, 2)} s` },
      { keys: ["html_50k_bytes"], label: () => "file size, with a transcript of about 1.5 KB per case", value: (r) => mib(r.html_50k_bytes!) },
      { keys: ["html_render_50k_s"], label: () => "writing it (`renderHtmlReport`)", value: (r) => `${fixed(r.html_render_50k_s!, 2)} s` },
    ],
  },
  {
    title: "The trajectory check (bench/trajectory-check.ts)",
    rows: [
      {
        keys: ["trajectory_check_us_per_case", "trajectory_check_median_us_per_case"],
        label: () => "one case of 50 tool calls against 10 matchers (RegExp and deep equality), in order, passing",
        value: (r) => `${fixed(r.trajectory_check_us_per_case!, 1)} µs (median ${fixed(r.trajectory_check_median_us_per_case!, 1)} µs)`,
        target: { op: "<=", value: 50, text: "50 µs" },
      },
      {
        keys: ["trajectory_check_failing_us_per_case"],
        label: () => "the same case failing (5 matchers missed: reasons and closest calls built)",
        value: (r) => `${fixed(r.trajectory_check_failing_us_per_case!, 1)} µs`,
      },
    ],
  },
  {
    title: "Trials spread over the fleet (bench/repeat-spread.ts)",
    rows: [
      {
        keys: ["repeat_spread_speedup", "repeat_spread_seconds", "repeat_one_worker_seconds"],
        label: () => "50 cases x 10 trials of 200 ms over 3 workers x 50 slots: a case's trials one after another on one worker over each trial its own delivery",
        value: (r) => `${fixed(r.repeat_spread_speedup!, 2)}x (${fixed(r.repeat_one_worker_seconds!, 2)} s / ${fixed(r.repeat_spread_seconds!, 2)} s)`,
        target: { op: ">=", value: 2, text: "2x" },
      },
    ],
  },
  {
    title: "Unknown options (bench/case-construction.ts)",
    rows: [
      {
        keys: ["case_key_check_ns", "case_key_check_share"],
        label: () => "the unknown-option check of `new Case`, alone (a million calls over a scorer case and a judge case)",
        value: (r) => `${fixed(r.case_key_check_ns!, 1)} ns (${fixed(r.case_key_check_share! * 100, 1)}% of a construction)`,
      },
      {
        keys: ["case_construction_ns_checked", "case_construction_ns_unchecked", "case_construction_cases"],
        label: (r) => `\`new Case\` + \`defineSuite\`, ${int(r.case_construction_cases!)} cases, with the check / without it (alternating rounds)`,
        value: (r) => `${int(r.case_construction_ns_checked!)} / ${int(r.case_construction_ns_unchecked!)} ns`,
      },
    ],
  },
  {
    title: "Record and replay (bench/replay.ts)",
    rows: [
      {
        keys: ["replay_cases_per_s", "replay_cases", "replay_exchanges_per_case"],
        label: (r) => `${int(r.replay_cases!)} cases of ${r.replay_exchanges_per_case} HTTP exchanges each, replayed from their cassettes (local, nothing sent)`,
        value: (r) => `${int(r.replay_cases_per_s!)} cases/s`,
        target: { op: ">=", value: 2_000, text: "2,000/s" },
      },
      { keys: ["record_cases_per_s"], label: () => "the same cases recorded (sent to a loopback HTTP server, one cassette file written per case)", value: (r) => `${int(r.record_cases_per_s!)} cases/s` },
      { keys: ["replay_plain_cases_per_s"], label: () => "the same cases making no request (the runner's own cost)", value: (r) => `${int(r.replay_plain_cases_per_s!)} cases/s` },
      { keys: ["replay_overhead_us_per_case"], label: () => "what replay adds per case over the runner's own cost (5 exchanges, one cassette read)", value: (r) => `${int(r.replay_overhead_us_per_case!)} µs` },
    ],
  },
  {
    title: "Transcripts (the full run output a recorded run keeps)",
    rows: [
      {
        keys: ["transcript_heap_bytes_per_case_recorded", "transcript_heap_bytes_per_case_unrecorded", "transcript_cases", "transcript_kb"],
        label: (r) => `heap the collecting process holds per case, ${int(r.transcript_cases!)} cases of ${int(r.transcript_kb!)} KiB output: recorded with transcripts / unrecorded`,
        value: (r) => `${int(r.transcript_heap_bytes_per_case_recorded!)} / ${int(r.transcript_heap_bytes_per_case_unrecorded!)} B`,
      },
      { keys: ["transcript_bytes_stored_per_case"], label: () => "transcript stored per case (JSON)", value: (r) => `${int(r.transcript_bytes_stored_per_case!)} B` },
    ],
  },
  {
    title: "Start-up",
    rows: [
      { keys: ["startup_help_s"], label: () => "`evalfleet --help`, wall", value: (r) => `${fixed(r.startup_help_s!, 2)} s`, target: { op: "<=", value: 0.3, text: "0.3 s" } },
      { keys: ["startup_demo_s"], label: () => "`npm run demo` (5 cases), wall", value: (r) => `${fixed(r.startup_demo_s!, 2)} s`, target: { op: "<=", value: 1, text: "1.0 s" } },
      { keys: ["thread_ready_ms"], label: () => "a thread ready (suite imported; its busy time, idle waits excluded), `.mjs` suite, two threads and the main thread on two cores", value: (r) => `${int(r.thread_ready_ms!)} ms`, target: { op: "<=", value: 150, text: "150 ms" } },
      { keys: ["thread_ready_alone_ms"], label: () => "the same, one thread (a core of its own)", value: (r) => `${int(r.thread_ready_alone_ms!)} ms` },
      {
        keys: ["startup_large_ratio", "startup_large_cases", "startup_large_cases_per_s", "startup_large_steady_cases_per_s", "startup_large_s"],
        label: (r) => `\`evalfleet run\`, ${int(r.startup_large_cases!)} cases: start-up included / steady`,
        value: (r) => `${fixed(r.startup_large_ratio!, 3)}x (${int(r.startup_large_cases_per_s!)} / ${int(r.startup_large_steady_cases_per_s!)} cases/s; ${fixed(r.startup_large_s!, 1)} s)`,
        target: { op: ">=", value: 0.9, text: "0.9x" },
      },
    ],
  },
];

/** Keys that are not figures of a row: the header's, and one figure that repeats another. */
// `distributed_cases_per_s` is the better of the two worker counts, both of which have a row.
// `serve_store_bytes` is shown in the row of the store's build (SQLite's only: a file).
const CONSUMED_ELSEWHERE = new Set(["serve_store_bytes", "machine", "measured_at", "quick", "cases", "distributed_cases_per_s", "provider_seconds", "provider_unshared_seconds", "provider_measured_at", "provider_quick", "verdict_simulation_s", "provider_short_window_seconds"]);
const SCALING_KEYS = [
  "scaling_cases_per_s_needed",
  "scaling_in_flight_needed",
  "scaling_worker_machines",
  "scaling_coordinator_cores",
  "scaling_broker_cores",
  "scaling_coordinator_limit_cases_per_s_per_core",
  "scaling_broker_limit_cases_per_s_per_core",
];

/** Whether `value` meets `target`. */
export function meets(value: number, target: Target): boolean {
  return target.op === ">=" ? value >= target.value : value <= target.value;
}

/** Escapes a table cell (a `|` would end it). */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

function numericFigures(results: BenchResults): Figures {
  const out: Figures = {};
  for (const [key, value] of Object.entries(results)) if (typeof value === "number" && Number.isFinite(value)) out[key] = value;
  return out;
}

/** The tables of every figure this run has, with targets and whether each was met. */
export function renderFigures(results: BenchResults): string {
  const r = numericFigures(results);
  const used = new Set<string>(CONSUMED_ELSEWHERE);
  const base = r.baseline_cases_per_s!;
  const parts: string[] = [];
  for (const section of SECTIONS) {
    const rows = section.rows.filter((row) => row.keys.every((key) => r[key] !== undefined));
    if (rows.length === 0) continue;
    const withRatio = rows.some((row) => row.ratio) && base !== undefined;
    const withTarget = rows.some((row) => row.target);
    const header = ["figure", "this run", ...(withRatio ? ["ratio to baseline"] : []), ...(withTarget ? ["target", "met"] : [])];
    const lines = [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`];
    for (const row of rows) {
      for (const key of row.keys) used.add(key);
      const value = r[row.keys[0]!]!;
      const cells = [cell(row.label(r)), cell(row.value(r))];
      if (withRatio) cells.push(row.ratio ? `${fixed(value / base!, 3)}x` : "");
      if (withTarget) cells.push(row.target?.text ?? "", row.target ? (meets(value, row.target) ? "yes" : "**no**") : "");
      lines.push(`| ${cells.join(" | ")} |`);
    }
    parts.push(`### ${section.title}\n\n${lines.join("\n")}`);
  }
  for (const key of SCALING_KEYS) used.add(key);
  const others = Object.keys(results).filter((key) => !used.has(key) && !key.startsWith("scaling_"));
  if (others.length > 0) {
    const lines = ["| key | value |", "| --- | --- |", ...others.map((key) => `| \`${key}\` | ${cell(JSON.stringify(results[key]))} |`)];
    parts.push(`### Other figures\n\nMeasured by this run, not yet given a row of their own (the key of \`bench/results.json\` and its value):\n\n${lines.join("\n")}`);
  }
  return parts.join("\n\n");
}

/** The scaling-model paragraph, from the figures bench/run.ts computed with bench/scaling-model.ts. */
export function renderScaling(results: BenchResults): string {
  const r = numericFigures(results);
  if (SCALING_KEYS.some((key) => r[key] === undefined)) return "This run has no scaling-model figures.";
  const pct = (cores: number): string => `${fixed(cores * 100, 2)}%`;
  return (
    `A 100,000-case suite of 5-second cases that must finish within an hour needs ${fixed(r.scaling_cases_per_s_needed!, 1)} cases/s ` +
    `and ${int(Math.ceil(r.scaling_in_flight_needed!))} cases in flight. For I/O-bound agents that is ${r.scaling_worker_machines!} worker ` +
    `machine${r.scaling_worker_machines! === 1 ? "" : "s"} at \`--concurrency 500\`; agents that need CPU of their own need more: ` +
    `machines = cases/s × agent CPU per case / cores per machine. With this run's costs the coordinator then uses ` +
    `${pct(r.scaling_coordinator_cores!)} of a core and nats-server ${pct(r.scaling_broker_cores!)}; they would fill one core only at ` +
    `about ${int(r.scaling_coordinator_limit_cases_per_s_per_core!)} and ${int(r.scaling_broker_limit_cases_per_s_per_core!)} cases/s.`
  );
}

/** The one-line description of the run the figures come from. */
export function renderMachine(results: BenchResults): string {
  const { machine } = results;
  const runs = results.quick ? "a quick run (`--quick`: one run of each scenario)" : "a full run (the median of 3 runs of each scenario)";
  return (
    `${runs} of ${int(results.cases)} trivial cases, measured ${results.measured_at.slice(0, 10)} on ${machine.cores} cores ` +
    `(${machine.cpu}), Node ${machine.node.replace(/^v/, "")}, ${machine.nats_server.replace(/^nats-server: v/, "nats-server ")}`
  );
}

/** Placeholders the template may hold; each is replaced by the rendering of the same name. */
const PLACEHOLDERS = {
  "{{machine}}": renderMachine,
  "{{figures}}": renderFigures,
  "{{scaling}}": renderScaling,
} as const;

/**
 * bench/README.md: the template with its placeholders filled from `results`. Throws when
 * `results` is not what bench/run.ts writes (naming the field) or the template lacks `{{figures}}`.
 */
export function renderBenchReadme(results: unknown, template: string): string {
  const parsed = BenchResultsSchema.safeParse(results);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`bench/results.json: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  if (!template.includes("{{figures}}")) throw new Error("bench/README.template.md: no {{figures}} placeholder");
  let out = template;
  for (const [placeholder, render] of Object.entries(PLACEHOLDERS)) out = out.split(placeholder).join(render(parsed.data));
  return out;
}
