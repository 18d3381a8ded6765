/**
 * The results store's schema, one for SQLite and PostgreSQL, as numbered migrations. Pure: SQL
 * text only; the drivers apply it (in one transaction, under a lock) and record each version in
 * `evalfleet_schema`.
 *
 * Conventions, so one set of queries serves both databases:
 * - timestamps are TEXT in ISO 8601 UTC with milliseconds (`2026-11-30T09:44:00.000Z`): they sort
 *   as text and round-trip exactly;
 * - JSON is TEXT (not JSONB, which reorders keys: `report` must stay byte-for-byte the report's);
 * - booleans are BOOLEAN in PostgreSQL and 0/1 in SQLite; numbers that may be fractional are
 *   DOUBLE PRECISION / REAL.
 *
 * History: version 1 (runs and case results); version 2 (tokens and cost per case, standalone
 * AgentAsJudgeEval evaluations, the branch index used by `--fail-on-regression` and `flaky`); version 3
 * (Exulu's run fields: a run's name, description, agent or team, evaluation functions, scoring
 * method and pass threshold; a case's id and metadata);
 * version 4 (a run's heartbeat, `heartbeat_at`, so that runs whose process died are closed as `abandoned`);
 * version 5 (the model providers: a case's `error_kind` and its judge's tokens and cost beside the
 * agent's; a run's infrastructure errors, tokens and cost);
 * version 6 (each case's full run output, `case_transcripts`, in a table of its own so that the
 * history's queries never read it; a run's link to the run it re-grades, `regraded_from`);
 * version 7 (a case result's `checks_fingerprint`: which checks graded it, so that `compare` and
 * `--fail-on-regression` pair only results graded the same way);
 * version 8 (the viewer, `evalfleet serve`: a text index over each case's name, output, reasons
 * and error (SQLite FTS5, PostgreSQL a GIN index of a `simple` tsvector), indexes for the case
 * table's status filter and live polling, and the `access_tokens` table, hashes only);
 * version 9 (a case's input as text, `input`, and the text index over it too: the FTS5 table is
 * made again with an `input` column and filled from the rows; PostgreSQL's expression index
 * replaced by a stored tsvector column, `search_vector`, and its GIN index (PostgreSQL 12 or
 * later); and an index of each run's failures by cause, for the run page).
 * Never edit a released migration: add the next one.
 */

/** The databases the store speaks. */
export type Dialect = "sqlite" | "postgres";

/** The schema version this evalfleet writes. */
export const SCHEMA_VERSION = 9;

/** The table that records applied versions. */
export const SCHEMA_TABLE = "evalfleet_schema";

/** One migration: the statements that take the schema from `version - 1` to `version`. */
export interface Migration {
  version: number;
  description: string;
  statements: (dialect: Dialect) => string[];
}

function types(d: Dialect): { real: string; bool: string } {
  return d === "postgres" ? { real: "DOUBLE PRECISION", bool: "BOOLEAN" } : { real: "REAL", bool: "INTEGER" };
}

