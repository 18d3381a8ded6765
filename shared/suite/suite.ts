// runs in: both
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ErrorCode, SuiteLoadError, errorMessage, errorName } from "../errors.ts";
import { redactText } from "../redaction/secrets.ts";
import { ensureTypeScriptLoader, isTypeScriptFile } from "./typescript-loader.ts";
import { ensurePublicApi } from "../runtime/public-api.ts";
import { bundleSuite, bundlesSuites } from "./suite-bundle.ts";
import { beginLoadCapture } from "./load-capture.ts";
import { suiteFromExports, type SuiteContents } from "./suite-exports.ts";

/**
 * Loading a suite file: how every process (the coordinator, each worker, each thread) imports the
 * same file and gets the same ordered cases and fingerprint. Code never travels; cases are found by
 * index and name. What a file may export is shared/suite/suite-exports.ts.
 */

/** A loaded suite file: what it declares, and the module imported for it. */
export interface LoadedSuite extends SuiteContents {
  /** The module imported for it (hand it to worker threads: {@link LoadSuiteOptions.module}). */
  module?: SuiteModule;
}

/**
 * Imports a suite file (`.ts`, `.mts`, `.js`, `.mjs`; TypeScript through tsx, registered on the
 * first TypeScript suite) and validates its exports. Every problem is reported at once in
 * one {@link SuiteLoadError} naming the file.
 */
export async function loadSuite(file: string, options: LoadSuiteOptions = {}): Promise<LoadedSuite> {
  const path = resolve(file);
  if (!existsSync(path)) throw new SuiteLoadError(ErrorCode.SuiteNotFound, file, ["suite file not found"]);
  if (!statSync(path).isFile()) throw new SuiteLoadError(ErrorCode.SuiteNotFound, file, ["suite path is not a file"]);

  const { capture, end } = beginLoadCapture();
  let mod: Record<string, unknown>;
  let loadedFrom: SuiteModule;
  try {
    loadedFrom = options.module ?? (await suiteModule(path));
    if (loadedFrom.loader === "tsx") await ensureTypeScriptLoader();
    // A bundle's inline source map points stack traces at the suite's own files, as tsx does.
    if (loadedFrom.loader === "bundle") process.setSourceMapsEnabled(true);
    // The bundle imports evalfleet's facade, which hands out this thread's (or process's) API.
    if (loadedFrom.loader === "bundle" && loadedFrom.usesEvalfleet) await ensurePublicApi();
    try {
      mod = commonJsExports((await import(loadedFrom.url)) as Record<string, unknown>);
    } catch (err) {
      // A bundle that still reaches a TypeScript file as it links (one its checks could not see):
      // nothing of it ran yet, so the file is loaded through tsx instead.
      if (loadedFrom.loader !== "bundle" || (err as { code?: unknown })?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
      loadedFrom = { url: pathToFileURL(path).href, loader: "tsx", reason: `the bundle failed to link: ${errorMessage(err)}` };
      await ensureTypeScriptLoader();
      mod = commonJsExports((await import(loadedFrom.url)) as Record<string, unknown>);
    }
  } catch (err) {
    // A suite that throws at import may name a secret (`no access with key sk-...`): the message
    // is printed, logged and sent, so it leaves redacted. The cause stays for a debugger only.
    throw new SuiteLoadError(ErrorCode.SuiteLoadFailed, file, [redactText(describeImportFailure(err))], { cause: err });
  } finally {
    end();
  }
  return { ...(await suiteFromExports(file, path, mod, capture, { checked: options.checked === true })), module: loadedFrom };
}

/** What {@link loadSuite} imports for a suite file, and how. */
export interface SuiteModule {
  /** file: URL of the module imported. */
  url: string;
  /** `node`: a .js/.mjs file as it is; `bundle`: a TypeScript suite bundled once (shared/suite/suite-bundle.ts); `tsx`: the file through tsx. */
  loader: "node" | "bundle" | "tsx";
  /** Why a TypeScript suite is loaded through tsx rather than bundled, when it is. */
  reason?: string;
  /** A bundle that imports evalfleet through its facade (see shared/runtime/public-api.ts). */
  usesEvalfleet?: boolean;
}

/** Options of {@link loadSuite}. */
export interface LoadSuiteOptions {
  /**
   * The module to import instead of working it out: a worker thread gets its process's, so a
   * TypeScript suite is bundled once per process and its threads never load tsx for it.
   */
  module?: SuiteModule | null;
  /**
   * The process that dispatches the suite's cases has checked this file (a worker thread's load):
   * the checks across its cases are not run again (shared/suite/suite-exports.ts). Default false.
   */
  checked?: boolean;
}

/** The module to import for the suite file at `path`: a .ts suite bundled when it can be, else through tsx. */
async function suiteModule(path: string): Promise<SuiteModule> {
  const url = pathToFileURL(path).href;
  if (!isTypeScriptFile(path)) return { url, loader: "node" };
  if (!bundlesSuites()) return { url, loader: "tsx", reason: "bundling is off (EVALFLEET_SUITE_LOADER=tsx, or evalfleet runs from its sources)" };
  const bundled = await bundleSuite(path);
  return bundled.kind === "bundle" ? { url: bundled.url, loader: "bundle", usesEvalfleet: bundled.usesEvalfleet } : { url, loader: "tsx", reason: bundled.reason };
}

/**
 * The module's own exports. A .ts suite in a package without `"type": "module"` (what `npm init -y`
 * makes) is compiled to CommonJS: importing it yields `{ default: module.exports }`, where
 * `module.exports` carries the suite's `default` and named exports behind `__esModule`.
 */
function commonJsExports(mod: Record<string, unknown>): Record<string, unknown> {
  const inner = mod.default as Record<string, unknown> | null | undefined;
  if (inner && typeof inner === "object" && !Array.isArray(inner) && inner.__esModule === true) return inner;
  return mod;
}

/** One line saying why an import failed: the first line of a syntax error, a hint for known traps. */
function describeImportFailure(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (code === "ERR_REQUIRE_CYCLE_MODULE") {
    return 'cannot load a .ts suite from a package without "type": "module": rename it to .mts or add "type": "module" to its package.json';
  }
  const message = errorMessage(err);
  // A suite that checks its own configuration (a missing API key) has already said what to do.
  if (code === ErrorCode.ConfigMissing || code === ErrorCode.ConfigInvalid) return message.split("\n")[0]!;
  // esbuild (through tsx) reports "Transform failed with 1 error:\n<file>:<line>:<col>: ERROR: <text>".
  const esbuild = /Transform failed with \d+ errors?:\s*\n?(.*?:\d+:\d+: ERROR: [^\n]*)/.exec(message);
  if (esbuild?.[1]) {
    const where = esbuild[1].replace(/^.*?([^/\\]+:\d+:\d+: )/, "$1");
    // A package without "type": "module" (npm init -y) makes tsx compile .ts to CommonJS.
    if (/not supported with the "cjs" output format/.test(where)) return `${where}: this .ts file is compiled as CommonJS; add "type": "module" to its package.json or rename it to .mts`;
    return `syntax error: ${where}`;
  }
  const firstLine = message.split("\n").find((l) => l.trim()) ?? message;
  const name = errorName(err);
  if (name === "SyntaxError") return `syntax error: ${firstLine}`;
  if (code === "ERR_MODULE_NOT_FOUND") return `cannot import: ${firstLine}`;
  return `failed to load: ${name}: ${firstLine}`;
}
