import type { SqlRow, SqlValue } from "./driver.ts";
import { CASE_STATUS_SQL, PG_SEARCH_SQL, SQLITE_SEARCH_TABLE } from "./schema.ts";
import { CaseRowSchema, parseRows } from "./row-schemas.ts";
import type { CaseRecord } from "./case-record.ts";
import { CASE_COLUMNS } from "./case-row.ts";
import type { ResultsStore, StoredTranscript } from "./store.ts";

/**
 * The viewer's reads of the results store (`evalfleet serve`): runs and cases a page at a time,
 * filtered, searched and counted by the database (never a table scan in JavaScript), with keyset
 * cursors so that paging a run that is still being written neither repeats nor skips a case.
 * Every query selects the columns it shows: a run's `selection` and a case's `report` can be
 * megabytes, and a page must not read them.
 */

/** How a case ended, as the viewer filters it (see CASE_STATUS_SQL in schema.ts). */
export type CaseStatus = "passed" | "failed" | "error" | "skipped";

/** Which runs a caller may see: every suite (`null`) or only these. */
export type SuiteScope = readonly string[] | null;

/** One run as the runs list and the run page show it. */
export interface RunSummary {
  id: string;
  suite_name: string;
  name: string | null;
  status: string;
  /** Cases selected; null while a run whose selection is not a list is running. */
  total: number | null;
  /** Case results recorded so far. */
  done: number;
  passed: number;
  failed: number;
  skipped: number;
  /** Cases that ended in an error (counted in `failed` too). */
  errors: number;
  /** passed / (done - skipped), 0-1, or null before any case ran. */
  pass_rate: number | null;
  started_at: string;
  finished_at: string | null;
  git_branch: string | null;
  git_commit: string | null;
  duration_seconds: number | null;
  cost_usd: number | null;
}

/** Filters of {@link listRunsPage}. */
export interface RunsQuery {
  suite?: string;
  branch?: string;
  status?: string;
  /** Page size (the caller bounds it). */
  limit: number;
  /** From {@link RunsPage.nextCursor}: `[started_at, id]` of the last run shown. */
  cursor?: readonly [string, string] | null;
  scope: SuiteScope;
}

/** A page of runs, newest first. */
export interface RunsPage {
  runs: RunSummary[];
  nextCursor: readonly [string, string] | null;
}

/** The sort orders of a run's case table. */
export const CASE_SORTS = ["index", "name", "duration", "-duration"] as const;
/** A sort order of {@link CASE_SORTS}. */
export type CaseSort = (typeof CASE_SORTS)[number];

/** Filters of {@link casesPage}. */
export interface CasesQuery {
  status?: CaseStatus;
  errorKind?: string;
  tag?: string;
  /** The dataset split or set a case came from: its metadata's `set` (Exulu's records carry it). */
  set?: string;
  /** Words every match contains (names, inputs, outputs, reasons, errors). */
  q?: string;
  sort: CaseSort;
  limit: number;
  /** `[sort value, case index]` of the last case shown. */
  cursor?: readonly [string | number, number] | null;
}

/** One row of a run's case table. */
export interface CaseSummary {
  index: number;
  name: string;
  status: CaseStatus;
  error_kind: string | null;
  duration_seconds: number;
  score_value: number | null;
  judge_score: number | null;
  /** Why it failed, or the judge's reason: the first 300 characters. */
  reason: string | null;
  tags: string[];
  worker: string | null;
  /** The output's first 200 characters. */
  output_preview: string | null;
  recorded_at: string;
}

/** A page of cases with the count of every match. */
export interface CasesPage {
  cases: CaseSummary[];
  total: number;
  nextCursor: readonly [string | number, number] | null;
}

const RUN_COLUMNS = "r.id, r.suite_name, r.name, r.status, r.total, r.passed, r.failed, r.skipped, r.started_at, r.finished_at, r.git_branch, r.git_commit, r.duration_seconds, r.cost_usd";

