// runs in: both
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Plugin } from "esbuild";
import { FROM_SOURCES, packageFile } from "../runtime/package-files.ts";
import { processEnvironment, type Environment } from "../environment.ts";
import { privateTempDir } from "../runtime/user-temp-dir.ts";

/**
 * A TypeScript suite compiled once, for the process and all its threads: esbuild bundles the
 * suite file and the project files it imports into one ES module, leaves every package to Node
 * (each import rewritten to the file Node's resolution finds from the importing file, so
 * `import "evalfleet"` is the very copy this process runs), and writes it to a cache folder named
 * by its content. The process imports that module, and hands it to its worker threads, which then
 * never load tsx: tsx in a thread costs a hooks thread of its own and a round trip to it for every
 * module the thread loads afterwards (about 0.8 s of the README's demo on two cores, measured).
 *
 * Each project file keeps its own `import.meta.url`, `import.meta.filename` and
 * `import.meta.dirname` (and a CommonJS file its `__dirname` and `__filename`). What a bundle
 * cannot reproduce falls back to tsx, which loads the suite file as it is: a dynamic `import()` or
 * `require()` of a computed path, `import.meta.resolve`, any build error (a syntax error is then
 * reported by tsx, as before), or `EVALFLEET_SUITE_LOADER=tsx`.
 */

/** A bundled suite: the module to import instead of the file. */
export interface SuiteBundle {
  kind: "bundle";
  /** file: URL of the bundled module. */
  url: string;
  /**
   * Whether it imports this evalfleet, through its facade (dist/index.js): a process must
   * then set its public API ({@link ensurePublicApi}) before importing it.
   */
  usesEvalfleet: boolean;
}

/** Why the suite file is imported through tsx instead. */
export interface SuiteBundleFallback {
  kind: "fallback";
  reason: string;
}

/** Set when a project file cannot be bundled faithfully; the message is the fallback's reason. */
class NotBundleable extends Error {}

/** TypeScript file names. */
const TYPESCRIPT_FILE = /\.(c|m)?tsx?$/i;
/** File names esbuild compiles as code (the rest, JSON and text, it loads as it does by default). */
const CODE_FILE = /\.(c|m)?(t|j)sx?$/i;
/** A dynamic import() whose argument is not a plain string: what a bundle cannot follow. */
const COMPUTED_IMPORT = /\bimport\s*\(\s*(?![\s"']|`[^`$]*`)/;
/** A require() whose argument is not a plain string. */
const COMPUTED_REQUIRE = /(?<![.\w$])require\s*\(\s*(?!["']|`[^`$]*`)/;

/**
 * Whether suites are bundled in this process: not when evalfleet runs from its sources (the unit
 * tests, where tsx is loaded already) or when `EVALFLEET_SUITE_LOADER=tsx` asks for tsx.
 */
export function bundlesSuites(env: Environment = processEnvironment()): boolean {
  return !FROM_SOURCES && env.EVALFLEET_SUITE_LOADER !== "tsx";
}

/**
 * Bundles the TypeScript suite at `path` (absolute) into the cache folder `cacheDir` (default: a
 * folder of this user's under the system's temporary folder). Never throws: a suite that cannot
 * be bundled faithfully comes back as a {@link SuiteBundleFallback} naming why.
 */
export async function bundleSuite(path: string, options: { cacheDir?: string; conditions?: readonly string[] } = {}): Promise<SuiteBundle | SuiteBundleFallback> {
  let esbuild: typeof import("esbuild");
  try {
    esbuild = await import("esbuild");
  } catch {
    return { kind: "fallback", reason: "esbuild is not installed" };
  }
  const suiteUrl = pathToFileURL(path).href;
  const uses = { evalfleet: false };
  let text: string;
  try {
    const result = await esbuild.build({
      entryPoints: [path],
      bundle: true,
      write: false,
      format: "esm",
      platform: "node",
      target: "node20",
      // Node's own resolution for packages: its conditions, and no "module" field or condition.
      conditions: [...(options.conditions ?? processConditions())],
      mainFields: ["main"],
      sourcemap: "inline",
      sourcesContent: false,
      logLevel: "silent",
      plugins: [packagesToNode(uses), projectFiles()],
    });
    text = result.outputFiles[0]!.text;
  } catch (err) {
    const reason = err instanceof NotBundleable ? err.message : firstError(err);
    return { kind: "fallback", reason };
  }
  if (/__require\b/.test(text)) {
    // A CommonJS project file, or a require() in one: esbuild's shim calls `require`.
    if (/^(?:const|let|var|function)\s+require\b/m.test(text)) return { kind: "fallback", reason: "a project file declares its own require and needs esbuild's" };
    text = `import { createRequire as __evalfleetCreateRequire } from "node:module";\nconst require = __evalfleetCreateRequire(${JSON.stringify(suiteUrl)});\n${text}`;
  }
  const hash = createHash("sha256").update(suiteUrl).update("\0").update(text).digest("hex").slice(0, 20);
  const dir = options.cacheDir ?? defaultCacheDir();
  if (dir === null) return { kind: "fallback", reason: `no private cache folder for bundles: ${tmpdir()}/evalfleet-<uid> is not this user's own, or others may write to it` };
  const file = join(dir, `${basename(path).replace(/\.[^.]+$/, "")}-${hash}.mjs`);
  try {
    mkdirSync(dir, { recursive: true });
    // Written whole and then renamed: a thread of another run never imports half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, text);
    renameSync(partial, file);
  } catch (err) {
    return { kind: "fallback", reason: `cannot write the bundle to ${dir}: ${(err as Error).message}` };
  }
  return { kind: "bundle", url: pathToFileURL(file).href, usesEvalfleet: uses.evalfleet };
}

/** `<tmp>/evalfleet-<uid>/suites`: per user, so another user's files are never imported (null when that folder is not safe). */
function defaultCacheDir(): string | null {
  return privateTempDir("suites", { fallbackUser: processEnvironment().USERNAME });
}

/** The `--conditions` (`-C`) this process was started with, for packages resolved as Node does. */
function processConditions(): string[] {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if ((a === "--conditions" || a === "-C") && args[i + 1]) out.push(args[++i]!);
    else if (a.startsWith("--conditions=")) out.push(a.slice("--conditions=".length));
  }
  return out;
}

function firstError(err: unknown): string {
  const errors = (err as { errors?: Array<{ text?: string; location?: { file?: string; line?: number } | null }> }).errors;
  const e = errors?.[0];
  if (e?.text) return e.location?.file ? `${e.location.file}:${e.location.line}: ${e.text}` : e.text;
  return err instanceof Error ? err.message : String(err);
}

/** Packages (and Node's built-ins) stay imports, rewritten to the file Node would load; `uses` records whether one is this evalfleet. */
function packagesToNode(uses: { evalfleet: boolean }): Plugin {
  const inner = Symbol("inner");
  const ownEntry = fileURLToPath(packageFile("index.ts", "dist/index.js"));
  return {
    name: "evalfleet-packages",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.kind === "entry-point" || args.pluginData === inner) return undefined;
        if (args.path.startsWith("node:") || isBuiltin(args.path)) return { path: args.path, external: true };
        if (args.path.startsWith("file:")) {
          // A file by URL: the project's own TypeScript is bundled, like a relative import.
          const file = fileURLToPath(args.path);
          return TYPESCRIPT_FILE.test(file) ? { path: file } : { path: args.path, external: true };
        }
        if (/^[a-z][a-z0-9+.-]*:/i.test(args.path)) return { path: args.path, external: true };
        const found = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: inner });
        if (found.errors.length > 0) throw new NotBundleable(`cannot resolve "${args.path}" from ${args.importer}`);
        // TypeScript outside node_modules (a workspace package's sources, a "#" import) is the
        // project's own: bundled. Everything else is loaded by Node, once, from where it is.
        if (TYPESCRIPT_FILE.test(found.path) && !/[\\/]node_modules[\\/]/.test(found.path)) return { path: found.path };
        // This very evalfleet: its facade, which hands out the instance of the thread (or process)
        // that imports the bundle, so a thread does not load the public API a second time.
        if (found.path === ownEntry) {
          uses.evalfleet = true;
          return { path: packageFile("index.ts", "dist/index.js").href, external: true };
        }
        return { path: pathToFileURL(found.path).href, external: true };
      });
    },
  };
}

