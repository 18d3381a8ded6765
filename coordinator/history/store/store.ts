import { ErrorCode, EvalfleetError, errorMessage } from "../../../shared/errors.ts";
import { StoreError, type SqlDriver, type SqlRow, type SqlStatement, type SqlValue } from "./driver.ts";
import { parseTranscript } from "../../../shared/result/transcript.ts";
import type { Transcript } from "../../../shared/wire/transcript.ts";
import { migrateDriver, openDriver } from "./open-driver.ts";
import type { RunEnd, RunKind, RunRecord, RunStart } from "./run-record.ts";
import type { CaseRecord, JudgeEvaluationRecord } from "./case-record.ts";
import { CASE_COLUMNS, type CaseRow } from "./case-row.ts";
import { CaseRowSchema, JudgeEvaluationRowSchema, RunRowSchema, parseRows } from "./row-schemas.ts";
import { SCHEMA_VERSION } from "./schema.ts";
import { runsLimit, storeTimeoutSeconds } from "./store-config.ts";
import { parseStoreUrl, type ParseStoreUrlOptions, type StoreTarget } from "./url.ts";

/**
 * The results store: eval runs and their case results in SQLite or PostgreSQL, one schema,
 * created and migrated on open. Reads and writes only; when to write (and what a failed write
 * means for a run) is the recorder's business (recorder.ts).
 */

/** Where a case row holds its run id. */
const RUN_ID_COLUMN = CASE_COLUMNS.indexOf("run_id");
/** The columns a case record is read from: those the store writes, not the search index's (PostgreSQL's `search_vector`). */
const CASE_SELECT = CASE_COLUMNS.join(", ");

/** Rows per multi-row insert. */
const ROWS_PER_STATEMENT = 100;

/** Options of {@link ResultsStore.open}. */
export interface OpenStoreOptions extends ParseStoreUrlOptions {
  /** Bound on connecting, migrating and each statement, in seconds. Default 10. */
  timeoutSeconds?: number;
  /** Told of a connection error between statements (PostgreSQL). Default: ignored. */
  onBackgroundError?: (message: string) => void;
}

/** Filters of {@link ResultsStore.listRuns}. */
export interface RunFilter {
  suiteName?: string | null;
  /** `undefined`: any branch; `null`: runs recorded without a branch. */
  branch?: string | null;
  kind?: RunKind | null;
  /** Only runs that started before this (ISO 8601), for history up to a run. */
  startedBefore?: string | null;
  /** Only runs that have ended. */
  finishedOnly?: boolean;
  /** Newest first; default 20. */
  limit?: number;
}

/** Results store over one database; see the module comment. */
export class ResultsStore {
  readonly #driver: SqlDriver;
  /** The database as shown to people (`sqlite:/abs/path`, or the URL with its password redacted). */
  readonly display: string;
  /** The schema version found on open and the one now in place. */
  readonly schema: { from: number; to: number };

  private constructor(driver: SqlDriver, schema: { from: number; to: number }) {
    this.#driver = driver;
    this.display = driver.display;
    this.schema = schema;
  }

  /**
   * The store's database, for the viewer's paged queries (viewer-store.ts) and its access tokens
   * (access-tokens.ts), which keep their SQL beside their own concepts.
   */
  get sql(): SqlDriver {
    return this.#driver;
  }

  /** `sqlite` or `postgres`. */
  get dialect(): SqlDriver["dialect"] {
    return this.#driver.dialect;
  }

  /**
   * Opens a store by URL: connects (or opens the file), then creates or migrates the schema.
   * Throws a typed error before anything is recorded: STORE_URL_INVALID for a bad URL,
   * STORE_UNAVAILABLE when the database cannot be reached or migrated, STORE_SCHEMA when it is
   * newer than this evalfleet. Messages name the database with its password redacted.
   */
  static async open(url: string | StoreTarget, options: OpenStoreOptions = {}): Promise<ResultsStore> {
    const target = typeof url === "string" ? parseStoreUrl(url, options) : url;
    const driver = await openDriver(target, { timeoutMs: storeTimeoutSeconds(options.timeoutSeconds) * 1000, onBackgroundError: options.onBackgroundError });
    try {
      return await ResultsStore.fromDriver(driver);
    } catch (err) {
      await driver.close();
      throw err;
    }
  }

