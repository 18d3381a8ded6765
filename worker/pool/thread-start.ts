import { fileURLToPath } from "node:url";
import { packageFile } from "../../shared/runtime/package-files.ts";
import { PUBLIC_API, RUNTIME_IMPORT } from "../../shared/runtime/public-api.ts";
import { privateTempDir } from "../../shared/runtime/user-temp-dir.ts";
import { runCachedCommonJs } from "../../shared/runtime/cached-commonjs.ts";

/**
 * A compiled worker thread's entry (dist/worker/pool/thread.cjs; from the sources, thread-entry.mjs
 * imports thread.ts instead). It loads the thread's runtime, one CommonJS file holding the public
 * API and the thread's side of the pool, through a V8 code cache, makes that instance the one a
 * suite's `import "evalfleet"` gets in this thread (the facade, dist/index.js), starts the
 * thread, and hands piscina the batch runner. Every module of evalfleet a thread uses comes from
 * that one file: Node's ES module loader costs about a millisecond per file here, and compiles
 * every time.
 */
// The runtime's import() calls come here (see shared/runtime/cached-commonjs.ts).
(globalThis as Record<symbol, unknown>)[RUNTIME_IMPORT] = (specifier: string) => import(specifier);
// A new cache is written after the thread's first batch, not as soon as the runtime ran: by then the
// functions of a thread's start (the schemas it builds on first use, the suite's import, the first
// cases) are compiled, and the cache holds them for every later thread.
const loaded = runCachedCommonJs(fileURLToPath(packageFile("thread-runtime.ts", "dist/thread-runtime.cjs")), privateTempDir("code-cache"), { save: "later" });
const runtime = loaded.exports;
(globalThis as Record<symbol, unknown>)[PUBLIC_API] ??= runtime;
(runtime.startThread as (options: { afterFirstBatch: () => void }) => void)({ afterFirstBatch: () => void loaded.save() });

export default runtime.runThreadBatch;
