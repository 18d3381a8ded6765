// The store's schema migrations (coordinator/history/store/schema.ts), and the PostgreSQL driver's
// placeholder numbering. No database here (see store.test.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { numbered } from "../../../../coordinator/history/store/postgres-driver.ts";
import { pendingMigrations, SCHEMA_VERSION, MIGRATIONS } from "../../../../coordinator/history/store/schema.ts";

describe("schema migrations", () => {
  test("schema: migrations are numbered from 1 without gaps; pending ones follow the current version", () => {
    assert.deepEqual(MIGRATIONS.map((m) => m.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    assert.deepEqual(pendingMigrations(0).map((m) => m.version), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(pendingMigrations(1).map((m) => m.version), [2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(pendingMigrations(2).map((m) => m.version), [3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(pendingMigrations(SCHEMA_VERSION), []);
    assert.equal(numbered("INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"), "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
  });
});
