#!/usr/bin/env node
// Builds dist/ from evalfleet's sources: what the package ships and what bin/evalfleet.mjs runs.
// The JavaScript is bundled by esbuild (entry points plus shared chunks in dist/chunks/, source
// maps beside them): a worker thread then loads a few dozen files instead of about 600 modules
// (evalfleet's ~270 and their dependencies'), which is most of a thread's start-up. The
// declarations come from tsc (tsconfig.build.json), one .d.ts per source file.
// Usage: node scripts/build.mjs [--if-stale | --watch] [--quiet]
//   --if-stale  build only when a source is newer than the last build (what the tests and a
//               checkout's `evalfleet` do; a full build takes a few seconds).
//   --watch     build, then rebundle the JavaScript on every change (declarations: `npm run build`).
// `npm run build` (also run by `prepare`, i.e. `npm ci`/`npm install` in a checkout, and by
// `npm test`) builds from scratch; `npm run build:watch` rebuilds on every change.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
/** Written last by a successful build: its mtime is the build's. */
const STAMP = join(dist, ".build-stamp");
/** What the build reads: a newer one of these makes dist/ stale. */
const INPUTS = ["index.ts", "thread-runtime.ts", "cli-runtime.ts", "shared", "worker", "coordinator", "tsconfig.json", "tsconfig.build.json", "package.json"];

/** The newest modification time (ms) under the build's inputs. */
export function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  for (const input of INPUTS) visit(join(root, input));
  return newest;
}

/** True when dist/ is missing or older than a source. */
export function isStale() {
  const stamp = statSync(STAMP, { throwIfNoEntry: false });
  return !stamp || stamp.mtimeMs < newestSource();
}

/** The .d.ts files keep the sources' `.ts` specifiers (tsc rewrites them in .js only): point them at the .js/.d.ts pair. */
function rewriteDeclarationSpecifiers(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rewriteDeclarationSpecifiers(path);
    else if (entry.name.endsWith(".d.ts")) {
      const text = readFileSync(path, "utf8");
      const fixed = text.replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, "$1$2.js$3");
      if (fixed !== text) writeFileSync(path, fixed);
    }
  }
}

/**
 * Packages left to Node's own resolution at run time rather than bundled: native code
 * (better-sqlite3), packages that start threads or processes from files of their own (piscina,
 * tsx, esbuild, thread-stream's transports are not used), the optional peers (loaded on first
 * use, and not installed for most users), and the ones only a distributed run or a model call
 * loads (NATS, openai, prom-client), which gain nothing from bundling. Everything else a run loads
 * at start-up (zod, commander, p-limit, ...) is bundled; pino and @opentelemetry/api are required
 * on first use by shared/logger.ts and shared/tracing/spans.ts (not bundled: a runtime require).
 */
function externals() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const runtime = ["better-sqlite3", "piscina", "tsx", "esbuild", "openai", "prom-client", "@nats-io/jetstream", "@nats-io/kv", "@nats-io/transport-node"];
  const optional = Object.keys(pkg.peerDependencies ?? {});
  return [...runtime, ...optional].flatMap((name) => [name, `${name}/*`]);
}

/** What every bundle shares: Node 20.19, the externals, linked source maps. */
function commonOptions() {
  return {
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    target: "node20.19",
    external: externals(),
    sourcemap: "linked",
    logLevel: "warning",
  };
}

/** A bundled CommonJS dependency calls require() for Node's built-ins: give every ES module chunk one. */
const REQUIRE_BANNER = 'import { createRequire as __evalfleetCreateRequire } from "node:module";\nconst require = __evalfleetCreateRequire(import.meta.url);';

/**
 * The bundles of dist/, each an esbuild options object:
 * - the ES modules of the main process: the CLI (dist/coordinator/main.js) for the commands that
 *   load no suite (`--help`, `status`, `runs`, ...; each loads only what it needs) and the results
 *   store's thread, sharing chunks (dist/chunks/);
 * - the runtimes, each one CommonJS file loaded through a V8 code cache
 *   (shared/runtime/cached-commonjs.ts): Node 20 caches compiled scripts, not ES modules, and compiles
 *   every ES module afresh. The worker threads' (dist/thread-runtime.cjs): the public API and the
 *   thread's side of the pool; what a plain `import "evalfleet"` loads too (the facade, dist/index.js).
 *   The CLI's (dist/cli-runtime.cjs), for the commands that load a suite: the command line and the
 *   public API, each evaluated when first reached (cli-runtime.ts);
 * - a thread's entry (dist/worker/pool/thread.cjs), which loads its runtime. CommonJS, as piscina
 *   loads it with require(): Node 20 aborts the whole process ("FATAL ERROR: v8::ToLocalChecked
 *   Empty MaybeLocal" in CreateRequiredModuleFacade) when a thread is terminated while require()
 *   wraps an ES module with a default export, which a run that ends during its threads' start does;
 * - the public API's export names (index.ts, bundled in memory only), which the facade lists.
 */
