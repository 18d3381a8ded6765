import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A private PostgreSQL database per test: created on the server the development machines and CI
 * run (127.0.0.1:5432, trust auth; `EVALFLEET_TEST_PG_URL` points elsewhere), dropped after.
 * Tests never depend on what is already in the server.
 */

/** The server's maintenance database, where test databases are created and dropped. */
export const PG_ADMIN_URL = process.env.EVALFLEET_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** Why PostgreSQL tests are skipped on this machine, or null when the server answers. */
export async function postgresUnavailable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (err) {
    return `PostgreSQL is not reachable at ${PG_ADMIN_URL.replace(/:[^:@/]*@/, ":***@")} (${(err as Error).message}); start it (.ci/run does) or set EVALFLEET_TEST_PG_URL`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A database made for one test. */
export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  name: string;
  /** Runs SQL on the test database through a connection of its own (not the store's). */
  sql: (text: string, params?: unknown[]) => Promise<pg.QueryResult>;
  /** A connection of its own, for tests that hold a lock. */
  client: () => Promise<pg.Client>;
  /** Drops the database (closing every connection to it first). */
  drop: () => Promise<void>;
}

/** Creates `evalfleet_test_<random>` on the server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `evalfleet_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const clients: pg.Client[] = [];
  const client = async (): Promise<pg.Client> => {
    const c = new pg.Client({ connectionString: url.toString() });
    c.on("error", () => undefined);
    await c.connect();
    clients.push(c);
    return c;
  };
  let shared: pg.Client | null = null;
  return {
    url: url.toString(),
    name,
    sql: async (text, params) => {
      shared ??= await client();
      return shared.query(text, params);
    },
    client,
    drop: async () => {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
      const a = new pg.Client({ connectionString: PG_ADMIN_URL });
      await a.connect();
      try {
        // WITH (FORCE) ends connections a failed test left open (PostgreSQL 13+).
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
