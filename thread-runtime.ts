/**
 * What a worker thread runs, built as one CommonJS file (dist/thread-runtime.cjs): the public API
 * and the thread's side of the pool. A thread loads it through a V8 code cache
 * (worker/pool/thread-start.ts), which Node 20 offers only for scripts, not for ES modules; a
 * suite's `import "evalfleet"` in a thread gets this same instance through the facade
 * (dist/index.js, see shared/runtime/public-api.ts). A program of the user's that imports evalfleet loads
 * this file too, through the facade.
 */
export * from "./index.ts";
export { startThread, default as runThreadBatch } from "./worker/pool/thread.ts";
