import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `<tmp>/evalfleet-<uid>/<name>`: a folder of this user's under the system's temporary folder, for
 * files evalfleet writes once and then loads (bundled suites, the threads' code cache), so another
 * user's files are never loaded. Where there are no uids (Windows), `fallbackUser` names the user.
 */
export function userTempDir(name: string, fallbackUser = "user"): string {
  const user = typeof process.getuid === "function" ? String(process.getuid()) : fallbackUser;
  return join(tmpdir(), `evalfleet-${user}`, name);
}
