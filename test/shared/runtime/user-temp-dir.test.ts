// The per-user folder evalfleet loads cached files from (bundled suites, the runtimes' code caches):
// used only when it is this user's own and closed to others.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateTempDir } from "../../../shared/runtime/user-temp-dir.ts";

const uid = process.getuid!();

describe("privateTempDir", () => {
  test("creates <root>/evalfleet-<uid>/<name>, closed to others", () => {
    const root = mkdtempSync(join(tmpdir(), "evalfleet-private-"));
    const dir = privateTempDir("code-cache", { root });
    assert.equal(dir, join(root, `evalfleet-${uid}`, "code-cache"));
    assert.equal(statSync(join(root, `evalfleet-${uid}`)).mode & 0o077, 0);
    assert.equal(privateTempDir("code-cache", { root }), dir, "the same folder the next time");
  });

  test("refuses a user folder that others may write to", () => {
    const root = mkdtempSync(join(tmpdir(), "evalfleet-private-"));
    mkdirSync(join(root, `evalfleet-${uid}`));
    chmodSync(join(root, `evalfleet-${uid}`), 0o777);
    assert.equal(privateTempDir("suites", { root }), null);
  });

  test("refuses a user folder that is a link to somewhere else", () => {
    const root = mkdtempSync(join(tmpdir(), "evalfleet-private-"));
    const elsewhere = mkdtempSync(join(tmpdir(), "evalfleet-elsewhere-"));
    symlinkSync(elsewhere, join(root, `evalfleet-${uid}`));
    assert.equal(privateTempDir("suites", { root }), null);
  });

  test("refuses a user folder another user made", (t) => {
    if (uid !== 0) {
      t.skip("needs root to give a folder to another user");
      return;
    }
    const root = mkdtempSync(join(tmpdir(), "evalfleet-private-"));
    mkdirSync(join(root, `evalfleet-${uid}`), { mode: 0o755 });
    chownSync(join(root, `evalfleet-${uid}`), 65534, 65534);
    assert.equal(privateTempDir("suites", { root }), null);
  });
});