function bundleOptions() {
  return [
    {
      ...commonOptions(),
      entryPoints: [
        { in: "coordinator/main.ts", out: "coordinator/main" },
        { in: "coordinator/history/store/sqlite-thread.mjs", out: "coordinator/history/store/sqlite-thread" },
      ],
      outdir: dist,
      outExtension: { ".js": ".js" },
      chunkNames: "chunks/[name]-[hash]",
      splitting: true,
      format: "esm",
      banner: { js: REQUIRE_BANNER },
    },
    {
      ...commonOptions(),
      entryPoints: RUNTIMES.map((name) => ({ in: `${name}.ts`, out: name })),
      outdir: dist,
      outExtension: { ".js": ".cjs" },
      format: "cjs",
      // One file has one URL: every module's import.meta.url is the runtime's (shared/runtime/package-files.ts
      // finds the package from there).
      define: { "import.meta.url": "__evalfleetImportMetaUrl" },
      // One line, so the source map's lines stay right; "use strict" first, as the ES modules were
      // strict (esbuild's own directive comes after the banner); routeDynamicImports explains the import.
      banner: { js: `"use strict"; const __evalfleetImportMetaUrl = require("node:url").pathToFileURL(__filename).href; const ${RUNTIME_IMPORT} = globalThis[Symbol.for("evalfleet.import")] ?? ((specifier) => import(specifier));` },
    },
    {
      ...commonOptions(),
      entryPoints: [{ in: "worker/pool/thread-start.ts", out: "worker/pool/thread" }],
      outdir: dist,
      outExtension: { ".js": ".cjs" },
      format: "cjs",
      define: { "import.meta.url": "__evalfleetImportMetaUrl" },
      // Its import() stays an import() (the runtime's are routed to it), not a require().
      supported: { "dynamic-import": true },
      banner: { js: `"use strict"; const __evalfleetImportMetaUrl = require("node:url").pathToFileURL(__filename).href;` },
    },
    {
      ...commonOptions(),
      entryPoints: [{ in: "index.ts", out: "index" }],
      outdir: dist,
      format: "esm",
      write: false,
      sourcemap: false,
      metafile: true,
    },
  ];
}

/** The runtimes (see {@link bundleOptions}): `<name>.ts` at the root, built to dist/`<name>`.cjs. */
const RUNTIMES = ["thread-runtime", "cli-runtime"];

/** What the build does once a bundle is written: the facade from the export names, the runtimes' import() routed. */
async function afterBundle(options, result) {
  if (options.write === false) writeFacade(result.metafile);
  else if (options.entryPoints.some((e) => RUNTIMES.includes(e.out))) for (const name of RUNTIMES) await routeDynamicImports(join(dist, `${name}.cjs`));
}

/** What the runtime calls instead of `import()` (see {@link routeDynamicImports}). */
const RUNTIME_IMPORT = "__evalfleetImport";

/**
 * Rewrites every `import()` of dist/thread-runtime.cjs (packages loaded on first use, a suite's
 * file) to call the function the thread's entry provides (worker/pool/thread-start.ts). Node 20
 * loses a script's dynamic import callback when the script comes from a V8 code cache ("A
 * dynamic import callback was not specified"); the entry is an ES module, whose `import()` always
 * works and resolves packages as the runtime would (both are under dist/). Where the runtime is
 * required as it is (no thread entry), the banner falls back to its own `import()`. Found with a
 * parser, not a pattern: only real import expressions, never text that looks like one. Also makes
 * the file ASCII (its comments' other characters become "?"), and fails the build when it cannot.
 */
async function routeDynamicImports(file) {
  const { parse } = await import("acorn");
  const text = readFileSync(file, "utf8");
  const bannerEnd = text.indexOf("\n");
  const starts = [];
  const visit = (node) => {
    if (!node || typeof node.type !== "string") return;
    if (node.type === "ImportExpression" && node.start > bannerEnd) starts.push(node.start);
    for (const key of Object.keys(node)) {
      const value = node[key];
      if (Array.isArray(value)) for (const child of value) visit(child);
      else if (value && typeof value === "object" && typeof value.type === "string") visit(value);
    }
  };
  const comments = [];
  visit(parse(text, { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true, allowHashBang: true, onComment: (_block, _text, start, end) => comments.push([start, end]) }));
  // The runtime is read as Latin-1 when it is ASCII (shared/runtime/cached-commonjs.ts). esbuild
  // escapes every other character in code, but keeps comments as they are: theirs become "?",
  // one per UTF-16 unit, so no position moves.
  let ascii = text;
  for (const [start, end] of comments) {
    const comment = text.slice(start, end);
    if (/[^\x00-\x7f]/.test(comment)) ascii = ascii.slice(0, start) + comment.replace(/[^\x00-\x7f]/g, "?") + ascii.slice(end);
  }
  let out = "";
  let at = 0;
  for (const start of starts.sort((a, b) => a - b)) {
    out += ascii.slice(at, start) + RUNTIME_IMPORT;
    at = start + "import".length;
  }
  out += ascii.slice(at);
  const wide = /[^\x00-\x7f]/.exec(out);
  if (wide) throw new Error(`evalfleet build: ${file} has a character outside ASCII outside a comment at offset ${wide.index} (${JSON.stringify(out.slice(Math.max(0, wide.index - 40), wide.index + 40))}); threads read it as Latin-1`);
  writeFileSync(file, out);
  return starts.length;
}

