#!/usr/bin/env node
// Which side of the thread boundary each file of shared/ runs on, from the real import graphs:
// `thread` when only a worker thread of the pool loads it, `main` when only the main side does (the
// CLI's process and a worker process: their ES modules, the CLI's runtime, the store's thread),
// `both` when both do. Each file says so in its first line (`// runs in: both`); a `both` file's
// top level runs in every worker thread as it starts, so what it builds there, every thread pays.
// The graphs are esbuild's, as the build bundles them: the imports that run (static and dynamic;
// type-only ones are erased), from the entries below, packages left out.
// test/scripts/runs-in.test.ts recomputes them and fails when a comment is missing or wrong.
// Usage: node scripts/runs-in.mjs [--base DIR]           print each wrong file, exit 1 when any is
//        node scripts/runs-in.mjs [--base DIR] --write   write the comments
// (DIR defaults to the repo root; the unit test points it at a fixture tree)
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/** What a worker thread of the pool loads: its entry (which loads its runtime) and the runtime (the public API and the thread's side of the pool). */
export const THREAD_ENTRIES = ["worker/pool/thread-start.ts", "thread-runtime.ts"];
/** What the main side loads: the CLI's ES modules (every command, a worker process's too), the CLI's runtime, the results store's thread. */
export const MAIN_ENTRIES = ["coordinator/main.ts", "cli-runtime.ts", "coordinator/history/store/sqlite-thread.mjs"];

const SOURCE = /\.(ts|mts|mjs|js)$/;
const COMMENT = /^\/\/ runs in: (main|thread|both)\n/;

/** The files of the repo's modules reachable from `entries`, relative to `root`. */
async function reachable(root, entries) {
  const result = await build({
    absWorkingDir: root,
    entryPoints: entries,
    bundle: true,
    platform: "node",
    format: "esm",
    // Dynamic imports followed as chunks, as the CLI's bundle does; nothing is written.
    splitting: true,
    outdir: join(root, ".runs-in"),
    write: false,
    metafile: true,
    packages: "external",
    logLevel: "error",
  });
  return new Set(Object.keys(result.metafile.inputs));
}

/** Source files under `dir` (relative to `root`, `/` separators). */
function sources(root, dir) {
  return readdirSync(join(root, dir)).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(join(root, path)).isDirectory()) return sources(root, path);
    return SOURCE.test(entry) ? [path.split(sep).join("/")] : [];
  });
}

/**
 * Each file of shared/ with the side it runs on (`none` for a file neither side loads) and the side
 * its first line declares (null without the comment).
 * @returns {Promise<{ file: string, side: "main" | "thread" | "both" | "none", declared: string | null }[]>}
 */
export async function runsIn(root = repoRoot) {
  const [thread, main] = await Promise.all([reachable(root, THREAD_ENTRIES), reachable(root, MAIN_ENTRIES)]);
  return sources(root, "shared")
    .sort()
    .map((file) => {
      const side = thread.has(file) && main.has(file) ? "both" : thread.has(file) ? "thread" : main.has(file) ? "main" : "none";
      const declared = COMMENT.exec(readFileSync(join(root, file), "utf8"))?.[1] ?? null;
      return { file, side, declared };
    });
}

/** Writes `// runs in: SIDE` as the first line of `file`, in place of a previous one. */
function writeComment(root, file, side) {
  const text = readFileSync(join(root, file), "utf8");
  writeFileSync(join(root, file), `// runs in: ${side}\n${text.replace(COMMENT, "")}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { base: { type: "string" }, write: { type: "boolean" } } });
  const base = resolve(values.base ?? repoRoot);
  const write = values.write === true;
  const files = await runsIn(base);
  let wrong = 0;
  for (const { file, side, declared } of files) {
    if (side === "none") {
      console.log(`runs-in: ${file} is loaded by neither side: remove it, or import it`);
      wrong++;
    } else if (declared !== side) {
      if (write) writeComment(base, file, side);
      else wrong++;
      console.log(`runs-in: ${file}: ${side}${declared ? ` (says ${declared})` : " (says nothing)"}${write ? ": written" : ""}`);
    }
  }
  const count = (s) => files.filter((f) => f.side === s).length;
  console.log(`runs-in: ${files.length} files of shared/ (${relative(process.cwd(), base) || "."}): ${count("both")} both, ${count("main")} main, ${count("thread")} thread; ${wrong} wrong`);
  process.exitCode = wrong === 0 ? 0 : 1;
}
