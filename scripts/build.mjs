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
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
/** Written last by a successful build: its mtime is the build's. */
const STAMP = join(dist, ".build-stamp");
/** What the build reads: a newer one of these makes dist/ stale. */
const INPUTS = ["index.ts", "shared", "worker", "coordinator", "tsconfig.json", "tsconfig.build.json", "package.json"];

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

/** The esbuild options of the bundle: the entry points keep their paths under dist/. */
function bundleOptions() {
  return {
    absWorkingDir: root,
    entryPoints: [
      // The public API, the CLI, a worker thread's entry, the results store's thread.
      { in: "index.ts", out: "index" },
      { in: "coordinator/main.ts", out: "coordinator/main" },
      { in: "worker/pool/thread.ts", out: "worker/pool/thread" },
      { in: "coordinator/history/store/sqlite-thread.mjs", out: "coordinator/history/store/sqlite-thread" },
    ],
    outdir: dist,
    outExtension: { ".js": ".js" },
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20.19",
    external: externals(),
    sourcemap: "linked",
    logLevel: "warning",
    // A bundled CommonJS dependency calls require() for Node's built-ins: give every chunk one.
    banner: { js: 'import { createRequire as __evalfleetCreateRequire } from "node:module";\nconst require = __evalfleetCreateRequire(import.meta.url);' },
  };
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

/** What a good build ends with: the declarations' specifiers fixed, then the stamp. */
function finish() {
  rewriteDeclarationSpecifiers(dist);
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
  const ctx = await esbuild.context({
    ...bundleOptions(),
    plugins: [{ name: "evalfleet-stamp", setup: (b) => b.onEnd((r) => { if (r.errors.length === 0) { writeFileSync(STAMP, `${new Date().toISOString()}\n`); console.error(`evalfleet build: rebundled at ${new Date().toLocaleTimeString()}`); } }) }],
  });
  await ctx.watch();
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
    esbuild.build(bundleOptions()).then(
      () => 0,
      () => 1, // esbuild has printed its errors
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
