/**
 * Record and replay (worker/cassette): 2,000 cases, each making 5 HTTP exchanges through
 * `context.fetch` (two at once, then three in turn, one a POST with a JSON body), run locally with
 * `runCases` (concurrency 50). First recorded against a local HTTP server on loopback (the
 * network's cost: each request sent, each exchange redacted and kept, one cassette file written per
 * case), then replayed from those files (no request sent: the server's count is checked); beside
 * them the same cases with an agent that makes no request, the runner's own cost (on a loaded
 * machine every rate falls, their difference per case says what replay costs; the fastest of three
 * rounds of each counts). Prints the rates,
 * then one JSON line. Run: `node --import tsx bench/replay.ts` (BENCH_CASES to change 2,000).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Case, runCases, type Agent } from "../index.ts";

const CASES = Number(process.env.BENCH_CASES ?? 2_000);
const EXCHANGES = 5;
const CONCURRENCY = 50;
/** Replays (and runs without requests) measured; the fastest counts. */
const ROUNDS = 3;

let served = 0;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    served++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ path: req.url, echoed: body.length, items: [1, 2, 3], note: "a small JSON answer, as an API gives" }));
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Five exchanges: two concurrent GETs, a POST with a JSON body, two more GETs. */
const agent: Agent = {
  id: "fetcher",
  async run(input, ctx) {
    const f = ctx.fetch!;
    const q = String(input);
    const [a, b] = await Promise.all([f(`${base}/search?q=${q}&page=1`), f(`${base}/search?q=${q}&page=2`)]);
    await a.json();
    await b.json();
    const post = await f(`${base}/items`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ q, filters: { tags: ["a", "b"], limit: 10 } }) });
    await post.json();
    for (const part of ["detail", "reviews"]) await (await f(`${base}/${part}/${q}`)).json();
    return { content: `done ${q}` };
  },
};
const passes = { score: () => ({ value: 1, passed: true }) };
const cases = Array.from({ length: CASES }, (_, i) => new Case({ name: `case-${i}`, input: `item${i}`, agent, scorer: passes }));

/** The same cases with an agent that makes no request: what the runner itself costs, beside which replay's cost reads. */
const plainAgent: Agent = { id: "plain", async run(input) { return { content: `done ${String(input)}` }; } };
const plainCases = cases.map((c, i) => new Case({ name: `case-${i}`, input: c.input, agent: plainAgent, scorer: passes }));

async function timed(options: { record?: string; replay?: string }, which: readonly Case[] = cases): Promise<number> {
  const t = performance.now();
  const suite = await runCases(which, { concurrency: CONCURRENCY, ...options });
  const seconds = (performance.now() - t) / 1000;
  const failed = suite.results.filter((r) => !r.passed);
  if (failed.length > 0) throw new Error(`${failed.length} cases failed: ${failed[0]!.error}`);
  return CASES / seconds;
}

const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-replay-"));
try {
  // A short warm-up of both paths (JIT, the first file writes), in a folder of its own.
  const warm = mkdtempSync(join(tmpdir(), "evalfleet-bench-replay-warm-"));
  const warmCases = cases.slice(0, 100);
  await runCases(warmCases, { concurrency: CONCURRENCY, record: warm });
  await runCases(warmCases, { concurrency: CONCURRENCY, replay: warm });
  rmSync(warm, { recursive: true, force: true });

  await runCases(plainCases.slice(0, 100), { concurrency: CONCURRENCY });
  let plainRate = 0;
  for (let round = 0; round < ROUNDS; round++) plainRate = Math.max(plainRate, await timed({}, plainCases));
  served = 0;
  const recordRate = await timed({ record: dir });
  if (served !== CASES * EXCHANGES) throw new Error(`recording sent ${served} requests, expected ${CASES * EXCHANGES}`);
  if (readdirSync(dir).length !== CASES) throw new Error("not one cassette per case");
  // The fastest of three replays (a shared machine's other work only ever adds time); each sends nothing.
  served = 0;
  let replayRate = 0;
  for (let round = 0; round < ROUNDS; round++) replayRate = Math.max(replayRate, await timed({ replay: dir }));
  if (served !== 0) throw new Error(`replay sent ${served} requests`);
  console.log(`${CASES} cases x ${EXCHANGES} HTTP exchanges, concurrency ${CONCURRENCY}, local (runCases)`);
  console.log(`recording (loopback HTTP server, one cassette file per case) ${recordRate.toFixed(0).padStart(7)} cases/s`);
  console.log(`replaying (from the cassettes, nothing sent)                 ${replayRate.toFixed(0).padStart(7)} cases/s  (target >= 2000)`);
  console.log(`the same cases making no request (the runner's own cost)     ${plainRate.toFixed(0).padStart(7)} cases/s`);
  const overheadUs = (1 / replayRate - 1 / plainRate) * 1e6;
  console.log(`replay's cost over the runner's: ${overheadUs.toFixed(0)} us per case (${EXCHANGES} exchanges and one cassette file read)`);
  console.log(JSON.stringify({ replay_cases_per_s: replayRate, record_cases_per_s: recordRate, replay_plain_cases_per_s: plainRate, replay_overhead_us_per_case: overheadUs, replay_cases: CASES, replay_exchanges_per_case: EXCHANGES }));
} finally {
  rmSync(dir, { recursive: true, force: true });
  server.close();
}