/** Every migration, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "eval runs and case results",
    statements: (d) => {
      const t = types(d);
      return [
        `CREATE TABLE eval_runs (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL,
          suite_name TEXT NOT NULL,
          suite_fingerprint TEXT,
          suite_path TEXT,
          selection TEXT NOT NULL,
          config TEXT NOT NULL,
          judge_model TEXT,
          timeout_seconds ${t.real},
          started_at TEXT NOT NULL,
          finished_at TEXT,
          status TEXT NOT NULL,
          total INTEGER,
          passed INTEGER,
          failed INTEGER,
          skipped INTEGER,
          duration_seconds ${t.real},
          summary TEXT,
          git_commit TEXT,
          git_branch TEXT,
          host TEXT
        )`,
        `CREATE INDEX eval_runs_suite_started ON eval_runs (suite_name, started_at)`,
        `CREATE TABLE case_results (
          run_id TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
          case_index INTEGER NOT NULL,
          name TEXT NOT NULL,
          agent_id TEXT,
          team_id TEXT,
          tags TEXT NOT NULL,
          session_id TEXT NOT NULL,
          duration_seconds ${t.real} NOT NULL,
          judge_passed ${t.bool},
          judge_reason TEXT,
          judge_score ${t.real},
          reliability_passed ${t.bool},
          reliability_passed_calls TEXT,
          reliability_failed_calls TEXT,
          reliability_additional_calls TEXT,
          reliability_missing_calls TEXT,
          output TEXT,
          tools_called TEXT NOT NULL,
          timed_out ${t.bool} NOT NULL,
          skipped ${t.bool} NOT NULL,
          passed ${t.bool} NOT NULL,
          error TEXT,
          score_value ${t.real},
          score_passed ${t.bool},
          score_reason TEXT,
          score_detail TEXT,
          attempts INTEGER NOT NULL,
          worker TEXT,
          report TEXT NOT NULL,
          recorded_at TEXT NOT NULL,
          PRIMARY KEY (run_id, case_index)
        )`,
        `CREATE INDEX case_results_name ON case_results (name, run_id)`,
      ];
    },
  },
  {
    version: 2,
    description: "tokens and cost per case, standalone judge evaluations, branch index",
    statements: (d) => {
      const t = types(d);
      return [
        `ALTER TABLE case_results ADD COLUMN input_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN output_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN total_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN cost_usd ${t.real}`,
        `CREATE TABLE judge_evaluations (
          run_id TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          input TEXT NOT NULL,
          output TEXT NOT NULL,
          criteria TEXT NOT NULL,
          score ${t.real},
          reason TEXT,
          passed ${t.bool},
          failure TEXT,
          PRIMARY KEY (run_id, position)
        )`,
        `CREATE INDEX eval_runs_branch ON eval_runs (suite_name, git_branch, started_at)`,
      ];
    },
  },
  {
    version: 3,
    description: "run name, description, agent or team, evaluation functions, scoring method, pass threshold; case id and metadata",
    statements: (d) => {
      const t = types(d);
      return [
        `ALTER TABLE eval_runs ADD COLUMN name TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN description TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN agent_id TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN team_id TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN eval_functions TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN scoring_method TEXT`,
        `ALTER TABLE eval_runs ADD COLUMN pass_threshold ${t.real}`,
        `ALTER TABLE case_results ADD COLUMN case_id TEXT`,
        `ALTER TABLE case_results ADD COLUMN metadata TEXT`,
      ];
    },
  },
  {
    version: 4,
    description: "a run's heartbeat (runs whose process died are closed as abandoned)",
    statements: () => [`ALTER TABLE eval_runs ADD COLUMN heartbeat_at TEXT`],
  },
  {
    version: 5,
    description: "error kind and judge tokens per case; infrastructure errors, tokens and cost per run",
    statements: (d) => {
      const t = types(d);
      return [
        `ALTER TABLE case_results ADD COLUMN error_kind TEXT`,
        `ALTER TABLE case_results ADD COLUMN judge_input_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN judge_output_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN judge_total_tokens INTEGER`,
        `ALTER TABLE case_results ADD COLUMN judge_cost_usd ${t.real}`,
        `ALTER TABLE eval_runs ADD COLUMN infra_errors INTEGER`,
        `ALTER TABLE eval_runs ADD COLUMN total_tokens INTEGER`,
        `ALTER TABLE eval_runs ADD COLUMN cost_usd ${t.real}`,
      ];
    },
  },
  {
    version: 6,
    description: "each case's full run output (transcript); a regraded run's source",
    statements: (d) => {
      const t = types(d);
      return [
        `CREATE TABLE case_transcripts (
          run_id TEXT NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
          case_index INTEGER NOT NULL,
          transcript TEXT NOT NULL,
          bytes INTEGER NOT NULL,
          cut ${t.bool} NOT NULL,
          PRIMARY KEY (run_id, case_index)
        )`,
        `ALTER TABLE eval_runs ADD COLUMN regraded_from TEXT`,
      ];
    },
  },
  {
    version: 7,
    description: "the fingerprint of the checks that graded each case result",
    statements: () => [`ALTER TABLE case_results ADD COLUMN checks_fingerprint TEXT`],
  },
  {
    version: 8,
    description: "the viewer: case text search, status and live indexes, access tokens",
    statements: searchMigration,
  },
  {
    version: 9,
    description: "a case's input as text, in the text index too",
    statements: inputSearchMigration,
  },
];

/**
 * A case row's status as one expression, the same text in the index (migration 8) and in the
 * viewer's queries (viewer-store.ts), so the database can use the index. SQLite's 0/1 and
 * PostgreSQL's booleans both read as truth values here.
 */
