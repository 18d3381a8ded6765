import type pg from "pg";
import { ConfigError, ErrorCode } from "../../../shared/errors.ts";
import { SCHEMA_TABLE, schemaTableStatement } from "./schema.ts";
import { StoreError, storeFailure, withTimeout, type MigrationPlan, type SqlDriver, type SqlRow, type SqlStatement, type SqlValue } from "./driver.ts";
import { importOptional } from "../../../shared/runtime/optional-package.ts";

/**
 * PostgreSQL through the `pg` pool. Every statement is bounded twice: on the server
 * (`statement_timeout`, so a write stuck behind a lock gives the lock up) and on the client
 * (`query_timeout`, for a server that stopped answering). Idle connections do not keep the
 * process alive, and a connection dropped between statements is reported, never thrown.
 */

/** Key of the advisory lock held while migrating (any constant; "evalfleet" in ASCII, folded). */
const MIGRATION_LOCK = 0x6576616c666c;

/** The PostgreSQL driver; see the module comment. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = "postgres" as const;
  readonly display: string;
  readonly #pool: pg.Pool;
  readonly #timeoutMs: number;
  readonly #secret: string | null;

  private constructor(pool: pg.Pool, display: string, timeoutMs: number, secret: string | null) {
    this.#pool = pool;
    this.display = display;
    this.#timeoutMs = timeoutMs;
    this.#secret = secret;
  }

  /** Connects once (so a bad host, database or password is reported now) and keeps the pool. */
  static async open(connectionString: string, display: string, options: { timeoutMs: number; onBackgroundError?: (message: string) => void }): Promise<PostgresDriver> {
    let secret: string | null = null;
    try {
      secret = decodeURIComponent(new URL(connectionString).password) || null;
    } catch {
      secret = null;
    }
    // pg loads on first use: runs that record to SQLite, or nowhere, never pay for it.
    // Without pg the store cannot be used: exit 2 on the command line, as any unusable store.
    const { default: pgModule } = await importOptional("pg", "a PostgreSQL results store", () => import("pg")).catch((err: unknown) => {
      throw err instanceof ConfigError ? new StoreError(ErrorCode.StoreUnavailable, err.message, { package: "pg" }) : err;
    });
    const pool = new pgModule.Pool({
      connectionString,
      connectionTimeoutMillis: options.timeoutMs,
      query_timeout: options.timeoutMs,
      statement_timeout: options.timeoutMs,
      idleTimeoutMillis: 5_000,
      max: 4,
      allowExitOnIdle: true,
      application_name: "evalfleet",
    });
    const driver = new PostgresDriver(pool, display, options.timeoutMs, secret);
    // Without a listener, an idle connection the server drops would crash the process.
    pool.on("error", (err) => options.onBackgroundError?.(storeFailure(ErrorCode.StoreWrite, display, "connection lost", err, secret).message));
    try {
      await withTimeout(pool.query("SELECT 1"), options.timeoutMs + 1_000, () => new Error(`no answer within ${options.timeoutMs / 1000}s`));
    } catch (err) {
      void withTimeout(pool.end(), 1_000, () => new Error("close timed out")).catch(() => undefined);
      throw storeFailure(ErrorCode.StoreUnavailable, display, "cannot connect", err, secret);
    }
    return driver;
  }

  async query(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    try {
      const r = await this.#bounded(this.#pool.query(numbered(sql), [...params]));
      return r.rows as SqlRow[];
    } catch (err) {
      throw storeFailure(ErrorCode.StoreWrite, this.display, "query failed", err, this.#secret);
    }
  }

  async batch(statements: readonly SqlStatement[]): Promise<void> {
    if (statements.length === 0) return;
    await this.#transaction(async (client) => {
      for (const s of statements) await client.query(numbered(s.sql), [...(s.params ?? [])]);
    }, "write failed");
  }

  async migrate(plan: readonly MigrationPlan[], latest: number): Promise<{ from: number; to: number }> {
    let newer: number | null = null;
    const outcome = await this.#transaction(async (client) => {
      // Held until the transaction ends: two coordinators opening a new database migrate it once.
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query(schemaTableStatement());
      const r = await client.query(`SELECT COALESCE(MAX(version), 0) AS v FROM ${SCHEMA_TABLE}`);
      const from = Number(r.rows[0]?.v ?? 0);
      if (from > latest) {
        newer = from;
        return { from, to: from };
      }
      let to = from;
      for (const m of plan) {
        if (m.version <= from) continue;
        for (const sql of m.statements) await client.query(sql);
        await client.query(`INSERT INTO ${SCHEMA_TABLE} (version, description, applied_at) VALUES ($1, $2, $3)`, [m.version, m.description, new Date().toISOString()]);
        to = m.version;
      }
      return { from, to };
    }, "cannot create or migrate the schema");
    if (newer !== null) {
      throw new StoreError(ErrorCode.StoreSchema, `results store ${this.display}: the database has schema version ${newer}, newer than this evalfleet understands (${latest}): upgrade evalfleet`);
    }
    return outcome;
  }

  async close(): Promise<void> {
    await withTimeout(this.#pool.end(), this.#timeoutMs, () => new Error("close timed out")).catch(() => undefined);
  }

  async #transaction<T>(body: (client: pg.PoolClient) => Promise<T>, what: string): Promise<T> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.#bounded(this.#pool.connect());
      await client.query("BEGIN");
      const out = await body(client);
      await client.query("COMMIT");
      client.release();
      return out;
    } catch (err) {
      if (client) {
        await client.query("ROLLBACK").catch(() => undefined);
        // A connection that failed mid-transaction is not trusted again.
        client.release(true);
      }
      throw storeFailure(ErrorCode.StoreWrite, this.display, what, err, this.#secret);
    }
  }

  /** The client-side bound, for a connection that hangs before pg's own timers start. */
  #bounded<T>(promise: Promise<T>): Promise<T> {
    return withTimeout(promise, this.#timeoutMs + 1_000, () => new Error(`no answer within ${this.#timeoutMs / 1000}s`));
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (the store's SQL has no `?` inside literals). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