/** Runs, newest first, a page at a time. */
export async function listRunsPage(store: ResultsStore, q: RunsQuery): Promise<RunsPage> {
  const where: string[] = ["r.kind = 'suite'"];
  const params: SqlValue[] = [];
  if (q.scope) {
    if (q.scope.length === 0) return { runs: [], nextCursor: null };
    where.push(`r.suite_name IN (${q.scope.map(() => "?").join(", ")})`);
    params.push(...q.scope);
  }
  if (q.suite) where.push("r.suite_name = ?"), params.push(q.suite);
  if (q.branch) where.push("r.git_branch = ?"), params.push(q.branch);
  if (q.status) where.push("r.status = ?"), params.push(q.status);
  if (q.cursor) {
    where.push("(r.started_at < ? OR (r.started_at = ? AND r.id < ?))");
    params.push(q.cursor[0], q.cursor[0], q.cursor[1]);
  }
  const rows = await store.sql.query(
    `SELECT ${RUN_COLUMNS}, (SELECT COUNT(*) FROM case_results c WHERE c.run_id = r.id) AS done FROM eval_runs r WHERE ${where.join(" AND ")} ORDER BY r.started_at DESC, r.id DESC LIMIT ${q.limit + 1}`,
    params,
  );
  const more = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  const errors = await errorCounts(store, page.map((r) => String(r.id)));
  const runs = await Promise.all(page.map((r) => summarise(store, r, errors.get(String(r.id)) ?? 0)));
  const last = runs[runs.length - 1];
  return { runs, nextCursor: more && last ? [last.started_at, last.id] : null };
}

/** One suite run by exact id, or null when there is none or the scope hides it. */
export async function runSummary(store: ResultsStore, id: string, scope: SuiteScope): Promise<RunSummary | null> {
  const rows = await store.sql.query(`SELECT ${RUN_COLUMNS}, (SELECT COUNT(*) FROM case_results c WHERE c.run_id = r.id) AS done FROM eval_runs r WHERE r.id = ? AND r.kind = 'suite'`, [id]);
  const row = rows[0];
  if (!row || !inScope(scope, String(row.suite_name))) return null;
  return summarise(store, row, (await errorCounts(store, [id])).get(id) ?? 0);
}

/** Whether a suite is visible to a scope. */
export function inScope(scope: SuiteScope, suite: string): boolean {
  return scope === null || scope.includes(suite);
}

/**
 * The cases that ended in an error, per run, in one query: a range of the status index per run
 * (its error rows only), so a page of runs costs one round trip and a 100,000-case run no more
 * than its errors.
 */
async function errorCounts(store: ResultsStore, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  const rows = await store.sql.query(`SELECT run_id, COUNT(*) AS n FROM case_results WHERE run_id IN (${ids.map(() => "?").join(", ")}) AND ${CASE_STATUS_SQL} = 'error' GROUP BY run_id`, [...ids]);
  for (const row of rows) out.set(String(row.run_id), Number(row.n));
  return out;
}

async function summarise(store: ResultsStore, r: SqlRow, errors: number): Promise<RunSummary> {
  const done = Number(r.done);
  const running = r.status === "running";
  let counts = { passed: num(r.passed) ?? 0, failed: num(r.failed) ?? 0, skipped: num(r.skipped) ?? 0, errors };
  let total = num(r.total);
  // A running run has no counts of its own yet: they come from the status index (one range per
  // status, not the run's rows). A finished run's are its record's; only its errors are counted.
  if (running) {
    const byStatus = await statusCounts(store, String(r.id));
    counts = { passed: byStatus.passed, failed: byStatus.failed + byStatus.error, skipped: byStatus.skipped, errors: byStatus.error };
    total = await selectedCount(store, String(r.id));
  }
  const ran = counts.passed + counts.failed;
  return {
    id: String(r.id),
    suite_name: String(r.suite_name),
    name: r.name == null ? null : String(r.name),
    status: String(r.status),
    total,
    done,
    ...counts,
    pass_rate: ran > 0 ? counts.passed / ran : null,
    started_at: String(r.started_at),
    finished_at: r.finished_at == null ? null : String(r.finished_at),
    git_branch: r.git_branch == null ? null : String(r.git_branch),
    git_commit: r.git_commit == null ? null : String(r.git_commit),
    duration_seconds: num(r.duration_seconds),
    cost_usd: num(r.cost_usd),
  };
}

/** A run's recorded cases by status. */
export async function statusCounts(store: ResultsStore, runId: string): Promise<Record<CaseStatus, number>> {
  const rows = await store.sql.query(`SELECT ${CASE_STATUS_SQL} AS s, COUNT(*) AS n FROM case_results WHERE run_id = ? GROUP BY ${CASE_STATUS_SQL}`, [runId]);
  const out: Record<CaseStatus, number> = { passed: 0, failed: 0, error: 0, skipped: 0 };
  for (const row of rows) out[row.s as CaseStatus] = Number(row.n);
  return out;
}