/** Project files keep their own `import.meta` and CommonJS names; what a bundle cannot follow is refused. */
function projectFiles(): Plugin {
  const types = new Map<string, boolean>();
  /** Whether files in `dir` are CommonJS by default (the nearest package.json has no "type": "module"). */
  const commonJsDir = (dir: string): boolean => {
    const known = types.get(dir);
    if (known !== undefined) return known;
    let result: boolean;
    try {
      result = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { type?: unknown }).type !== "module";
    } catch {
      const up = dirname(dir);
      result = up === dir ? true : commonJsDir(up);
    }
    types.set(dir, result);
    return result;
  };
  return {
    name: "evalfleet-project-files",
    setup(build) {
      build.onLoad({ filter: CODE_FILE }, (args) => {
        const source = readFileSync(args.path, "utf8");
        if (/\bimport\.meta\.resolve\b/.test(source)) throw new NotBundleable(`${args.path} uses import.meta.resolve`);
        if (COMPUTED_IMPORT.test(source)) throw new NotBundleable(`${args.path} imports a computed path`);
        if (COMPUTED_REQUIRE.test(source)) throw new NotBundleable(`${args.path} requires a computed path`);
        const url = pathToFileURL(args.path).href;
        const names: Record<string, string> = { url: JSON.stringify(url), filename: JSON.stringify(args.path), dirname: JSON.stringify(dirname(args.path)) };
        const used = new Set<string>();
        let contents = source.replace(/\bimport\.meta\.(url|filename|dirname)\b/g, (_m, k: string) => (used.add(k), `__evalfleet_import_meta_${k}`));
        const lines = [...used].map((k) => `const __evalfleet_import_meta_${k} = ${names[k]};`);
        const ext = extname(args.path).toLowerCase();
        const commonJs = ext === ".cts" || ext === ".cjs" || (ext !== ".mts" && ext !== ".mjs" && commonJsDir(dirname(args.path)));
        if (commonJs && /\b__(dirname|filename)\b/.test(source)) lines.push(`var __dirname = ${names.dirname}, __filename = ${names.filename};`);
        // On the first line (after a #! line), so the file's line numbers, in stack traces through
        // the source map, do not move.
        if (lines.length > 0) {
          const shebang = /^#![^\n]*\n/.exec(contents)?.[0] ?? "";
          contents = `${shebang}${lines.join(" ")} ${contents.slice(shebang.length)}`;
        }
        const loader = ext === ".tsx" ? "tsx" : ext === ".jsx" ? "jsx" : /\.(c|m)?ts$/.test(ext) ? "ts" : "js";
        return { contents, loader };
      });
    },
  };
}
