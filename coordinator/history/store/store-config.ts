import { DEFAULT_HISTORY_RUNS, DEFAULT_STORE_TIMEOUT_SECONDS } from "../../../shared/defaults.ts";

/**
 * The results store's config module: the defaults of the options a store is opened and read with
 * (`ResultsStore.open`'s `timeoutSeconds`, `listRuns`' `limit`, the `dbTimeout` of the library's
 * runners and of an AgentAsJudgeEval), applied once, where the store or a recording is opened.
 * The command line compiles the same settings from its flags (`--db-timeout`, `--limit`) in
 * coordinator/cli/config.ts and the flags; both read shared/defaults.ts, so they cannot differ.
 */

/** Bound on connecting to the store, each write and the final flush, in seconds: the caller's, else 10. */
export function storeTimeoutSeconds(given: number | null | undefined): number {
  return given ?? DEFAULT_STORE_TIMEOUT_SECONDS;
}

/** How many runs a listing returns: the caller's (cut to a whole number, at least 1), else 20. */
export function runsLimit(given: number | null | undefined): number {
  return Math.max(1, Math.floor(given ?? DEFAULT_HISTORY_RUNS));
}
