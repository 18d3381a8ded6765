import { join } from "node:path";

/**
 * Where tests find the repository and the shared fixtures, whatever folder a test file sits in
 * (test/ mirrors the source tree, so test files live at different depths).
 */

/** The repository root. */
export const ROOT = join(import.meta.dirname, "..", "..");

/** The folder of the shared suite fixtures (`test/fixtures`). */
export const FIXTURES = join(ROOT, "test", "fixtures");

/** A file in `test/fixtures`. */
export function fixture(name: string): string {
  return join(FIXTURES, name);
}
