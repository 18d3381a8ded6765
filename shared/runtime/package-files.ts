// runs in: both
import { readFileSync } from "node:fs";

/**
 * Files of evalfleet's own package that are loaded by path, not imported: its package.json and the
 * entry files of the threads it starts. The build bundles the JavaScript into shared chunks
 * (dist/chunks/), so a module cannot find its neighbours relative to its own URL; every such
 * path is taken from the package's root instead, found once by walking up to evalfleet's
 * package.json (the checkout in a run from sources, the installed package otherwise).
 */

/** Whether evalfleet runs from its TypeScript sources (the tests) rather than from dist/. */
export const FROM_SOURCES = import.meta.url.endsWith(".ts");

let root: { url: URL; pkg: { version?: unknown } } | null = null;

/** The package root (a directory URL ending in `/`) and its package.json, found once. */
function packageRoot(): { url: URL; pkg: { version?: unknown } } {
  if (root) return root;
  for (let dir = new URL("./", import.meta.url); ; dir = new URL("../", dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "evalfleet") return (root = { url: dir, pkg });
    } catch {
      // No readable package.json here: one level up.
    }
    if (new URL("../", dir).href === dir.href) throw new Error(`evalfleet cannot find its own package.json above ${import.meta.url}`);
  }
}

/**
 * A file of the package by its path from the root: `source` when running from sources, `built`
 * (under dist/) otherwise. For example the thread entry: `worker/pool/thread-entry.mjs` or
 * `dist/worker/pool/thread.cjs`.
 */
export function packageFile(source: string, built: string): URL {
  return new URL(FROM_SOURCES ? source : built, packageRoot().url);
}

/** The `version` of evalfleet's package.json, or `"unknown"` when it cannot be read. */
export function evalfleetVersion(): string {
  try {
    const v = packageRoot().pkg.version;
    return typeof v === "string" && v ? v : "unknown";
  } catch {
    return "unknown";
  }
}
