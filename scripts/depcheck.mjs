#!/usr/bin/env node
// The dependency check in `npm test` (`npm run depcheck`): runs the import rules of
// .dependency-cruiser.mjs (dependency-cruiser) over the production tree and prints one line per
// violation, `depcheck: RULE: FROM -> TO`, then a summary line. Exit code 0 when clean, 1 on any
// violation, 2 when the check itself cannot run (so it is never silently a no-op).
// Cycles are looked for twice: among the imports that exist at run time (the rules' own view:
// `import type` erased, as TypeScript erases it), and among every import, type-only ones included
// (a second cruise whose Babel pass turns each type import into a plain one first), so that a cycle
// that only types close still fails as `no-type-cycle`: it ties two modules together as much for
// whoever reads or moves them.
// Usage: node scripts/depcheck.mjs [--base DIR]   (DIR defaults to the repo root; the unit test
// points it at fixture trees, with the same rules)
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cruise, getAvailableTranspilers } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const CONFIG = join(repoRoot, ".dependency-cruiser.mjs");
/** What ships: the public entry, the bin and the three role folders (tests, examples and bench
 *  import the product, never the other way). Roots missing from a base dir are skipped. */
const ROOTS = ["index.ts", "thread-runtime.ts", "cli-runtime.ts", "bin", "shared", "worker", "coordinator"];
const SOURCE = /\.(ts|mts|mjs|js)$/;

/** Source files under `path` (a file or a folder), relative to `base`, with `/` separators. */
function sourceFiles(base, path) {
  const full = join(base, path);
  if (!statSync(full).isDirectory()) return SOURCE.test(path) ? [path] : [];
  return readdirSync(full).flatMap((entry) => (entry === "node_modules" || entry.startsWith(".") ? [] : sourceFiles(base, join(path, entry))));
}

/** `node_modules/@scope/name/dist/x.js` -> `@scope/name`; project paths unchanged. */
function shortName(path) {
  const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return match ? match[1] : path;
}

/** The rule of the second cruise: a cycle, type-only imports included. */
const TYPE_CYCLE_RULE = {
  name: "no-type-cycle",
  severity: "error",
  comment: "A cycle closed by type-only imports (import type, typeof import(...)): move the shared types down, beside what both sides import.",
  from: {},
  to: { circular: true },
};

/**
 * A Babel plugin for the second cruise: before anything is stripped, every import the TypeScript
 * preset would erase (`import type`, `import { type X }`, `export type ... from`) and every type
 * reference to a module (`typeof import("m")`, `import("m").X`) gets a plain `import "m"` beside
 * it, which the preset keeps, so dependency-cruiser sees that edge too. It runs in `pre`, before
 * any plugin's visitor, so it does not depend on the order of the preset's passes.
 */
function keepTypeImports({ types: t }) {
  return {
    name: "evalfleet-keep-type-imports",
    pre(file) {
      const specifiers = new Set();
      const body = file.ast.program.body;
      for (const node of body) {
        if (node.type === "ImportDeclaration" && (node.importKind === "type" || node.specifiers.some((x) => x.importKind === "type"))) specifiers.add(node.source.value);
        if ((node.type === "ExportNamedDeclaration" || node.type === "ExportAllDeclaration") && node.source && (node.exportKind === "type" || (node.specifiers ?? []).some((x) => x.exportKind === "type"))) specifiers.add(node.source.value);
      }
      file.path.traverse({
        TSImportType(path) {
          const arg = path.node.argument;
          const literal = arg?.type === "TSLiteralType" ? arg.literal : arg;
          if (literal?.type === "StringLiteral") specifiers.add(literal.value);
        },
      });
      body.unshift(...[...specifiers].map((spec) => t.importDeclaration([], t.stringLiteral(spec))));
    },
  };
}

/** Each cycle of `violations` as one line, `depcheck: RULE: A -> B -> ... -> A`, named from its smallest module, with its ring (the same cycle whichever module reported it). */
function cycleLines(violations) {
  const out = [];
  for (const v of violations) {
    if (!v.cycle || v.cycle.length === 0) continue;
    // Each module on a cycle reports it: name the cycle once, from its smallest module.
    const path = [v.from, ...v.cycle.map((step) => step.name)].slice(0, -1);
    const start = path.indexOf([...path].sort()[0]);
    const ring = [...path.slice(start), ...path.slice(0, start)];
    const text = [...ring, ring[0]].join(" -> ");
    out.push({ ring: text, line: `depcheck: ${v.rule.name}: ${text}` });
  }
  return out;
}