export const CASE_STATUS_SQL = "(CASE WHEN skipped THEN 'skipped' WHEN error IS NOT NULL THEN 'error' WHEN passed THEN 'passed' ELSE 'failed' END)";

/**
 * The text PostgreSQL's search index covers (migration 8: an expression index; since migration 9
 * the stored column `search_vector`). Each part is cut: a tsvector is bounded at 1 MB, and an
 * expression that fails would fail the case's write.
 */
function pgSearchSql(withInput: boolean): string {
  const input = withInput ? " || ' ' || left(COALESCE(input, ''), 20000)" : "";
  return `to_tsvector('simple'::regconfig, left(name, 2000)${input} || ' ' || left(COALESCE(output, ''), 100000) || ' ' || left(COALESCE(judge_reason, ''), 20000) || ' ' || left(COALESCE(score_reason, ''), 20000) || ' ' || left(COALESCE(error, ''), 20000))`;
}

/**
 * What the viewer's PostgreSQL search matches (`search_vector @@ plainto_tsquery(...)`): since
 * migration 9 a stored, generated tsvector of name, input, output, reasons and error, with a GIN
 * index. Stored, not an expression index: a plan that filters a run's rows (the planner's choice
 * while a run just written has no statistics yet) then reads each row's vector instead of parsing
 * its text again, which took seconds at 10,000 cases.
 */
export const PG_SEARCH_SQL = "search_vector";

/**
 * A failure's cause as the run page groups them (`/api/runs/:id/causes`): the start of its error
 * or reason. The same text in the causes index (migration 9) and in the query, so the database
 * groups a run's failures from the index alone.
 */
export const CAUSE_REASON_SQL = "substr(COALESCE(error, score_reason, judge_reason, ''), 1, 80)";

/** The failures of a run, as the causes index (migration 9) and its query both filter them. */
export const CAUSE_FILTER_SQL = `${CASE_STATUS_SQL} IN ('failed', 'error')`;

/** SQLite's search table (FTS5, contentless: the rows live in case_results; rowid is theirs). */
export const SQLITE_SEARCH_TABLE = "case_search";

function searchMigration(d: Dialect): string[] {
  const common = [
    `CREATE INDEX case_results_status ON case_results (run_id, ${CASE_STATUS_SQL}, case_index)`,
    `CREATE INDEX case_results_recorded ON case_results (run_id, recorded_at)`,
    `CREATE TABLE access_tokens (
      id TEXT PRIMARY KEY,
      token_hash TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      suites TEXT,
      label TEXT,
      created_at TEXT NOT NULL,
      revoked_at TEXT,
      last_used_at TEXT
    )`,
  ];
  if (d === "postgres") return [...common, `CREATE INDEX case_results_search ON case_results USING GIN (${pgSearchSql(false)})`];
  const t = SQLITE_SEARCH_TABLE;
  const values = (row: "new" | "c") => `${row}.rowid, ${row}.name, COALESCE(${row}.output, ''), COALESCE(${row}.judge_reason, '') || ' ' || COALESCE(${row}.score_reason, ''), COALESCE(${row}.error, '')`;
  return [
    ...common,
    // contentless_delete (SQLite 3.43): a row is removed by rowid, without its old text.
    `CREATE VIRTUAL TABLE ${t} USING fts5(name, output, reasons, error, content='', contentless_delete=1, tokenize='unicode61')`,
    `INSERT INTO ${t} (rowid, name, output, reasons, error) SELECT ${values("c")} FROM case_results c`,
    `CREATE TRIGGER case_search_insert AFTER INSERT ON case_results BEGIN INSERT INTO ${t} (rowid, name, output, reasons, error) VALUES (${values("new")}); END`,
    `CREATE TRIGGER case_search_delete AFTER DELETE ON case_results BEGIN DELETE FROM ${t} WHERE rowid = old.rowid; END`,
    `CREATE TRIGGER case_search_update AFTER UPDATE OF name, output, judge_reason, score_reason, error ON case_results BEGIN DELETE FROM ${t} WHERE rowid = old.rowid; INSERT INTO ${t} (rowid, name, output, reasons, error) VALUES (${values("new")}); END`,
  ];
}

