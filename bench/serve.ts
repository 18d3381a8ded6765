/**
 * `evalfleet serve` over a large store, as a user meets it: a real `evalfleet serve` process (the
 * compiled command, `bin/evalfleet.mjs`) over a store of one run of 100,000 cases (a tenth failed,
 * outputs of about 3 KB, inputs of a conversation) and 30 earlier runs of 2,000 of the same suite,
 * plus one small run still going. Measured from this process over HTTP (keep-alive, one request at
 * a time, after a few untimed ones), and in headless Chromium (playwright-core) for the page:
 *
 * - `cases_page_p95_ms`: the failed cases of the big run a page of 50 at a time, the first page
 *   and the next ones by cursor (each answer counts every match: `total` is 10,000);
 * - `search_p95_ms`: `q=` across the big run (words of outputs, of inputs only, of reasons, a case
 *   name, two words, with and without a status filter), each answer with its total;
 * - `runs_list_p95_ms`: `/api/runs` (every run's counts);
 * - `first_paint_ms`: the run page of the big run in a fresh browser context, from navigation to
 *   the first row of the case table (the median of 5; `first_paint_max_ms` the slowest);
 * - `live_lag_ms`: a result written to the store (through the store's own write path, from this
 *   process) until the open page of the running run shows its row (the median of 5 at random
 *   phases of the event stream's poll; `live_lag_max_ms` the slowest);
 * - `rss_bytes`: the server's RSS after all of that (from /proc).
 *
 * The store is built through the store's own write path (`caseRow`, `writeCases`, batches of 2,000
 * rows, one transaction each), so its indexes and triggers are the ones a run maintains.
 * `--quick`: 10,000 cases and 5 earlier runs of 500. `--backend postgres` uses a private database
 * on the PostgreSQL server the tests use (127.0.0.1:5432, test/support/postgres.ts), dropped after.
 * Prints one JSON line. Run: `node --import tsx bench/serve.ts [--quick] [--backend sqlite|postgres] [--from-source]`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { caseRow, inputText, type CaseRow } from "../coordinator/history/store/case-row.ts";
import type { RunStart } from "../coordinator/history/store/run-record.ts";
import { CaseResult } from "../shared/result/result.ts";
import { rssBytes } from "./proc-stats.ts";
import { seededRandom } from "../shared/seeded-random.ts";

const quick = process.argv.includes("--quick");
const FROM_SOURCE = process.argv.includes("--from-source");
const backendArg = process.argv.indexOf("--backend");
const BACKEND = backendArg > 0 ? process.argv[backendArg + 1] : "sqlite";
if (BACKEND !== "sqlite" && BACKEND !== "postgres") throw new Error(`--backend: sqlite or postgres, not ${BACKEND}`);
const ROOT = new URL("..", import.meta.url).pathname;
const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";
/** Cases of the big run. */
const BIG = quick ? 10_000 : 100_000;
/** Earlier runs of the same suite, and their cases each. */
const EARLIER_RUNS = quick ? 5 : 30;
const EARLIER_CASES = quick ? 500 : 2_000;
/** Rows per `writeCases` call (one transaction). */
const BATCH = 2_000;
/** Timed requests per figure (after WARMUP untimed ones). */
const SAMPLES = quick ? 20 : 40;
const WARMUP = 3;
const SUITE = "support-nightly";
const BIG_RUN = "nightly-big";
const LIVE_RUN = "live-run";

// ------------------------------------------------------------------------------------------ data
// A seeded PRNG, so every build of the store holds the same text.
const rand = seededRandom(7);
const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "go", "hu", "ji", "be", "fa", "zo", "qu", "xe", "wy", "ci"];
/** 4,000 made-up words: each paragraph draws from them, so a word is in about one output in twelve. */
const VOCAB = Array.from({ length: 4_000 }, (_, i) => {
  const n = 2 + (i % 3);
  let w = "";
  for (let k = 0, x = i * 7919 + 13; k < n; k++, x = Math.floor(x / SYLLABLES.length) + k * 31) w += SYLLABLES[x % SYLLABLES.length];
  return `${w}${i % 97}`;
});
const PARAGRAPHS = Array.from({ length: 512 }, () => Array.from({ length: 70 }, () => VOCAB[Math.floor(rand() * VOCAB.length)]).join(" "));
const TOPICS = ["warranty", "shipping", "invoice", "password", "subscription", "delivery", "coupon", "account", "upgrade", "cancellation", "exchange", "voucher", "address", "tracking", "payment", "discount", "return", "membership", "gift", "pricing"];
/** A word of the outputs searched for (the vocabulary's), and one that only inputs have. */
const OUTPUT_WORD = VOCAB[1234]!;
const INPUT_WORD = TOPICS[3]!;