/**
 * Runs the rules over the current directory and returns one line per violation (a cycle is
 * reported once, by its path), sorted, plus what was analysed. A cycle of the second cruise
 * (type-only imports included) is reported only when the first did not already report it. Paths in the rules are relative to
 * the current directory (dependency-cruiser's baseDir option moves the paths but not the
 * resolution of npm packages, so the CLI changes directory instead).
 * @returns {Promise<{ lines: string[], modules: number, dependencies: number }>}
 */
async function checkDependencies() {
  const base = process.cwd();
  if (!getAvailableTranspilers().some((t) => t.name === "babel" && t.available)) {
    throw new Error("@babel/core is not installed: run npm ci (the dependency check reads TypeScript through Babel)");
  }
  const options = await extractDepcruiseOptions(CONFIG);
  // Babel would look for its preset from the checked tree: take this repo's, whichever tree it is.
  const babelConfig = JSON.parse(readFileSync(options.babelConfig.fileName, "utf8"));
  const require = createRequire(import.meta.url);
  babelConfig.presets = babelConfig.presets.map(([name, presetOptions]) => [require.resolve(name), presetOptions]);
  const roots = ROOTS.filter((root) => existsSync(join(base, root)));
  if (roots.length === 0) throw new Error(`nothing to check in ${base}: none of ${ROOTS.join(", ")} exists`);
  // Files, not folders: dependency-cruiser scans a folder only for the extensions its own
  // TypeScript support covers (none here, see .dependency-cruiser.mjs), so it is given every file.
  const files = roots.flatMap((root) => sourceFiles(base, root)).map((f) => f.split(sep).join("/"));
  /** Cruises `files` and checks that none dropped out of the graph. */
  const cruised = async (cruiseOptions, babel) => {
    const result = await cruise(files, cruiseOptions, {}, { babelConfig: babel });
    const output = /** @type {import("dependency-cruiser").ICruiseResult} */ (result.output);
    // A file the parser could not read would drop out of the graph with its imports, and the rules
    // would pass on a tree they never saw: every source file must be in the result.
    const seen = new Set(output.modules.map((m) => m.source));
    const missed = files.filter((f) => !seen.has(f));
    if (missed.length > 0) throw new Error(`dependency-cruiser did not analyse ${missed.length} file(s): ${missed.join(", ")}`);
    return output;
  };
  const { summary } = await cruised(options, babelConfig);
  const lines = new Set();
  const rings = new Set();
  for (const { ring, line } of cycleLines(summary.violations)) {
    rings.add(ring);
    lines.add(line);
  }
  for (const v of summary.violations) if (!v.cycle || v.cycle.length === 0) lines.add(`depcheck: ${v.rule.name}: ${v.from} -> ${shortName(v.to)}`);

  // The second cruise: every import, type-only ones included; cycles only.
  const typed = await cruised({ ...options, ruleSet: { forbidden: [TYPE_CYCLE_RULE] } }, { ...babelConfig, plugins: [...(babelConfig.plugins ?? []), keepTypeImports] });
  for (const { ring, line } of cycleLines(typed.summary.violations)) if (!rings.has(ring)) lines.add(line);
  return { lines: [...lines].sort(), modules: summary.totalCruised, dependencies: summary.totalDependenciesCruised };
}

{
  const { values } = parseArgs({ options: { base: { type: "string" } } });
  const base = values.base ?? repoRoot;
  const where = relative(process.cwd(), base) || ".";
  try {
    process.chdir(base);
    const { lines, modules, dependencies } = await checkDependencies();
    for (const line of lines) console.log(line);
    console.log(`depcheck: ${lines.length} violation(s) in ${modules} modules, ${dependencies} imports (${where}; rules in .dependency-cruiser.mjs)`);
    process.exitCode = lines.length === 0 ? 0 : 1;
  } catch (error) {
    console.error(`depcheck: cannot run: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  }
}
