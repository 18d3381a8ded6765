// runs in: both
import { createRequire } from "node:module";

/**
 * A dependency required the first time it is needed, not when its importer loads: what a worker
 * thread never uses (tables, JUnit, YAML, the logger when nothing is logged, the tracing API when
 * nothing is traced) then costs its start-up nothing. These packages are CommonJS, so the require
 * is synchronous, as their callers are; resolved from evalfleet's own location, and left out of the
 * bundle (a runtime require), so they load from node_modules as Node finds them.
 */

const requirePackage = createRequire(import.meta.url);

/** A function that requires `name` on its first call and returns the same module ever after. */
export function lazyPackage<T>(name: string, pick: (module: unknown) => T = (m) => m as T): () => T {
  let value: T | undefined;
  return () => (value ??= pick(requirePackage(name)));
}
