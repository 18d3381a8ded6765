// Results store URLs (coordinator/history/store/url.ts): parsing, the default SQLite file, and the
// password redaction. No database here (see store.test.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseStoreUrl, redactUrl, DEFAULT_SQLITE_FILE } from "../../../../coordinator/history/store/url.ts";

describe("store URLs", () => {
  test("sqlite:PATH resolves against the working directory; absolute paths and sqlite:// stay", () => {
    assert.deepEqual(parseStoreUrl("sqlite:results.db", { cwd: "/w" }), { kind: "sqlite", path: "/w/results.db", display: "sqlite:/w/results.db" });
    assert.deepEqual(parseStoreUrl("sqlite:/var/evals.db", { cwd: "/w" }), { kind: "sqlite", path: "/var/evals.db", display: "sqlite:/var/evals.db" });
    assert.deepEqual(parseStoreUrl("sqlite:///var/evals.db"), { kind: "sqlite", path: "/var/evals.db", display: "sqlite:/var/evals.db" });
    assert.deepEqual(parseStoreUrl("sqlite::memory:"), { kind: "sqlite", path: ":memory:", display: "sqlite::memory:" });
  });

  test("sqlite: alone is the default file next to the suite, and needs a suite", () => {
    assert.deepEqual(parseStoreUrl("sqlite:", { cwd: "/w", suitePath: "evals/nightly.ts" }).kind, "sqlite");
    assert.equal((parseStoreUrl("sqlite", { cwd: "/w", suitePath: "evals/nightly.ts" }) as { path: string }).path, join("/w/evals", DEFAULT_SQLITE_FILE));
    assert.throws(() => parseStoreUrl("sqlite:"), { code: "STORE_URL_INVALID", message: "results store URL 'sqlite:' has no path, and there is no suite file to put the default one next to: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE" });
  });

  test("postgres URLs are kept whole for the driver and shown with the password redacted", () => {
    const t = parseStoreUrl("postgres://evals:s3cr%40t@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(t.kind, "postgres");
    assert.equal((t as { connectionString: string }).connectionString, "postgres://evals:s3cr%40t@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(t.display, "postgres://evals:***@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(parseStoreUrl("postgresql://evals@localhost/e").display, "postgresql://evals@localhost/e");
  });

  test("bad URLs are refused with the URL (password redacted) and what would do", () => {
    assert.throws(() => parseStoreUrl("mysql://root:hunter2@db/evals"), {
      code: "STORE_URL_INVALID",
      message: "results store URL 'mysql://root:***@db/evals' has an unsupported scheme 'mysql': use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE",
    });
    assert.throws(() => parseStoreUrl("results.db"), { message: "results store URL 'results.db' has no scheme: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE (did you mean sqlite:results.db?)" });
    assert.throws(() => parseStoreUrl("   "), { message: "results store URL is empty: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE" });
    assert.throws(() => parseStoreUrl("postgres://u:pw@:99999/x"), (err: Error) => {
      assert.doesNotMatch(err.message, /pw/);
      return true;
    });
  });

  test("redaction covers the userinfo password and password= parameters, nothing else", () => {
    assert.equal(redactUrl("postgres://u:p%40ss@h/db"), "postgres://u:***@h/db");
    assert.equal(redactUrl("postgres://h/db?user=u&password=hunter2&sslmode=require"), "postgres://h/db?user=u&password=***&sslmode=require");
    assert.equal(redactUrl("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
    assert.equal(redactUrl("sqlite:/tmp/a:b@c.db"), "sqlite:/tmp/a:b@c.db");
  });
});
