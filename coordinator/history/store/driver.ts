import { EvalfleetError, ErrorCode, errorMessage } from "../../../shared/errors.ts";
import type { Dialect } from "./schema.ts";

/**
 * The SQL the store needs from a database, for SQLite (better-sqlite3 on its own thread) and
 * PostgreSQL (pg). Statements use `?` placeholders; the PostgreSQL driver numbers them.
 */

/** A value bound to a placeholder (SQLite stores a boolean as 1 or 0). */
export type SqlValue = string | number | boolean | null;

/** A row as the database returns it. */
export type SqlRow = Record<string, unknown>;

/** One statement with its parameters. */
export interface SqlStatement {
  sql: string;
  params?: readonly SqlValue[];
}

/** A migration as the driver applies it: its statements already written for the driver's dialect. */
export interface MigrationPlan {
  version: number;
  description: string;
  statements: string[];
}

/** A connection (pool) to one database. Every call is bounded by the driver's timeout. */
export interface SqlDriver {
  readonly dialect: Dialect;
  /** The database as shown to people (password redacted). */
  readonly display: string;
  /** Runs one statement; returns its rows (none for a write). */
  query(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Runs the statements in one transaction: all or none. */
  batch(statements: readonly SqlStatement[]): Promise<void>;
  /**
   * Applies the migrations the database lacks, in one transaction under a lock (two processes
   * opening a new database at once migrate it once). Refuses a database newer than `latest`.
   */
  migrate(plan: readonly MigrationPlan[], latest: number): Promise<{ from: number; to: number }>;
  /** Closes the connection; bounded, never throws. */
  close(): Promise<void>;
}

/** Options of {@link openDriver}. */
export interface DriverOptions {
  /** Bound on connecting and on each statement, in milliseconds. */
  timeoutMs: number;
  /** Told of a connection error that happens between statements (an idle PostgreSQL connection dropped). */
  onBackgroundError?: (message: string) => void;
}

/** Raised when the store cannot be reached or used; the message names the database, its password redacted. */
export class StoreError extends EvalfleetError {
  override readonly name = "StoreError";
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

/** `results store <display>: <what>: <reason>`, with a given secret removed from the reason. */
export function storeFailure(code: ErrorCode, display: string, what: string, err: unknown, secret?: string | null): StoreError {
  let reason = errorMessage(err).split("\n")[0] ?? "";
  if (secret) reason = reason.split(secret).join("***");
  return new StoreError(code, `results store ${display}: ${what}${reason ? `: ${reason}` : ""}`, { store: display });
}

/** Rejects after `ms` with `onTimeout()`, unless `promise` settles first. The timer never outlives the race. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(onTimeout()), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
