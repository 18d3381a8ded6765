import type { Hono } from "hono";
import { compareRuns } from "../history/compare.ts";
import { flakiness } from "../history/flaky.ts";
import { diffLines } from "../history/text-diff.ts";
import { CAUSE_FILTER_SQL, CAUSE_REASON_SQL } from "../history/store/schema.ts";
import { listTokens } from "../history/store/access-tokens.ts";
import type { ResultsStore } from "../history/store/store.ts";
import {
  caseHistory,
  caseRecord,
  casesPage,
  caseTranscript,
  listRunsPage,
  runSpend,
  runSummary,
  workerProgress,
  type RunSummary,
} from "../history/store/viewer-store.ts";
import { jsonError, type ViewerEnv } from "./access.ts";
import { caseIndexParam, casesParams, compareParams, encodeCursor, flakyParams, runIdParam, runsParams } from "./params.ts";

/**
 * The viewer's JSON API (docs/viewer.md): runs, a run with its progress, its cases a page at a
 * time, one case in full, compare and flaky. Every answer is JSON; an error is `{ error }` with
 * 400 (a bad parameter), 403 (not allowed) or 404 (no such run or case, or one the token's scope
 * hides: a scoped token cannot tell a hidden run from a missing one).
 */

/** Runs of a case's history shown on its page. */
const CASE_HISTORY_RUNS = 10;
/** Longest output diffed against the baseline's, in characters (a diff is quadratic at worst). */
const DIFF_MAX_CHARS = 200_000;

/** A run the request may see, or null (answer 404). */
async function visibleRun(store: ResultsStore, id: string, scope: ViewerEnv["Variables"]["access"]["scope"]): Promise<RunSummary | null> {
  return runSummary(store, id, scope);
}

const notFound = (what: string) => `no ${what} in this store (or not one this token may see)`;

