// Renders bench/README.md from bench/results.json and bench/README.template.md (bench/readme.ts).
// `npm run bench` runs it at its end; alone: `npm run bench:readme`. With `--check` it writes
// nothing and exits 1 when bench/README.md is not what the two files render (someone edited it by
// hand, or results.json changed without it).
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { renderBenchReadme } from "./readme.ts";

/** The bench folder of this checkout. */
const BENCH = import.meta.dirname;

/** bench/README.md as bench/results.json and the template render it. */
export function renderedBenchReadme(bench = BENCH): string {
  const results: unknown = JSON.parse(readFileSync(join(bench, "results.json"), "utf8"));
  return renderBenchReadme(results, readFileSync(join(bench, "README.template.md"), "utf8"));
}

/** Writes bench/README.md; returns its path. */
export function writeBenchReadme(bench = BENCH): string {
  const path = join(bench, "README.md");
  writeFileSync(path, renderedBenchReadme(bench));
  return path;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    if (process.argv.includes("--check")) {
      const fresh = renderedBenchReadme() === readFileSync(join(BENCH, "README.md"), "utf8");
      console.log(fresh ? "bench/README.md is up to date" : "bench/README.md differs from what bench/results.json renders: run npm run bench:readme");
      process.exitCode = fresh ? 0 : 1;
    } else {
      console.log(`wrote ${relative(process.cwd(), writeBenchReadme())}`);
    }
  } catch (err) {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  }
}
