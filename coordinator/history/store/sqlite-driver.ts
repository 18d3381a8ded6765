import { Worker } from "node:worker_threads";
import * as z from "zod";
import { ErrorCode } from "../../../shared/errors.ts";
import { packageFile } from "../../../shared/runtime/package-files.ts";
import { SCHEMA_TABLE, schemaTableStatement } from "./schema.ts";
import { StoreError, storeFailure, type MigrationPlan, type SqlDriver, type SqlRow, type SqlStatement, type SqlValue } from "./driver.ts";
import { lazySchema } from "../../../shared/runtime/lazy-schema.ts";

/**
 * SQLite through better-sqlite3 on a thread of its own (sqlite-thread.mjs): the coordinator's
 * event loop never waits on the disk or on a lock. The thread is unreferenced (a daemon), so an
 * abandoned write cannot keep the process alive; each call's own timer does while it is pending.
 */

const ReplySchema = lazySchema(() => z.union([
  z.object({ kind: z.literal("ready"), error: z.object({ message: z.string(), code: z.string().nullable() }).optional() }),
  z.object({ id: z.number(), ok: z.literal(true), result: z.unknown() }),
  z.object({ id: z.number(), ok: z.literal(false), error: z.object({ message: z.string(), code: z.string().nullable() }) }),
]));

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/** The SQLite driver; see the module comment. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = "sqlite" as const;
  readonly display: string;
  readonly #worker: Worker;
  readonly #timeoutMs: number;
  readonly #pending = new Map<number, Pending>();
  #next = 1;
  #dead: string | null = null;

  private constructor(worker: Worker, display: string, timeoutMs: number) {
    this.#worker = worker;
    this.display = display;
    this.#timeoutMs = timeoutMs;
  }

  /** Opens (creating the file and its folder when missing) and checks that the file is a database. */
  static async open(path: string, display: string, options: { timeoutMs: number }): Promise<SqliteDriver> {
    // The busy timeout stays under the call timeout, so a locked database fails as SQLITE_BUSY
    // (the thread is then free for the next write) rather than by the main side giving up.
    const busyTimeoutMs = Math.max(50, Math.floor(options.timeoutMs * 0.8));
    const worker = new Worker(packageFile("coordinator/history/store/sqlite-thread.mjs", "dist/coordinator/history/store/sqlite-thread.js"), { workerData: { path, busyTimeoutMs } });
    worker.unref();
    const driver = new SqliteDriver(worker, display, options.timeoutMs);
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StoreError(ErrorCode.StoreUnavailable, `results store ${display}: cannot open: no answer within ${options.timeoutMs / 1000}s`)), options.timeoutMs);
      worker.once("message", (raw: unknown) => {
        clearTimeout(timer);
        const m = ReplySchema.safeParse(raw);
        if (!m.success || !("kind" in m.data)) return reject(new StoreError(ErrorCode.StoreUnavailable, `results store ${display}: cannot open: unexpected answer from its thread`));
        if (m.data.error) return reject(storeFailure(ErrorCode.StoreUnavailable, display, "cannot open", new Error(m.data.error.message)));
        resolve();
      });
      worker.once("error", (err) => {
        clearTimeout(timer);
        reject(storeFailure(ErrorCode.StoreUnavailable, display, "cannot open", err));
      });
    });
    try {
      await ready;
    } catch (err) {
      await worker.terminate().catch(() => undefined);
      throw err;
    }
    worker.on("message", (raw: unknown) => driver.#onReply(raw));
    worker.on("error", (err) => driver.#fail(`its thread failed: ${err.message}`));
    worker.on("exit", () => driver.#fail("its thread exited"));
    return driver;
  }

  query(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return this.#call({ op: "query", sql, params }) as Promise<SqlRow[]>;
  }

  async batch(statements: readonly SqlStatement[]): Promise<void> {
    if (statements.length === 0) return;
    await this.#call({ op: "batch", statements: statements.map((s) => ({ sql: s.sql, params: s.params ?? [] })) });
  }

  async migrate(plan: readonly MigrationPlan[], latest: number): Promise<{ from: number; to: number }> {
    try {
      return (await this.#call({ op: "migrate", plan, latest, schemaTable: SCHEMA_TABLE, createSchemaTable: schemaTableStatement() })) as { from: number; to: number };
    } catch (err) {
      if ((err as { sqliteCode?: string }).sqliteCode === "EVALFLEET_SCHEMA_NEWER") {
        throw new StoreError(ErrorCode.StoreSchema, `results store ${this.display}: ${(err as Error).message.replace(/^.*?: /, "")}`);
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.#dead) return;
    await this.#call({ op: "close" }).catch(() => undefined);
    this.#dead = "closed";
    // The thread ends by itself after closing; terminate one that is stuck in a write.
    await this.#worker.terminate().catch(() => undefined);
  }

  #call(message: Record<string, unknown>): Promise<unknown> {
    if (this.#dead) return Promise.reject(new StoreError(ErrorCode.StoreUnavailable, `results store ${this.display}: ${this.#dead}`));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new StoreError(ErrorCode.StoreWrite, `results store ${this.display}: no answer within ${this.#timeoutMs / 1000}s`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#worker.postMessage({ id, ...message });
    });
  }

  #onReply(raw: unknown): void {
    const m = ReplySchema.safeParse(raw);
    if (!m.success || !("id" in m.data)) return;
    const p = this.#pending.get(m.data.id);
    if (!p) return; // answered after its caller gave up
    this.#pending.delete(m.data.id);
    clearTimeout(p.timer);
    if (m.data.ok) p.resolve(m.data.result);
    else {
      const err = new StoreError(ErrorCode.StoreWrite, `results store ${this.display}: ${m.data.error.message}`);
      (err as { sqliteCode?: string | null }).sqliteCode = m.data.error.code;
      p.reject(err);
    }
  }

  #fail(why: string): void {
    if (this.#dead) return;
    this.#dead = why;
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      p.reject(new StoreError(ErrorCode.StoreUnavailable, `results store ${this.display}: ${why}`));
      this.#pending.delete(id);
    }
  }
}
