// runs in: both
import { resolve } from "node:path";

/**
 * Where the local response cache of the built-in model clients (`--cache`) keeps its answers.
 * Not a setting: no flag moves it (a run's cache is always this folder of its working directory);
 * `evalfleet cache clear --dir` only names another folder to empty.
 */
export const RESPONSE_CACHE_DIR = ".evalfleet/cache";

/** The local response cache's folder for a run started in `cwd` (default: this process's), absolute. */
export function localResponseCacheDir(cwd: string = process.cwd()): string {
  return resolve(cwd, RESPONSE_CACHE_DIR);
}
