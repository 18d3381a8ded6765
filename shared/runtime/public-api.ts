// runs in: both
import { packageFile } from "./package-files.ts";

/**
 * The global slot holding the instance of evalfleet's public API that `import "evalfleet"` gets
 * (the facade, dist/index.js, which scripts/build.mjs writes): in a worker thread, the thread's
 * runtime (set by worker/pool/thread-start.ts); in the CLI's process, the CLI's runtime (set by
 * coordinator/cli/cli-runtime-loader.ts); in a program of the user's, dist/thread-runtime.cjs,
 * which the facade loads and sets itself; from the sources, index.ts ({@link ensurePublicApi}).
 * One instance per thread, so the suite's cases, judges and limits are the runner's own.
 */
export const PUBLIC_API = Symbol.for("evalfleet.api");

/**
 * The global slot of the function the runtimes call instead of `import()` (a cached script cannot
 * import on Node 20; scripts/build.mjs and shared/runtime/cached-commonjs.ts): set by a thread's
 * entry, and by the CLI's loader, to their own `import()`. The build writes both names into the
 * files it makes.
 */
export const RUNTIME_IMPORT = Symbol.for("evalfleet.import");

/**
 * Makes this process's public API the one the facade hands out, before a bundled suite that
 * imports evalfleet is imported (a no-op where a runtime set it already: a worker thread, the CLI).
 */
export async function ensurePublicApi(): Promise<void> {
  const slot = globalThis as Record<symbol, unknown>;
  slot[PUBLIC_API] ??= await import(packageFile("index.ts", "dist/index.js").href);
}