/** How many cases a running run selected (its selection's `cases` list), or null. */
async function selectedCount(store: ResultsStore, runId: string): Promise<number | null> {
  const expr = store.dialect === "postgres" ? "json_array_length((selection::json) -> 'cases')" : "json_array_length(selection, '$.cases')";
  try {
    const rows = await store.sql.query(`SELECT ${expr} AS n FROM eval_runs WHERE id = ?`, [runId]);
    return num(rows[0]?.n ?? null);
  } catch {
    // `cases` is not a list in this run's selection.
    return null;
  }
}

/**
 * Queries over case_results alone name the status columns unqualified, as the index does (the
 * planner matches an indexed expression by its text); the history's JOIN with eval_runs, which has
 * columns of the same names, qualifies them and needs no index.
 */
const JOINED_STATUS_SQL = "(CASE WHEN c.skipped THEN 'skipped' WHEN c.error IS NOT NULL THEN 'error' WHEN c.passed THEN 'passed' ELSE 'failed' END)";

const SORT_COLUMN: Record<CaseSort, { column: string; desc: boolean }> = {
  index: { column: "case_index", desc: false },
  name: { column: "name", desc: false },
  duration: { column: "duration_seconds", desc: false },
  "-duration": { column: "duration_seconds", desc: true },
};

/** A page of a run's cases, filtered and sorted by the database, with the count of every match. */
export async function casesPage(store: ResultsStore, runId: string, q: CasesQuery): Promise<CasesPage> {
  const where: string[] = ["c.run_id = ?"];
  const params: SqlValue[] = [runId];
  if (q.status) where.push(`${CASE_STATUS_SQL} = ?`), params.push(q.status);
  if (q.errorKind) where.push("c.error_kind = ?"), params.push(q.errorKind);
  if (q.tag) where.push("c.tags LIKE ? ESCAPE '\\'"), params.push(`%${likeEscape(JSON.stringify(q.tag))}%`);
  if (q.set) {
    where.push(store.dialect === "postgres" ? "(c.metadata::json ->> 'set') = ?" : "json_extract(c.metadata, '$.set') = ?");
    params.push(q.set);
  }
  if (q.q) {
    if (store.dialect === "postgres") where.push(`${PG_SEARCH_SQL} @@ plainto_tsquery('simple', ?)`), params.push(q.q);
    else where.push(`c.rowid IN (SELECT rowid FROM ${SQLITE_SEARCH_TABLE} WHERE ${SQLITE_SEARCH_TABLE} MATCH ?)`), params.push(ftsQuery(q.q));
  }
  const countRows = await store.sql.query(`SELECT COUNT(*) AS n FROM case_results c WHERE ${where.join(" AND ")}`, params);
  const sort = SORT_COLUMN[q.sort];
  const pageWhere = [...where];
  const pageParams = [...params];
  if (q.cursor) {
    const [value, index] = q.cursor;
    const cmp = sort.desc ? "<" : ">";
    if (sort.column === "case_index") pageWhere.push(`c.case_index > ?`), pageParams.push(index);
    else pageWhere.push(`(c.${sort.column} ${cmp} ? OR (c.${sort.column} = ? AND c.case_index > ?))`), pageParams.push(value, value, index);
  }
  const order = sort.column === "case_index" ? "c.case_index" : `c.${sort.column} ${sort.desc ? "DESC" : "ASC"}, c.case_index`;
  const rows = await store.sql.query(
    `SELECT c.case_index, c.name, ${CASE_STATUS_SQL} AS status, c.error_kind, c.duration_seconds, c.score_value, c.judge_score,
      substr(COALESCE(c.error, c.score_reason, c.judge_reason), 1, 300) AS reason, c.tags, c.worker, substr(c.output, 1, 200) AS output_preview, c.recorded_at
     FROM case_results c WHERE ${pageWhere.join(" AND ")} ORDER BY ${order} LIMIT ${q.limit + 1}`,
    pageParams,
  );
  const more = rows.length > q.limit;
  const cases = rows.slice(0, q.limit).map(caseSummary);
  const last = cases[cases.length - 1];
  const lastValue = last ? (sort.column === "name" ? last.name : sort.column === "duration_seconds" ? last.duration_seconds : last.index) : 0;
  return { cases, total: Number(countRows[0]?.n ?? 0), nextCursor: more && last ? [lastValue, last.index] : null };
}

