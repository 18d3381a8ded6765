// runs in: both
import { lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Options of {@link privateTempDir}. */
export interface PrivateTempDirOptions {
  /** Where the user's folder goes. Default: the system's temporary folder. */
  root?: string;
  /** Names the user where there are no uids (Windows). Default `"user"`. */
  fallbackUser?: string;
}

/**
 * `<tmp>/evalfleet-<uid>/<name>`, created when missing: a folder of this user's for files evalfleet
 * writes once and then loads (bundled suites, the runtimes' code caches). Null when the user's
 * folder is not safe to load from: not a real folder, another user's, or writable by others. A
 * folder someone else made first could hold files that evalfleet would then run as this user.
 */
export function privateTempDir(name: string, options: PrivateTempDirOptions = {}): string | null {
  const uid = typeof process.getuid === "function" ? process.getuid() : null;
  const base = join(options.root ?? tmpdir(), `evalfleet-${uid ?? options.fallbackUser ?? "user"}`);
  try {
    mkdirSync(base, { recursive: true, mode: 0o700 });
    const st = lstatSync(base);
    if (!st.isDirectory()) return null;
    if (uid !== null && (st.uid !== uid || (st.mode & 0o022) !== 0)) return null;
    const dir = join(base, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    return null;
  }
}