const caseName = (i: number): string => `case-${String(i).padStart(6, "0")}`;
/** About 3 KB: five paragraphs, and words that some outputs have (a refund in 1 of 100, an escalation in 1 of 1,000). */
function output(i: number): string {
  const parts = [0, 1, 2, 3, 4].map((k) => PARAGRAPHS[(i * 7 + k * 131) % PARAGRAPHS.length]!);
  if (i % 100 === 1) parts.push("The refund was approved and will reach the card within five days.");
  if (i % 1000 === 5) parts.push("This was escalated to billing for a manual review.");
  parts.push(`Reference: order ${i}.`);
  return parts.join("\n\n");
}
function input(i: number) {
  return [
    { role: "system", content: "You are the support agent of an online shop. Answer briefly and cite the policy." },
    { role: "user", content: `A question about ${TOPICS[i % TOPICS.length]} for order ${i}: ${PARAGRAPHS[(i * 13) % PARAGRAPHS.length]!.slice(0, 160)}` },
  ];
}
const isFailed = (i: number): boolean => i % 10 === 3;
const isError = (i: number): boolean => i % 200 === 17;

function result(i: number): CaseResult {
  const failed = isFailed(i);
  const errored = isError(i);
  return new CaseResult({
    name: caseName(i),
    index: i,
    agentId: "support-bot",
    tags: [i % 3 === 0 ? "smoke" : "core"],
    durationSeconds: 0.5 + (i % 37) / 10,
    output: output(i),
    toolsCalled: ["lookup_order"],
    judgePassed: errored ? null : !failed,
    judgeReason: errored ? null : failed ? `The answer misses step ${i % 17} of the ${TOPICS[i % TOPICS.length]} policy.` : "Correct and cites the policy.",
    error: errored ? "agent: the upstream model timed out after 30s" : null,
    errorKind: errored ? "agent" : null,
    worker: `worker-${i % 4}`,
    usage: { inputTokens: 420, outputTokens: 180, totalTokens: 600, costUsd: 0.0006 },
  });
}

function start(id: string, startedAt: string, cases: number): RunStart {
  return {
    id,
    kind: "suite",
    suiteName: id === LIVE_RUN ? "support-live" : SUITE,
    suiteFingerprint: null,
    suitePath: "/evals/support.ts",
    selection: { cases: Array.from({ length: cases }, (_, i) => caseName(i)) },
    config: { mode: "distributed" },
    judgeModel: "gpt-5-mini",
    timeoutSeconds: 60,
    startedAt,
    gitCommit: "0123456789abcdef0123456789abcdef01234567",
    gitBranch: "main",
    host: "bench",
  };
}

/** Writes `cases` results of one run in batches (through the store's write path), then its end. */
async function writeRun(store: ResultsStore, id: string, startedAt: string, cases: number, offset: number): Promise<void> {
  await store.beginRun(start(id, startedAt, cases));
  const t0 = Date.parse(startedAt);
  let passed = 0;
  for (let from = 0; from < cases; from += BATCH) {
    const rows: CaseRow[] = [];
    for (let i = from; i < Math.min(cases, from + BATCH); i++) {
      const r = result(i + offset);
      r.name = caseName(i);
      r.index = i;
      if (r.passed) passed++;
      rows.push(caseRow(id, r, new Date(t0 + i * 10).toISOString(), null, undefined, inputText(input(i + offset))));
    }
    await store.writeCases(rows);
  }
  await store.finishRun(id, {
    finishedAt: new Date(t0 + cases * 10 + 1000).toISOString(),
    status: passed === cases ? "passed" : "failed",
    total: cases,
    passed,
    failed: cases - passed,
    skipped: 0,
    durationSeconds: cases / 100,
    summary: { total: cases, passed, failed: cases - passed },
  });
}

// --------------------------------------------------------------------------------------- helpers
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}
const median = (xs: number[]): number => percentile(xs, 50);

