import { packageFile } from "./package-files.ts";

/**
 * The global slot holding the instance of evalfleet's public API that a suite's
 * `import "evalfleet"` gets where it resolves to the facade (dist/thread-api.js): in a worker
 * thread, the thread's runtime (set by worker/pool/thread-start.ts); in a process that imports a
 * bundled suite, the process's own ES module API (set by {@link ensurePublicApi}). One instance
 * per thread, so the suite's cases, judges and limits are the runner's own.
 */
export const PUBLIC_API = Symbol.for("evalfleet.api");

/**
 * The global slot of the function the threads' runtime calls instead of `import()` (its cached
 * script cannot import on Node 20; scripts/build.mjs and worker/pool/cached-commonjs.ts): set by
 * a thread's entry to its own `import()`. The build writes both names into the files it makes.
 */
export const RUNTIME_IMPORT = Symbol.for("evalfleet.import");

/**
 * Makes this process's public API the one the facade hands out, before a bundled suite that
 * imports evalfleet is imported (a no-op in a worker thread, whose runtime set it already).
 */
export async function ensurePublicApi(): Promise<void> {
  const slot = globalThis as Record<symbol, unknown>;
  slot[PUBLIC_API] ??= await import(packageFile("index.ts", "dist/index.js").href);
}