/** Cases of a run recorded after `since` (ISO 8601), oldest first, at most `limit`: what a live page has not seen. */
export async function casesRecordedAfter(store: ResultsStore, runId: string, since: string, limit: number): Promise<CaseSummary[]> {
  const rows = await store.sql.query(
    `SELECT c.case_index, c.name, ${CASE_STATUS_SQL} AS status, c.error_kind, c.duration_seconds, c.score_value, c.judge_score,
      substr(COALESCE(c.error, c.score_reason, c.judge_reason), 1, 300) AS reason, c.tags, c.worker, substr(c.output, 1, 200) AS output_preview, c.recorded_at
     FROM case_results c WHERE c.run_id = ? AND c.recorded_at > ? ORDER BY c.recorded_at, c.case_index LIMIT ${limit}`,
    [runId, since],
  );
  return rows.map(caseSummary);
}

/** Per worker, the cases it recorded and when it last did, for a run's progress. */
export async function workerProgress(store: ResultsStore, runId: string): Promise<Array<{ worker: string | null; done: number; last_at: string }>> {
  const rows = await store.sql.query("SELECT worker, COUNT(*) AS n, MAX(recorded_at) AS last_at FROM case_results WHERE run_id = ? GROUP BY worker ORDER BY worker", [runId]);
  return rows.map((r) => ({ worker: r.worker == null ? null : String(r.worker), done: Number(r.n), last_at: String(r.last_at) }));
}

/** A run's spend so far (agent and judge), in USD, and when its first and last results landed. */
export async function runSpend(store: ResultsStore, runId: string): Promise<{ cost_usd: number; first_at: string | null; last_at: string | null }> {
  const rows = await store.sql.query("SELECT SUM(COALESCE(cost_usd, 0) + COALESCE(judge_cost_usd, 0)) AS cost, MIN(recorded_at) AS first_at, MAX(recorded_at) AS last_at FROM case_results WHERE run_id = ?", [runId]);
  const r = rows[0] ?? {};
  return { cost_usd: num(r.cost ?? null) ?? 0, first_at: r.first_at == null ? null : String(r.first_at), last_at: r.last_at == null ? null : String(r.last_at) };
}

/** One case's full record, or null. */
export async function caseRecord(store: ResultsStore, runId: string, index: number): Promise<CaseRecord | null> {
  const rows = await store.sql.query(`SELECT ${CASE_COLUMNS.join(", ")} FROM case_results WHERE run_id = ? AND case_index = ?`, [runId, index]);
  return rows.length === 0 ? null : (parseRows(CaseRowSchema, rows, "case_results")[0] ?? null);
}

/** One case's transcript (see ResultsStore.transcript). */
export async function caseTranscript(store: ResultsStore, runId: string, index: number): Promise<StoredTranscript | null> {
  return store.transcript(runId, index);
}

/** A case's outcomes over the last `limit` runs of its suite that it ran in, newest first (its own run included). */
export async function caseHistory(
  store: ResultsStore,
  suite: string,
  name: string,
  limit: number,
): Promise<Array<{ run_id: string; started_at: string; case_index: number; status: CaseStatus; score_value: number | null; output: string | null }>> {
  const rows = await store.sql.query(
    `SELECT r.id, r.started_at, c.case_index, ${JOINED_STATUS_SQL} AS status, c.score_value, c.output
     FROM case_results c JOIN eval_runs r ON r.id = c.run_id WHERE c.name = ? AND r.suite_name = ? ORDER BY r.started_at DESC, r.id DESC LIMIT ${limit}`,
    [name, suite],
  );
  return rows.map((r) => ({ run_id: String(r.id), started_at: String(r.started_at), case_index: Number(r.case_index), status: r.status as CaseStatus, score_value: num(r.score_value ?? null), output: r.output == null ? null : String(r.output) }));
}

function caseSummary(r: SqlRow): CaseSummary {
  let tags: string[] = [];
  try {
    const parsed: unknown = JSON.parse(String(r.tags));
    if (Array.isArray(parsed)) tags = parsed.map(String);
  } catch {
    // A tags column that is not JSON shows no tags.
  }
  return {
    index: Number(r.case_index),
    name: String(r.name),
    status: r.status as CaseStatus,
    error_kind: r.error_kind == null ? null : String(r.error_kind),
    duration_seconds: Number(r.duration_seconds),
    score_value: num(r.score_value ?? null),
    judge_score: num(r.judge_score ?? null),
    reason: r.reason == null ? null : String(r.reason),
    tags,
    worker: r.worker == null ? null : String(r.worker),
    output_preview: r.output_preview == null ? null : String(r.output_preview),
    recorded_at: String(r.recorded_at),
  };
}

/** Free text as an FTS5 query: each word a quoted string (no operator of the user's is interpreted), all required. */
export function ftsQuery(text: string): string {
  const words = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
  return words.length === 0 ? '""' : words.map((w) => `"${w}"`).join(" ");
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}
