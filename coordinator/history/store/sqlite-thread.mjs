// The SQLite connection of the results store, on a thread of its own. better-sqlite3 is
// synchronous: on the coordinator's thread a locked database (busy_timeout) or a slow disk would
// stall the event loop, and with it every case's timeout, progress and hooks (Agno's spec N5 runs
// a sync database on a daemon thread for the same reason). This thread knows no evalfleet types:
// it runs the SQL the main side sends. Plain JavaScript, so it starts without loading tsx.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { path, busyTimeoutMs } = workerData;
let db = null;

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 1/0. */
function bind(params) {
  return (params ?? []).map((v) => (v === true ? 1 : v === false ? 0 : v));
}

function open() {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  db = new Database(path, { timeout: busyTimeoutMs });
  // Readers (`evalfleet runs` during a run) do not block the writer, nor it them.
  if (path !== ":memory:") db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  // Reading the schema now turns a file that is not a database into an error at open time.
  db.prepare("SELECT count(*) AS n FROM sqlite_master").get();
}

function query(sql, params) {
  const stmt = db.prepare(sql);
  if (stmt.reader) return stmt.all(...bind(params));
  stmt.run(...bind(params));
  return [];
}

function batch(statements) {
  db.transaction(() => {
    for (const s of statements) db.prepare(s.sql).run(...bind(s.params));
  }).immediate();
  return [];
}

/** `createSchemaTable`: the statement that creates the version table (schema.ts, written once for both drivers). */
function migrate(plan, latest, schemaTable, createSchemaTable) {
  // IMMEDIATE takes the write lock first: two processes opening a new file migrate it once.
  return db
    .transaction(() => {
      db.exec(createSchemaTable);
      const from = db.prepare(`SELECT COALESCE(MAX(version), 0) AS v FROM ${schemaTable}`).get().v;
      if (from > latest) {
        const err = new Error(`the database has schema version ${from}, newer than this evalfleet understands (${latest}): upgrade evalfleet`);
        err.code = "EVALFLEET_SCHEMA_NEWER";
        throw err;
      }
      let to = from;
      for (const m of plan) {
        if (m.version <= from) continue;
        for (const sql of m.statements) db.exec(sql);
        db.prepare(`INSERT INTO ${schemaTable} (version, description, applied_at) VALUES (?, ?, ?)`).run(m.version, m.description, new Date().toISOString());
        to = m.version;
      }
      return { from, to };
    })
    .immediate();
}

try {
  open();
  parentPort.postMessage({ kind: "ready" });
} catch (err) {
  parentPort.postMessage({ kind: "ready", error: { message: String(err?.message ?? err), code: err?.code ?? null } });
}

parentPort.on("message", (m) => {
  try {
    let result;
    switch (m.op) {
      case "query":
        result = query(m.sql, m.params);
        break;
      case "batch":
        result = batch(m.statements);
        break;
      case "migrate":
        result = migrate(m.plan, m.latest, m.schemaTable, m.createSchemaTable);
        break;
      case "close":
        db?.close();
        db = null;
        parentPort.postMessage({ id: m.id, ok: true, result: null });
        parentPort.close();
        return;
      default:
        throw new Error(`unknown operation ${m.op}`);
    }
    parentPort.postMessage({ id: m.id, ok: true, result });
  } catch (err) {
    parentPort.postMessage({ id: m.id, ok: false, error: { message: String(err?.message ?? err), code: err?.code ?? null } });
  }
});