/**
 * dist/index.js, what `import "evalfleet"` is: every export of the public API (index.ts), taken
 * from the instance this thread or process runs (shared/runtime/public-api.ts: a worker thread's runtime,
 * the CLI's), or, where none was set (a program of the user's that imports evalfleet), from
 * dist/thread-runtime.cjs, which it then makes this thread's. One instance per thread, so a suite's
 * cases, judges and limits are the runner's own.
 */
function writeFacade(metafile) {
  const names = Object.values(metafile.outputs).find((o) => o.entryPoint === "index.ts")?.exports ?? [];
  if (names.length === 0) throw new Error("evalfleet build: the public API has no exports in the metafile");
  const lines = [
    "// Generated by scripts/build.mjs: the public API (see shared/runtime/public-api.ts).",
    'import { createRequire } from "node:module";',
    'const api = (globalThis[Symbol.for("evalfleet.api")] ??= createRequire(import.meta.url)("./thread-runtime.cjs"));',
    ...names.map((n) => `export const ${n} = api.${n};`),
    "",
  ];
  writeFileSync(join(dist, "index.js"), lines.join("\n"));
}

/** The TypeScript compiler's script, or null (with a message) when it is not installed. */
function compiler() {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc");
  } catch {
    console.error("evalfleet build: the TypeScript compiler is not installed (npm ci installs it)");
    return null;
  }
}

/** esbuild's API, or null (with a message) when it is not installed. */
async function bundler() {
  try {
    return await import("esbuild");
  } catch {
    console.error("evalfleet build: esbuild is not installed (npm ci installs it)");
    return null;
  }
}

/** Runs tsc on the build configuration (declarations only); resolves to its exit status. */
function declarations(tsc) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
    child.on("error", () => resolve(1));
  });
}

/** The viewer's static files (`evalfleet serve`), read by path at run time: copied as they are. */
const ASSETS = "coordinator/serve/assets";

function copyAssets() {
  mkdirSync(join(dist, ASSETS), { recursive: true });
  for (const name of readdirSync(join(root, ASSETS))) copyFileSync(join(root, ASSETS, name), join(dist, ASSETS, name));
}

/** What a good build ends with: the declarations' specifiers fixed, the assets, then the stamp. */
function finish() {
  rewriteDeclarationSpecifiers(dist);
  copyAssets();
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/**
 * Builds once (declarations included), then rebundles the JavaScript on every change, marking
 * each good bundle, so a checkout's `evalfleet` sees dist/ current and does not rebuild.
 */
export async function watch() {
  if ((await build()) !== 0) process.exitCode = 1;
  const esbuild = await bundler();
  if (!esbuild) return;
  const stamp = { name: "evalfleet-stamp", setup: (b) => b.onEnd(async (r) => { if (r.errors.length === 0) { await afterBundle(b.initialOptions, r); writeFileSync(STAMP, `${new Date().toISOString()}\n`); console.error(`evalfleet build: rebundled at ${new Date().toLocaleTimeString()}`); } }) };
  for (const options of bundleOptions()) {
    const ctx = await esbuild.context({ ...options, plugins: [stamp] });
    await ctx.watch();
  }
  console.error("evalfleet build: watching the sources (Ctrl-C stops)");
}

/** Builds dist/ from scratch (bundle and declarations, side by side); resolves to 0 or an exit status. */
export async function build({ quiet = false } = {}) {
  const tsc = compiler();
  const esbuild = await bundler();
  if (!tsc || !esbuild) return 1;
  rmSync(dist, { recursive: true, force: true });
  const started = Date.now();
  const [bundled, declared] = await Promise.all([
    Promise.all(bundleOptions().map(async (options) => afterBundle(options, await esbuild.build(options)))).then(
      () => 0,
      (err) => (err?.errors ? 1 : (console.error(err), 1)), // esbuild has printed its own errors
    ),
    declarations(tsc),
  ]);
  if (bundled !== 0) return bundled;
  if (declared !== 0) return declared;
  finish();
  if (!quiet) console.error(`evalfleet build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (!existsSync(join(root, "index.ts"))) {
    // An installed package ships dist/ and no sources: nothing to build.
    process.exit(0);
  }
  if (args.includes("--watch")) await watch();
  else if (args.includes("--if-stale") && !isStale()) process.exit(0);
  else process.exit(await build({ quiet: args.includes("--quiet") }));
}