/** One GET, timed to the last byte; throws unless it answers 200. */
async function timedGet(url: string): Promise<{ ms: number; json: any }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { ms, json: JSON.parse(text) };
}

/** Times `next()` SAMPLES times after WARMUP untimed calls. */
async function sample(next: (i: number) => Promise<number>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await next(i);
  const out: number[] = [];
  for (let i = 0; i < SAMPLES; i++) out.push(await next(i));
  return out;
}

async function startServer(db: string): Promise<{ child: ChildProcess; url: string }> {
  // The compiled command, as a user runs it; `--from-source` runs the sources through tsx instead
  // (while a checkout does not build; its RSS then includes tsx and the TypeScript sources).
  const entry = FROM_SOURCE ? ["--conditions=evalfleet-source", "--import", "tsx", join(ROOT, "coordinator", "main.ts")] : [join(ROOT, "bin", "evalfleet.mjs")];
  const child = spawn(process.execPath, [...entry, "serve", "--db", db, "--port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not listen within 120 s: ${out}${err}`)), 120_000);
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", look);
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}${err}`)));
  });
  return { child, url };
}

// ------------------------------------------------------------------------------------------ main
const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-serve-"));
let dbUrl: string;
let dropDatabase = async (): Promise<void> => undefined;
if (BACKEND === "sqlite") dbUrl = `sqlite:${join(dir, "results.db")}`;
else {
  const { createTestDatabase } = await import("../test/support/postgres.ts");
  const db = await createTestDatabase();
  dbUrl = db.url;
  dropDatabase = db.drop;
}

const out: Record<string, number | string | boolean | null> = { backend: BACKEND, from_source: FROM_SOURCE, cases: BIG, earlier_runs: EARLIER_RUNS, earlier_cases: EARLIER_CASES };
let server: { child: ChildProcess; url: string } | null = null;
// Long bound: making a GIN index again over 160,000 rows takes longer than a query of a run may.
const store = await ResultsStore.open(dbUrl, { timeoutSeconds: 900 });
try {
  const buildStart = performance.now();
  // PostgreSQL: the secondary indexes of case_results are dropped for the load and made again from
  // their own definitions after it, as a bulk load does (building a GIN index once is far cheaper
  // than growing it row by row); the schema ends up the same.
  const pgIndexes = BACKEND === "postgres" ? (await store.sql.query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'case_results' AND indexname <> 'case_results_pkey'")).map((r) => ({ name: String(r.indexname), def: String(r.indexdef) })) : [];
  for (const ix of pgIndexes) await store.sql.query(`DROP INDEX ${ix.name}`);
  const day = 86_400_000;
  const now = Date.now();
  for (let r = 0; r < EARLIER_RUNS; r++) await writeRun(store, `nightly-${String(r).padStart(2, "0")}`, new Date(now - (EARLIER_RUNS + 1 - r) * day).toISOString(), EARLIER_CASES, r * 3);
  await writeRun(store, BIG_RUN, new Date(now - day / 2).toISOString(), BIG, 0);
  for (const ix of pgIndexes) await store.sql.query(ix.def);
  // A run still going: 10 of 200 recorded; the live figure writes more.
  await store.beginRun(start(LIVE_RUN, new Date().toISOString(), 200));
  await store.writeCases(Array.from({ length: 10 }, (_, i) => caseRow(LIVE_RUN, result(i), new Date().toISOString())));
  out.build_s = (performance.now() - buildStart) / 1000;
  // What autovacuum does within about a minute of a large write (PostgreSQL 13 and later vacuum
  // after inserts too): statistics for the planner, and the visibility map that lets a count be
  // answered from an index alone. Done now, the figures are those of a store in use, not of the
  // minute after its first write (until then the planner takes the big run for an empty table,
  // and every count reads the table).
  if (BACKEND === "postgres") await store.sql.query("VACUUM ANALYZE case_results");
  if (BACKEND === "sqlite") out.store_bytes = statSync(join(dir, "results.db")).size + (existsSync(join(dir, "results.db-wal")) ? statSync(join(dir, "results.db-wal")).size : 0);
  process.stderr.write(`  serve (${BACKEND}): store of ${BIG} + ${EARLIER_RUNS} x ${EARLIER_CASES} cases built in ${Number(out.build_s).toFixed(1)} s\n`);

  server = await startServer(dbUrl);
  const base = server.url;
  const expectedFailed = Array.from({ length: BIG }, (_, i) => i).filter((i) => isFailed(i) && !isError(i)).length;

  // Failed cases, a page of 50: the first page, then the next ones by cursor (starting over every 20 pages).
  let cursor: string | null = null;
  const pages = await sample(async (i) => {
    if (i % 20 === 0) cursor = null;
    const { ms, json } = await timedGet(`${base}/api/runs/${BIG_RUN}/cases?status=failed&limit=50${cursor ? `&cursor=${cursor}` : ""}`);
    if (json.total !== expectedFailed || json.cases.length !== 50) throw new Error(`cases page: total ${json.total} (expected ${expectedFailed}), ${json.cases.length} cases`);
    cursor = json.next_cursor;
    return ms;
  });
  out.cases_page_p95_ms = percentile(pages, 95);
  out.cases_page_median_ms = median(pages);

  // Search: words of outputs (1 in 12, 1 in 100, two words of 1 in 1,000), of inputs only, of reasons, a name, with a status filter.
  const queries = [OUTPUT_WORD, "refund", "escalated billing", INPUT_WORD, `misses step ${INPUT_WORD}`, caseName(Math.floor(BIG * 0.42)), `${OUTPUT_WORD}&status=failed`, `${OUTPUT_WORD} ${INPUT_WORD}`];
  const searchTotals: Record<string, number> = {};
  const searches = await sample(async (i) => {
    const q = queries[i % queries.length]!;
    const [text, rest] = q.split("&");
    const { ms, json } = await timedGet(`${base}/api/runs/${BIG_RUN}/cases?q=${encodeURIComponent(text!)}${rest ? `&${rest}` : ""}&limit=50`);
    if (json.total === 0) throw new Error(`search ${q}: no match`);
    searchTotals[q] = json.total;
    return ms;
  });
  out.search_p95_ms = percentile(searches, 95);
  out.search_median_ms = median(searches);
  out.search_matches_min = Math.min(...Object.values(searchTotals));
  out.search_matches_max = Math.max(...Object.values(searchTotals));

  const runsList = await sample(async () => {
    const { ms, json } = await timedGet(`${base}/api/runs`);
    if (json.runs.length !== EARLIER_RUNS + 2) throw new Error(`runs list: ${json.runs.length} runs`);
    return ms;
  });
  out.runs_list_p95_ms = percentile(runsList, 95);
  out.runs_list_median_ms = median(runsList);

  if (existsSync(CHROMIUM)) {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
    try {
      // First paint: a fresh context each time (nothing cached), one untimed first.
      const paints: number[] = [];
      for (let i = 0; i < 6; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        const t0 = performance.now();
        await page.goto(`${base}/runs/${BIG_RUN}`, { waitUntil: "commit", timeout: 60_000 });
        await page.locator("#cases-body tr").first().waitFor({ timeout: 60_000 });
        if (i > 0) paints.push(performance.now() - t0);
        await context.close();
      }
      out.first_paint_ms = median(paints);
      out.first_paint_max_ms = Math.max(...paints);

      // Live: the page of the running run open; a result written; until its row is on the page.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${base}/runs/${LIVE_RUN}`, { waitUntil: "load", timeout: 60_000 });
      await page.locator("#cases-body tr").first().waitFor({ timeout: 60_000 });
      await page.locator("#live").waitFor({ state: "visible", timeout: 30_000 });
      const lags: number[] = [];
      for (let k = 0; k < 5; k++) {
        // A random phase of the stream's 400 ms poll.
        await new Promise((r) => setTimeout(r, 200 + Math.floor(rand() * 600)));
        const index = 10 + k;
        await store.writeCases([caseRow(LIVE_RUN, result(index), new Date().toISOString())]);
        const landed = performance.now();
        await page.locator(`#cases-body tr[data-index="${index}"]`).waitFor({ timeout: 30_000 });
        lags.push(performance.now() - landed);
      }
      out.live_lag_ms = median(lags);
      out.live_lag_max_ms = Math.max(...lags);
      await context.close();
    } finally {
      await browser.close();
    }
  } else {
    process.stderr.write(`  serve: no Chromium at ${CHROMIUM}: first paint and live lag not measured\n`);
  }
  out.rss_bytes = rssBytes(server.child.pid!);
} finally {
  if (server) {
    const exited = new Promise((r) => server!.child.once("exit", r));
    server.child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
  }
  await store.close();
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
