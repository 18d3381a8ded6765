import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleSuite, bundlesSuites } from "../../../shared/suite/suite-bundle.ts";

const repoModules = fileURLToPath(new URL("../../../node_modules", import.meta.url));

/** A project folder with `files` (path -> text) written under it, and this checkout's packages installed. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-bundle-"));
  symlinkSync(repoModules, join(dir, "node_modules"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const cacheDir = mkdtempSync(join(tmpdir(), "evalfleet-bundle-cache-"));

describe("bundleSuite", () => {
  test("project files are bundled, each keeping its own import.meta; packages and built-ins stay with Node", async () => {
    const dir = project({
      "package.json": JSON.stringify({ type: "module" }),
      "evals/suite.ts": [
        'import { readFileSync } from "node:fs";',
        'import { z } from "zod";',
        'import { helperUrl, data } from "./lib/helper.ts";',
        "const n: number = 3;",
        "export const here = import.meta.url;",
        "export const dir = import.meta.dirname;",
        "export const fromHelper = helperUrl;",
        "export const answer = data.trim();",
        "export const parsed = z.object({ n: z.number() }).parse({ n });",
        "export const ownSource = readFileSync(new URL(import.meta.url), 'utf8').length > 0;",
      ].join("\n"),
      "evals/lib/helper.ts": [
        'import { readFileSync } from "node:fs";',
        "export const helperUrl: string = import.meta.url;",
        "export const data = readFileSync(new URL('./data.txt', import.meta.url), 'utf8');",
      ].join("\n"),
      "evals/lib/data.txt": "forty-two\n",
    });
    const suite = join(dir, "evals", "suite.ts");
    const bundled = await bundleSuite(suite, { cacheDir, conditions: [] });
    assert.equal(bundled.kind, "bundle", JSON.stringify(bundled));
    if (bundled.kind !== "bundle") return;
    assert.ok(fileURLToPath(bundled.url).startsWith(cacheDir), bundled.url);
    const text = readFileSync(fileURLToPath(bundled.url), "utf8");
    // zod is imported from the file Node's resolution finds, not copied into the bundle.
    assert.match(text, /from "file:\/\/\/[^"]*\/node_modules\/zod\/[^"]*"/);
    assert.match(text, /from "node:fs"/);
    const mod = (await import(bundled.url)) as Record<string, unknown>;
    assert.equal(mod.here, pathToFileURL(suite).href);
    assert.equal(mod.dir, join(dir, "evals"));
    assert.equal(mod.fromHelper, pathToFileURL(join(dir, "evals", "lib", "helper.ts")).href);
    assert.equal(mod.answer, "forty-two");
    assert.deepEqual(mod.parsed, { n: 3 });
    assert.equal(mod.ownSource, true);
  });

  test("the same sources give the same file (named by content); a change gives another", async () => {
    const dir = project({ "package.json": "{}", "s.mts": "export const v = 1;\n" });
    const a = await bundleSuite(join(dir, "s.mts"), { cacheDir, conditions: [] });
    const b = await bundleSuite(join(dir, "s.mts"), { cacheDir, conditions: [] });
    writeFileSync(join(dir, "s.mts"), "export const v = 2;\n");
    const c = await bundleSuite(join(dir, "s.mts"), { cacheDir, conditions: [] });
    assert.equal(a.kind, "bundle");
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  test("a CommonJS project file keeps __dirname and __filename, and its require", async () => {
    const dir = project({
      "package.json": JSON.stringify({ name: "cjs-project" }),
      "suite.ts": 'import { where } from "./where.cts";\nexport const dirOf = where.dir;\nexport const fileOf = where.file;\nexport const os = where.os;\n',
      "where.cts": 'const os = require("node:os");\nexport const where = { dir: __dirname, file: __filename, os: typeof os.cpus };\n',
    });
    const bundled = await bundleSuite(join(dir, "suite.ts"), { cacheDir, conditions: [] });
    assert.equal(bundled.kind, "bundle", JSON.stringify(bundled));
    if (bundled.kind !== "bundle") return;
    const mod = (await import(bundled.url)) as Record<string, unknown>;
    assert.equal(mod.dirOf, dir);
    assert.equal(mod.fileOf, join(dir, "where.cts"));
    assert.equal(mod.os, "function");
  });

  test("what a bundle cannot reproduce falls back to tsx, saying why", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ["computed import", "const name = 'x';\nexport const load = () => import(`./${name}.ts`);\n", /imports a computed path/],
      ["computed import of a variable", "export const load = (p: string) => import(p);\n", /imports a computed path/],
      ["computed require", "export const load = (p: string) => require(p);\n", /requires a computed path/],
      ["import.meta.resolve", "export const at = import.meta.resolve('./x.js');\n", /uses import.meta.resolve/],
      ["a syntax error", "export const broken = {\n  a: 1\n  b: 2 };\n", /suite\.ts:3: Expected/],
      ["an unknown package", 'import { x } from "no-such-package-anywhere";\nexport const y = x;\n', /cannot resolve "no-such-package-anywhere"/],
    ];
    for (const [what, source, reason] of cases) {
      const dir = project({ "package.json": JSON.stringify({ type: "module" }), "suite.ts": source });
      const r = await bundleSuite(join(dir, "suite.ts"), { cacheDir, conditions: [] });
      assert.equal(r.kind, "fallback", what);
      if (r.kind === "fallback") assert.match(r.reason, reason, what);
    }
  });

  test("a dynamic import of a plain string is bundled", async () => {
    const dir = project({ "package.json": JSON.stringify({ type: "module" }), "suite.ts": "export const load = async () => (await import('./later.ts')).v;\n", "later.ts": "export const v = 'later';\n" });
    const r = await bundleSuite(join(dir, "suite.ts"), { cacheDir, conditions: [] });
    assert.equal(r.kind, "bundle", JSON.stringify(r));
    if (r.kind !== "bundle") return;
    const mod = (await import(r.url)) as { load: () => Promise<string> };
    assert.equal(await mod.load(), "later");
  });

  test("bundlesSuites: off from the sources and with EVALFLEET_SUITE_LOADER=tsx", () => {
    // These tests run evalfleet from its sources: tsx is loaded already.
    assert.equal(bundlesSuites({}), false);
    assert.equal(bundlesSuites({ EVALFLEET_SUITE_LOADER: "tsx" }), false);
  });
});