/**
 * Migration 9: the input joins the text index. FTS5 cannot add a column to a table, so SQLite's
 * is dropped and made again (with its triggers) and filled from the rows: on a store of 100,000
 * cases that is a few seconds, once, when a new evalfleet first opens it. Rows written before have
 * no input (it was not recorded); their other text is indexed as before. It also adds the causes
 * index: a partial index of the failures only, holding what the run page groups them by and the
 * case index, so grouping 10,000 failures of a run reads no row (about 1 ms, not 100). On
 * PostgreSQL, adding the stored `search_vector` rewrites the table and parses every row's text
 * once (about a millisecond a case): a long first open of a big store, then none.
 */
function inputSearchMigration(d: Dialect): string[] {
  const add = `ALTER TABLE case_results ADD COLUMN input TEXT`;
  const causes = `CREATE INDEX case_results_causes ON case_results (run_id, error_kind, ${d === "postgres" ? `(${CAUSE_REASON_SQL})` : CAUSE_REASON_SQL}, case_index) WHERE ${CAUSE_FILTER_SQL}`;
  if (d === "postgres") {
    return [
      add,
      causes,
      // The old index first: adding a stored column rewrites the table and would rebuild it too.
      `DROP INDEX case_results_search`,
      `ALTER TABLE case_results ADD COLUMN ${PG_SEARCH_SQL} tsvector GENERATED ALWAYS AS (${pgSearchSql(true)}) STORED`,
      // A small pending list (256 kB, not the default 4 MB): the planner counts its pages against
      // the index, and with a few MB of them (a 10,000-case run just written) it filtered every
      // row of the run instead, 100 ms at 10,000 cases against a few through the index. With no
      // pending list at all (fastupdate off) writes took four times as long.
      `CREATE INDEX case_results_search ON case_results USING GIN (${PG_SEARCH_SQL}) WITH (gin_pending_list_limit = 256)`,
    ];
  }
  const t = SQLITE_SEARCH_TABLE;
  const values = (row: "new" | "c") =>
    `${row}.rowid, ${row}.name, COALESCE(${row}.input, ''), COALESCE(${row}.output, ''), COALESCE(${row}.judge_reason, '') || ' ' || COALESCE(${row}.score_reason, ''), COALESCE(${row}.error, '')`;
  const columns = "rowid, name, input, output, reasons, error";
  return [
    add,
    causes,
    `DROP TRIGGER case_search_insert`,
    `DROP TRIGGER case_search_delete`,
    `DROP TRIGGER case_search_update`,
    `DROP TABLE ${t}`,
    `CREATE VIRTUAL TABLE ${t} USING fts5(name, input, output, reasons, error, content='', contentless_delete=1, tokenize='unicode61')`,
    `INSERT INTO ${t} (${columns}) SELECT ${values("c")} FROM case_results c`,
    `CREATE TRIGGER case_search_insert AFTER INSERT ON case_results BEGIN INSERT INTO ${t} (${columns}) VALUES (${values("new")}); END`,
    `CREATE TRIGGER case_search_delete AFTER DELETE ON case_results BEGIN DELETE FROM ${t} WHERE rowid = old.rowid; END`,
    `CREATE TRIGGER case_search_update AFTER UPDATE OF name, input, output, judge_reason, score_reason, error ON case_results BEGIN DELETE FROM ${t} WHERE rowid = old.rowid; INSERT INTO ${t} (${columns}) VALUES (${values("new")}); END`,
  ];
}

/** The statement that creates the version table (idempotent). */
export function schemaTableStatement(): string {
  return `CREATE TABLE IF NOT EXISTS ${SCHEMA_TABLE} (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)`;
}

/** The migrations still to apply to a database at `current`, up to `target` (default: the latest). */
export function pendingMigrations(current: number, target: number = SCHEMA_VERSION): Migration[] {
  return MIGRATIONS.filter((m) => m.version > current && m.version <= target);
}