  /** A store over an open driver, after bringing its schema to the latest version. */
  static async fromDriver(driver: SqlDriver): Promise<ResultsStore> {
    let schema: { from: number; to: number };
    try {
      schema = await migrateDriver(driver, SCHEMA_VERSION);
    } catch (err) {
      if (err instanceof EvalfleetError && err.code === ErrorCode.StoreSchema) throw err;
      const reason = errorMessage(err).replace(/^results store \S+: /, "");
      if (/already exists/i.test(reason)) {
        throw new StoreError(
          ErrorCode.StoreSchema,
          `results store ${driver.display}: cannot create the schema: ${reason}; the database holds tables evalfleet did not create (use a database of its own${driver.dialect === "postgres" ? ", or a schema: ?options=-c%20search_path%3Devalfleet" : ""})`,
        );
      }
      throw new StoreError(ErrorCode.StoreUnavailable, `results store ${driver.display}: cannot create or migrate the schema: ${reason}`);
    }
    return new ResultsStore(driver, schema);
  }

  /**
   * Records the start of a run (status `running`). A run id already recorded is refused
   * (RUN_EXISTS) unless `resume` is set, when the existing record is reopened as it was.
   */
  async beginRun(run: RunStart, options: { resume?: boolean } = {}): Promise<void> {
    const existing = await this.#driver.query("SELECT id FROM eval_runs WHERE id = ?", [run.id]);
    if (existing.length > 0) {
      if (!options.resume) {
        throw new StoreError(ErrorCode.RunExists, `run '${run.id}' is already recorded in ${this.display}: pick another run id`, { runId: run.id });
      }
      await this.#driver.query("UPDATE eval_runs SET status = 'running', finished_at = NULL, heartbeat_at = ? WHERE id = ?", [new Date().toISOString(), run.id]);
      return;
    }
    const insert = insertRun(run, null);
    await this.#driver.query(insert.sql, insert.params);
  }

  /** Writes (or rewrites) case results of a run, in one transaction. */
  async writeCases(rows: readonly CaseRow[]): Promise<void> {
    await this.#driver.batch(upsertCases(rows));
  }

