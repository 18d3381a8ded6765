import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import type { DriverOptions, SqlDriver } from "./driver.ts";
import type { StoreTarget } from "./url.ts";

/**
 * Opening a store's database: the driver for the URL's kind, loaded on first use (better-sqlite3
 * and pg are native or optional packages a run without `--db` never loads), and its migrations.
 */

/** Opens a driver for a parsed store URL (connects, or opens the file; creates nothing else). */
export async function openDriver(target: StoreTarget, options: DriverOptions): Promise<SqlDriver> {
  if (target.kind === "sqlite") {
    const { SqliteDriver } = await import("./sqlite-driver.ts");
    return SqliteDriver.open(target.path, target.display, options);
  }
  const { PostgresDriver } = await import("./postgres-driver.ts");
  return PostgresDriver.open(target.connectionString, target.display, options);
}

/** Brings a driver's database to schema `target` (default: the latest this evalfleet knows). */
export async function migrateDriver(driver: SqlDriver, target: number = SCHEMA_VERSION): Promise<{ from: number; to: number }> {
  const plan = MIGRATIONS.filter((m) => m.version <= target).map((m) => ({ version: m.version, description: m.description, statements: m.statements(driver.dialect) }));
  return driver.migrate(plan, SCHEMA_VERSION);
}