/** Registers the API routes on the app. */
export function addApiRoutes(app: Hono<ViewerEnv>, store: ResultsStore): void {
  app.get("/api/runs", async (c) => {
    const q = runsParams(c.req.query());
    const page = await listRunsPage(store, { ...q, scope: c.get("access").scope });
    return c.json({ runs: page.runs, next_cursor: encodeCursor(page.nextCursor) });
  });

  app.get("/api/runs/:id", async (c) => {
    const id = runIdParam("id", c.req.param("id"));
    const run = await visibleRun(store, id, c.get("access").scope);
    if (!run) return jsonError(c, 404, notFound(`run ${JSON.stringify(id)}`));
    const rows = await store.sql.query("SELECT summary, config, description, suite_fingerprint, judge_model, heartbeat_at, regraded_from, pass_threshold FROM eval_runs WHERE id = ?", [id]);
    const r = rows[0] ?? {};
    const parse = (v: unknown): unknown => (typeof v === "string" ? JSON.parse(v) : null);
    return c.json({
      ...run,
      description: r.description ?? null,
      suite_fingerprint: r.suite_fingerprint ?? null,
      judge_model: r.judge_model ?? null,
      regraded_from: r.regraded_from ?? null,
      pass_threshold: r.pass_threshold ?? null,
      heartbeat_at: r.heartbeat_at ?? null,
      config: parse(r.config),
      summary: parse(r.summary),
      progress: run.status === "running" ? await progressOf(store, run) : null,
    });
  });

  app.get("/api/runs/:id/causes", async (c) => {
    const id = runIdParam("id", c.req.param("id"));
    const run = await visibleRun(store, id, c.get("access").scope);
    if (!run) return jsonError(c, 404, notFound(`run ${JSON.stringify(id)}`));
    // Failures grouped by kind and the first words of their reason, largest group first.
    // From the causes index alone (schema.ts): the expressions are the index's, word for word.
    const rows = await store.sql.query(
      `SELECT error_kind, ${CAUSE_REASON_SQL} AS reason, COUNT(*) AS n, MIN(case_index) AS first_index
       FROM case_results WHERE run_id = ? AND ${CAUSE_FILTER_SQL} GROUP BY error_kind, ${CAUSE_REASON_SQL} ORDER BY COUNT(*) DESC, MIN(case_index) LIMIT 20`,
      [id],
    );
    return c.json({ causes: rows.map((g) => ({ error_kind: g.error_kind ?? null, reason: String(g.reason), count: Number(g.n), first_index: Number(g.first_index) })) });
  });

  app.get("/api/runs/:id/cases", async (c) => {
    const id = runIdParam("id", c.req.param("id"));
    const q = casesParams(c.req.query());
    const run = await visibleRun(store, id, c.get("access").scope);
    if (!run) return jsonError(c, 404, notFound(`run ${JSON.stringify(id)}`));
    const page = await casesPage(store, id, q);
    return c.json({ cases: page.cases, total: page.total, next_cursor: encodeCursor(page.nextCursor) });
  });

  app.get("/api/runs/:id/cases/:index", async (c) => {
    const id = runIdParam("id", c.req.param("id"));
    const index = caseIndexParam(c.req.param("index"));
    const run = await visibleRun(store, id, c.get("access").scope);
    if (!run) return jsonError(c, 404, notFound(`run ${JSON.stringify(id)}`));
    const record = await caseRecord(store, id, index);
    if (!record) return jsonError(c, 404, notFound(`case ${index} in run ${JSON.stringify(id)}`));
    const history = await caseHistory(store, run.suite_name, record.name, CASE_HISTORY_RUNS + 1);
    const mine = history.findIndex((h) => h.run_id === id);
    const baseline = mine >= 0 ? history[mine + 1] : history.find((h) => h.started_at < run.started_at);
    const output = record.output ?? "";
    const diff = baseline && baseline.output !== null && output.length + baseline.output.length <= DIFF_MAX_CHARS ? diffLines(baseline.output, output) : null;
    return c.json({
      run_id: id,
      suite_name: run.suite_name,
      index,
      case: record.report,
      status: record.skipped ? "skipped" : record.error !== null ? "error" : record.passed ? "passed" : "failed",
      judge: { passed: record.judgePassed, score: record.judgeScore, reason: record.judgeReason },
      score: { value: record.scoreValue, passed: record.scorePassed, reason: record.scoreReason, detail: record.scoreDetail },
      reliability: record.reliability,
      metadata: record.metadata ?? null,
      // The input as text (null in runs recorded before schema version 9); the transcript has it as sent.
      input: record.input ?? null,
      transcript: await caseTranscript(store, id, index),
      history: history.slice(0, CASE_HISTORY_RUNS).map(({ output: _o, ...h }) => h),
      baseline: baseline ? { run_id: baseline.run_id, case_index: baseline.case_index, status: baseline.status, diff } : null,
    });
  });

  app.get("/api/compare", async (c) => {
    const { a, b } = compareParams(c.req.query());
    const scope = c.get("access").scope;
    const [runA, runB] = [await visibleRun(store, a, scope), await visibleRun(store, b, scope)];
    if (!runA) return jsonError(c, 404, notFound(`run ${JSON.stringify(a)}`));
    if (!runB) return jsonError(c, 404, notFound(`run ${JSON.stringify(b)}`));
    const [casesA, casesB] = [await store.caseRecords(a), await store.caseRecords(b)];
    return c.json({ a: runA, b: runB, ...compareRuns(casesA, casesB) });
  });

  app.get("/api/flaky", async (c) => {
    const { suite, branch, last } = flakyParams(c.req.query());
    const scope = c.get("access").scope;
    if (scope && !scope.includes(suite)) return jsonError(c, 403, `this token may not read suite ${JSON.stringify(suite)}`);
    const window = (await store.listRuns({ suiteName: suite, branch, kind: "suite", finishedOnly: true, limit: last })).reverse();
    if (window.length === 0) return jsonError(c, 404, notFound(`finished run of suite ${JSON.stringify(suite)}`));
    const cases = await store.caseRecordsOf(window.map((r) => r.id));
    const rows = flakiness(window.map((r) => ({ runId: r.id, cases: cases.get(r.id) ?? [] })));
    return c.json({ suite, branch: branch ?? null, runs: window.map((r) => r.id), cases: rows });
  });

  app.get("/api/tokens", async (c) => {
    if (!c.get("access").admin) return jsonError(c, 403, "listing tokens needs an admin token");
    return c.json({ tokens: await listTokens(store) });
  });
}

/** A running run's progress, from what it has recorded: rate, ETA, per-worker counts, spend. */
export async function progressOf(store: ResultsStore, run: RunSummary): Promise<Record<string, unknown>> {
  const [workers, spend] = [await workerProgress(store, run.id), await runSpend(store, run.id)];
  const elapsed = (Date.now() - Date.parse(run.started_at)) / 1000;
  const rate = elapsed > 0 ? run.done / elapsed : null;
  const remaining = run.total !== null ? Math.max(0, run.total - run.done) : null;
  return {
    done: run.done,
    total: run.total,
    // Cases not recorded yet: queued or in flight (the store does not tell them apart; `evalfleet
    // coordinator status` does, for a distributed run, from the broker).
    remaining,
    rate_per_second: rate,
    eta_seconds: rate && remaining !== null && rate > 0 ? remaining / rate : null,
    cost_usd: spend.cost_usd,
    last_result_at: spend.last_at,
    workers,
  };
}
