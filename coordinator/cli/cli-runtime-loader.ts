import { fileURLToPath } from "node:url";
import { FROM_SOURCES, packageFile } from "../../shared/runtime/package-files.ts";
import { PUBLIC_API, RUNTIME_IMPORT } from "../../shared/runtime/public-api.ts";
import { privateTempDir } from "../../shared/runtime/user-temp-dir.ts";
import { runCachedCommonJs } from "../../shared/runtime/cached-commonjs.ts";

/** What the CLI's runtime (cli-runtime.ts) exports. */
export interface CliRuntime {
  /** Runs one command line to its end (coordinator/cli/process-main.ts). */
  processMain: (argv: readonly string[]) => Promise<number>;
  /** The public API, evaluated on its first call. */
  publicApi: () => object;
}

/**
 * Loads the CLI's runtime and returns its `processMain`: dist/cli-runtime.cjs, one CommonJS file
 * holding the command line, the public API and everything they run, through a V8 code cache of its
 * own (shared/runtime/cached-commonjs.ts; the worker threads keep theirs for dist/thread-runtime.cjs). The
 * cache is written as the process exits, so it holds every function the command compiled; a
 * rebuilt file gets a new one. From the sources, the ES modules are the runtime.
 *
 * Makes the runtime's public API the one a suite's `import "evalfleet"` gets in this process (the
 * facade, dist/index.js; see shared/runtime/public-api.ts), evaluated when a suite first imports it: a
 * command that fails before loading its suite never pays for it.
 */
export async function loadCliRuntime(): Promise<CliRuntime["processMain"]> {
  // From the sources, the ES modules are the runtime, and the public API is imported where a
  // suite needs it (shared/runtime/public-api.ts).
  if (FROM_SOURCES) return (await import("./process-main.ts")).processMain;
  const slot = globalThis as Record<symbol, unknown>;
  // The runtime's import() calls come here (see shared/runtime/cached-commonjs.ts).
  slot[RUNTIME_IMPORT] ??= (specifier: string) => import(specifier);
  const loaded = runCachedCommonJs(fileURLToPath(packageFile("cli-runtime.ts", "dist/cli-runtime.cjs")), privateTempDir("code-cache"), { save: "later" });
  process.once("exit", () => loaded.save());
  const runtime = loaded.exports as unknown as CliRuntime;
  if (!Object.getOwnPropertyDescriptor(globalThis, PUBLIC_API)) {
    Object.defineProperty(globalThis, PUBLIC_API, {
      configurable: true,
      get: () => {
        const api = runtime.publicApi();
        Object.defineProperty(globalThis, PUBLIC_API, { value: api, writable: true, configurable: true });
        return api;
      },
    });
  }
  return runtime.processMain;
}