  /** Records how a run ended (and, when `end.startedAt` is earlier than the recorded start, that start: a resumed run's). */
  async finishRun(runId: string, end: RunEnd): Promise<void> {
    const startedAt = end.startedAt ?? null;
    // The run's infrastructure errors, tokens and cost, from its summary (columns of their own to query).
    const s = (end.summary ?? {}) as { infra_errors?: unknown; tokens?: { total?: unknown }; cost_usd?: unknown };
    const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
    const params: SqlValue[] = [end.finishedAt, end.status, end.total, end.passed, end.failed, end.skipped, end.durationSeconds, end.summary ? JSON.stringify(end.summary) : null, num(s.infra_errors), num(s.tokens?.total), num(s.cost_usd)];
    await this.#driver.query(
      `UPDATE eval_runs SET finished_at = ?, status = ?, total = ?, passed = ?, failed = ?, skipped = ?, duration_seconds = ?, summary = ?, infra_errors = ?, total_tokens = ?, cost_usd = ?${
        startedAt ? ", started_at = CASE WHEN ? < started_at THEN ? ELSE started_at END" : ""
      } WHERE id = ?`,
      [...params, ...(startedAt ? [startedAt, startedAt] : []), runId],
    );
  }

  /** Refreshes a running run's heartbeat (a run already closed stays closed). */
  async heartbeat(runId: string, at: string = new Date().toISOString()): Promise<void> {
    await this.#driver.query("UPDATE eval_runs SET heartbeat_at = ? WHERE id = ? AND status = 'running'", [at, runId]);
  }

  /**
   * Closes a run left `running` as `abandoned`: it ended when it was last seen alive (its last
   * heartbeat, else its start); its counts are what was recorded of it (the cases without a record
   * count as not passed). Returns false when the run was not running any more.
   */
  async abandonRun(run: RunRecord): Promise<boolean> {
    const lastSeen = run.heartbeatAt ?? run.startedAt;
    const cases = await this.caseRecords(run.id);
    const selected = Array.isArray(run.selection.cases) ? run.selection.cases.length : cases.length;
    const total = Math.max(selected, cases.length);
    const passed = cases.filter((c) => c.passed).length;
    const duration = Math.max(0, (Date.parse(lastSeen) - Date.parse(run.startedAt)) / 1000);
    const updated = await this.#driver.query(
      `UPDATE eval_runs SET status = 'abandoned', finished_at = ?, total = ?, passed = ?, failed = ?, skipped = ?, duration_seconds = ? WHERE id = ? AND status = 'running' RETURNING id`,
      [lastSeen, total, passed, total - passed, cases.filter((c) => c.skipped).length, Number.isFinite(duration) ? Math.round(duration * 1000) / 1000 : null, run.id],
    );
    return updated.length > 0;
  }

  /** Closes as `abandoned` every run left `running` whose last sign of life (heartbeat, else start) is before `before` (ISO 8601). Returns their ids. */
  async closeAbandonedRuns(before: string): Promise<string[]> {
    const rows = await this.#driver.query("SELECT * FROM eval_runs WHERE status = 'running' AND COALESCE(heartbeat_at, started_at) < ?", [before]);
    const closed: string[] = [];
    for (const run of parseRows(RunRowSchema, rows, "eval_runs")) if (await this.abandonRun(run)) closed.push(run.id);
    return closed;
  }

  /** Records a standalone AgentAsJudgeEval run and its evaluations, in one transaction. */
  async recordJudgeRun(run: RunStart, end: RunEnd, evaluations: readonly JudgeEvaluationRecord[]): Promise<void> {
    const statements: SqlStatement[] = [
      insertRun(run, end),
      ...evaluations.map((e) => ({
        sql: "INSERT INTO judge_evaluations (run_id, position, input, output, criteria, score, reason, passed, failure) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        params: [run.id, e.position, e.input, e.output, e.criteria, e.score, e.reason, e.passed, e.failure] as SqlValue[],
      })),
    ];
    await this.#driver.batch(statements);
  }

  /** Recent runs, newest first. */
  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.suiteName) {
      where.push("suite_name = ?");
      params.push(filter.suiteName);
    }
    if (filter.branch !== undefined) {
      if (filter.branch === null) where.push("git_branch IS NULL");
      else {
        where.push("git_branch = ?");
        params.push(filter.branch);
      }
    }
    if (filter.kind) {
      where.push("kind = ?");
      params.push(filter.kind);
    }
    if (filter.startedBefore) {
      where.push("started_at < ?");
      params.push(filter.startedBefore);
    }
    if (filter.finishedOnly) where.push("finished_at IS NOT NULL");
    const limit = runsLimit(filter.limit);
    const rows = await this.#driver.query(
      `SELECT * FROM eval_runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY started_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return parseRows(RunRowSchema, rows, "eval_runs");
  }

  /** One run by id, or by a prefix of its id that only it has; RUN_NOT_FOUND otherwise. */
  async findRun(idOrPrefix: string): Promise<RunRecord> {
    const exact = await this.#driver.query("SELECT * FROM eval_runs WHERE id = ?", [idOrPrefix]);
    if (exact.length > 0) return parseRows(RunRowSchema, exact, "eval_runs")[0]!;
    const escaped = idOrPrefix.replace(/[\\%_]/g, (c) => `\\${c}`);
    const rows = await this.#driver.query("SELECT * FROM eval_runs WHERE id LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 6", [`${escaped}%`]);
    if (rows.length === 1) return parseRows(RunRowSchema, rows, "eval_runs")[0]!;
    if (rows.length > 1) {
      const ids = parseRows(RunRowSchema, rows, "eval_runs").map((r) => r.id);
      throw new StoreError(ErrorCode.Usage, `run id prefix '${idOrPrefix}' is ambiguous in ${this.display}: ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", ..." : ""}`);
    }
    throw new StoreError(ErrorCode.RunNotFound, `no run '${idOrPrefix}' in ${this.display} (evalfleet runs lists them)`, { runId: idOrPrefix });
  }

  /** The newest run of a suite, optionally on a branch. */
  async latestRun(filter: Omit<RunFilter, "limit"> = {}): Promise<RunRecord | null> {
    return (await this.listRuns({ ...filter, limit: 1 }))[0] ?? null;
  }

  /** A run's case results, in declaration order. */
  async caseRecords(runId: string): Promise<CaseRecord[]> {
    const rows = await this.#driver.query(`SELECT ${CASE_SELECT} FROM case_results WHERE run_id = ? ORDER BY case_index`, [runId]);
    return parseRows(CaseRowSchema, rows, "case_results");
  }

  /** The case results of several runs, by run id. */
  async caseRecordsOf(runIds: readonly string[]): Promise<Map<string, CaseRecord[]>> {
    const out = new Map<string, CaseRecord[]>(runIds.map((id) => [id, []]));
    for (let i = 0; i < runIds.length; i += 200) {
      const ids = runIds.slice(i, i + 200);
      const rows = await this.#driver.query(`SELECT ${CASE_SELECT} FROM case_results WHERE run_id IN (${ids.map(() => "?").join(", ")}) ORDER BY run_id, case_index`, ids);
      for (const r of parseRows(CaseRowSchema, rows, "case_results")) out.get(r.runId)!.push(r);
    }
    return out;
  }

  /**
   * What the runs spent per case, for scheduling and estimates: name, seconds, tokens and cost
   * (agent plus judge; null when neither was reported) of each case that ran (skipped ones are
   * left out), by run id. Reads only those columns: outputs and reports stay in the database.
   */
  async caseSpendOf(runIds: readonly string[]): Promise<Map<string, CaseSpend[]>> {
    const out = new Map<string, CaseSpend[]>(runIds.map((id) => [id, []]));
    const sum = (a: unknown, b: unknown): number | null => (a === null && b === null ? null : (Number(a ?? 0) || 0) + (Number(b ?? 0) || 0));
    for (let i = 0; i < runIds.length; i += 200) {
      const ids = runIds.slice(i, i + 200);
      const rows = await this.#driver.query(
        `SELECT run_id, name, duration_seconds, total_tokens, judge_total_tokens, cost_usd, judge_cost_usd FROM case_results WHERE skipped = ? AND run_id IN (${ids.map(() => "?").join(", ")})`,
        [false, ...ids],
      );
      for (const r of rows) {
        const seconds = Number(r.duration_seconds);
        if (!Number.isFinite(seconds)) continue;
        out.get(String(r.run_id))?.push({ name: String(r.name), seconds, tokens: sum(r.total_tokens, r.judge_total_tokens), costUsd: sum(r.cost_usd, r.judge_cost_usd) });
      }
    }
    return out;
  }

  /**
   * One case's transcript (its full run output: shared/wire/transcript.ts) as recorded, or null
   * when none was kept. A stored transcript that does not parse (written by another evalfleet
   * version) is returned as `{ unreadable: why }`.
   */
  async transcript(runId: string, caseIndex: number): Promise<StoredTranscript | null> {
    const rows = await this.#driver.query("SELECT case_index, transcript FROM case_transcripts WHERE run_id = ? AND case_index = ?", [runId, caseIndex]);
    return rows.length === 0 ? null : readTranscriptRow(rows[0]!).stored;
  }

  /** Every transcript of a run, by case index (for a regrade: read once, then dropped case by case). */
  async transcripts(runId: string): Promise<Map<number, StoredTranscript>> {
    const rows = await this.#driver.query("SELECT case_index, transcript FROM case_transcripts WHERE run_id = ? ORDER BY case_index", [runId]);
    return new Map(rows.map((r) => { const t = readTranscriptRow(r); return [t.index, t.stored]; }));
  }

  /** The transcripts of some cases of a run, by case index (those without one are absent). */
  async transcriptsOf(runId: string, caseIndexes: readonly number[]): Promise<Map<number, StoredTranscript>> {
    const out = new Map<number, StoredTranscript>();
    for (let i = 0; i < caseIndexes.length; i += 200) {
      const ids = caseIndexes.slice(i, i + 200);
      const rows = await this.#driver.query(`SELECT case_index, transcript FROM case_transcripts WHERE run_id = ? AND case_index IN (${ids.map(() => "?").join(", ")})`, [runId, ...ids]);
      for (const r of rows) {
        const t = readTranscriptRow(r);
        out.set(t.index, t.stored);
      }
    }
    return out;
  }

  /** A standalone AgentAsJudgeEval run's evaluations, in order. */
  async judgeEvaluations(runId: string): Promise<JudgeEvaluationRecord[]> {
    const rows = await this.#driver.query("SELECT position, input, output, criteria, score, reason, passed, failure FROM judge_evaluations WHERE run_id = ? ORDER BY position", [runId]);
    return parseRows(JudgeEvaluationRowSchema, rows, "judge_evaluations");
  }

  /** Closes the connection; bounded, never throws. */
  async close(): Promise<void> {
    await this.#driver.close();
  }
}

/** What one case of a recorded run spent: see {@link ResultsStore.caseSpendOf}. */
export interface CaseSpend {
  name: string;
  seconds: number;
  tokens: number | null;
  costUsd: number | null;
}

/** A transcript as read back: the transcript, or why it cannot be read. */
export type StoredTranscript = Transcript | { unreadable: string };

function readTranscriptRow(row: SqlRow): { index: number; stored: StoredTranscript } {
  const index = Number(row.case_index);
  let raw: unknown;
  try {
    raw = JSON.parse(String(row.transcript));
  } catch {
    return { index, stored: { unreadable: "not JSON" } };
  }
  const parsed = parseTranscript(raw);
  return { index, stored: parsed.ok ? parsed.transcript : { unreadable: parsed.why } };
}

/** Multi-row upserts of case rows: a case recorded again (its final form, a resumed run) replaces the old row. */
function upsertCases(rows: readonly CaseRow[]): SqlStatement[] {
  const statements: SqlStatement[] = [];
  const cols = CASE_COLUMNS.join(", ");
  const updates = CASE_COLUMNS.filter((c) => c !== "run_id" && c !== "case_index")
    .map((c) => `${c} = excluded.${c}`)
    .join(", ");
  const tuple = `(${CASE_COLUMNS.map(() => "?").join(", ")})`;
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    statements.push({
      sql: `INSERT INTO case_results (${cols}) VALUES ${chunk.map(() => tuple).join(", ")} ON CONFLICT (run_id, case_index) DO UPDATE SET ${updates}`,
      params: chunk.flatMap((r) => r.values),
    });
  }
  // Transcripts after their case rows (the same transaction); a row without one leaves the stored one.
  const withTranscript = rows.filter((r) => r.transcript);
  for (let i = 0; i < withTranscript.length; i += ROWS_PER_STATEMENT) {
    const chunk = withTranscript.slice(i, i + ROWS_PER_STATEMENT);
    statements.push({
      sql: `INSERT INTO case_transcripts (run_id, case_index, transcript, bytes, cut) VALUES ${chunk.map(() => "(?, ?, ?, ?, ?)").join(", ")} ON CONFLICT (run_id, case_index) DO UPDATE SET transcript = excluded.transcript, bytes = excluded.bytes, cut = excluded.cut`,
      params: chunk.flatMap((r) => [r.values[RUN_ID_COLUMN]!, r.index, r.transcript!.json, r.transcript!.bytes, r.transcript!.cut]),
    });
  }
  return statements;
}

/** The `eval_runs` row of a run: started (`end` null, status `running`), or already over. */
function insertRun(run: RunStart, end: RunEnd | null): SqlStatement {
  const row: Array<[string, SqlValue]> = [
    ["id", run.id],
    ["kind", run.kind],
    ["suite_name", run.suiteName],
    ["suite_fingerprint", run.suiteFingerprint],
    ["suite_path", run.suitePath],
    ["selection", JSON.stringify(run.selection)],
    ["config", JSON.stringify(run.config)],
    ["judge_model", run.judgeModel],
    ["timeout_seconds", run.timeoutSeconds],
    ["started_at", run.startedAt],
    ...(end
      ? ([
          ["finished_at", end.finishedAt],
          ["status", end.status],
          ["total", end.total],
          ["passed", end.passed],
          ["failed", end.failed],
          ["skipped", end.skipped],
          ["duration_seconds", end.durationSeconds],
          ["summary", end.summary ? JSON.stringify(end.summary) : null],
        ] as Array<[string, SqlValue]>)
      : ([["status", "running"]] as Array<[string, SqlValue]>)),
    ["git_commit", run.gitCommit],
    ["git_branch", run.gitBranch],
    ["host", run.host],
    ["name", run.runName ?? null],
    ["description", run.description ?? null],
    ["agent_id", run.agentId ?? null],
    ["team_id", run.teamId ?? null],
    ["eval_functions", run.evalFunctions && run.evalFunctions.length > 0 ? JSON.stringify(run.evalFunctions) : null],
    ["scoring_method", run.scoringMethod ?? null],
    ["pass_threshold", run.passThreshold ?? null],
    ["heartbeat_at", end ? null : run.startedAt],
    ["regraded_from", run.regradedFrom ?? null],
  ];
  return {
    sql: `INSERT INTO eval_runs (${row.map(([column]) => column).join(", ")}) VALUES (${row.map(() => "?").join(", ")})`,
    params: row.map(([, value]) => value),
  };
}
