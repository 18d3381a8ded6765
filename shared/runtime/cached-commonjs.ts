// runs in: both
import { isAscii } from "node:buffer";
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import vm from "node:vm";

/** What {@link runCachedCommonJs} did with the cache: `used` it, `wrote` a first one, `rewrote` one V8 rejected, or could not write one (`unwritable`). */
export type CodeCacheUse = "used" | "wrote" | "rewrote" | "unwritable";

/**
 * Runs a CommonJS file through a V8 code cache: the first run compiles it and writes the cache
 * (after running it, so the functions it ran are in the cache too); later runs, in any thread or
 * process of this user, skip most of the compiling. Node 20 has no compile cache of its own
 * (Node 22's `module.enableCompileCache`), and V8's cache serves scripts, not ES modules. V8
 * checks the cache against the source and its own version and flags, and rejects a stale one,
 * which is then rewritten. Measured on 2 cores, a thread of a run getting ready (evalfleet and a
 * 5-case suite imported) went from about 365 ms to 270 ms (bench/README.md).
 *
 * Node 20 loses a script's dynamic `import()` callback when the script comes from a code cache,
 * so the file must not call `import()` itself: dist/thread-runtime.cjs calls a function the
 * caller provides instead (scripts/build.mjs). Returns `module.exports` and what became of the cache.
 *
 * @param file absolute path of the CommonJS file.
 * @param cacheDir folder of the cache files (created when missing), or null for none (see
 *   shared/runtime/user-temp-dir.ts); a cache that cannot be read or written only costs the compiling.
 * @param options.save when a new cache is written: `now` (the default), right after the file ran;
 *   `later`, when the caller calls `save()`, so the cache also holds every function compiled until
 *   then (V8 compiles a function on its first call, and a cache holds only compiled ones): a
 *   thread saves after its first batch, when it has built its schemas and imported its suite.
 */
export function runCachedCommonJs(file: string, cacheDir: string | null, options: { save?: "now" | "later" } = {}): CachedCommonJs {
  const source = readSource(file);
  const stat = statSync(file);
  // Named by the file's path, so two installs of evalfleet keep a cache each, and by what makes a
  // cache stale (the file's size and time, Node's version), so a rebuilt file gets a new one.
  const owner = pathKey(file);
  const cacheFile = cacheDir === null ? null : join(cacheDir, `${owner}-${stat.size}-${Math.trunc(stat.mtimeMs)}-${process.version}-${process.arch}.bin`);
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile) cachedData = readFileSync(cacheFile);
  } catch {
    // No cache yet: this run writes it.
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData,
  });
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  const done = (cache: CodeCacheUse): CachedCommonJs => ({ exports: module.exports, cache, save: () => cache });
  if (cachedData && !script.cachedDataRejected) return done("used");
  if (cacheDir === null || cacheFile === null) return done("unwritable");
  let saved: CodeCacheUse | undefined;
  const save = (): CodeCacheUse => (saved ??= writeCodeCache(script, cacheDir, cacheFile, owner, cachedData !== undefined));
  if (options.save === "later") return { exports: module.exports, cache: "pending", save };
  return done(save());
}

/** What {@link runCachedCommonJs} returns. */
export interface CachedCommonJs {
  /** The file's `module.exports`. */
  exports: Record<string, unknown>;
  /** What became of the cache; `pending` until `save()` (with `save: "later"`). */
  cache: CodeCacheUse | "pending";
  /** Writes the pending cache, once, and says what became of it; otherwise returns `cache`. */
  save: () => CodeCacheUse;
}

function writeCodeCache(script: vm.Script, cacheDir: string, cacheFile: string, owner: string, replacing: boolean): CodeCacheUse {
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written whole and then renamed: another thread never reads half a cache.
    const partial = `${cacheFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(partial, script.createCachedData());
    renameSync(partial, cacheFile);
    // The caches of this file's earlier builds are stale for good.
    for (const old of readdirSync(cacheDir)) if (old.startsWith(`${owner}-`) && old.endsWith(".bin") && join(cacheDir, old) !== cacheFile) rmSync(join(cacheDir, old), { force: true });
    return replacing ? "rewrote" : "wrote";
  } catch {
    // Read-only or full temporary folder: the next thread compiles again.
    return "unwritable";
  }
}

/**
 * The file's text. An ASCII file (dist/thread-runtime.cjs is one: scripts/build.mjs checks) is
 * read as Latin-1, which copies its bytes as they are, instead of decoding UTF-8: 4-8 ms less
 * for the 1 MB runtime in a thread that is starting (bench/README.md).
 */
function readSource(file: string): string {
  const bytes = readFileSync(file);
  return bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
}

/** A short name for a path (FNV-1a, 32 bits, hex): `node:crypto` costs a thread milliseconds to load. */
function pathKey(path: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}
