// runs in: main
/**
 * Which suite file the process is loading right now, if any: set by shared/suite/bounded-load.ts, read by
 * the CLI's exit handling (coordinator/main.ts) to name the file when Node quits on a top-level
 * await that can never settle. No imports, so the entry can read it without loading the suite code.
 */

let loading: string | null = null;

/** The suite file being loaded at this moment, or null. */
export function suiteBeingLoaded(): string | null {
  return loading;
}

/** Records the suite file being loaded (null: none). */
export function setSuiteBeingLoaded(file: string | null): void {
  loading = file;
}
