// The runtimes' code cache (shared/runtime/cached-commonjs.ts), each load in a fresh process: within
// one process V8 may hand back the script it compiled already, and never read the cache at all.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "acorn";
import { ROOT } from "../../support/paths.ts";

const LOADER = join(ROOT, "shared", "runtime", "cached-commonjs.ts");

/** Loads `file` through the cache in a new process; the module's `run()` result and the cache's use. */
function loadInChild(file: string, cacheDir: string | null, save: "now" | "later" = "now"): { result: unknown; cache: string; saved: string } {
  const script = `
    import { runCachedCommonJs } from ${JSON.stringify(LOADER)};
    globalThis[Symbol.for("evalfleet.import")] = (specifier) => import(specifier);
    const { exports, cache, save } = runCachedCommonJs(${JSON.stringify(file)}, ${JSON.stringify(cacheDir)}, { save: ${JSON.stringify(save)} });
    const result = await exports.run();
    console.log(JSON.stringify({ result, cache, saved: save() }));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop()!) as { result: unknown; cache: string; saved: string };
  if (save === "now") {
    assert.equal(out.saved, out.cache, "save() after a load that wrote at once says what it did");
    return { result: out.result, cache: out.cache } as { result: unknown; cache: string; saved: string };
  }
  return out;
}

describe("the runtimes' code cache", () => {
  test("the first load writes the cache, the next uses it; a dynamic import through the caller's function works both times", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-code-cache-"));
    const file = join(dir, "module.cjs");
    // What dist/thread-runtime.cjs does: strict, its import() routed to the caller (scripts/build.mjs).
    writeFileSync(file, `"use strict"; const load = globalThis[Symbol.for("evalfleet.import")];
      exports.run = async () => ({ sep: (await load("node:path")).sep, strict: (function () { return this === undefined; })(), file: __filename === ${JSON.stringify(file)} });`);
    const cacheDir = join(dir, "cache");
    const first = loadInChild(file, cacheDir);
    assert.deepEqual(first, { result: { sep: "/", strict: true, file: true }, cache: "wrote" });
    assert.equal(readdirSync(cacheDir).filter((f) => f.endsWith(".bin")).length, 1);
    const second = loadInChild(file, cacheDir);
    assert.deepEqual(second, { result: { sep: "/", strict: true, file: true }, cache: "used" });
  });

  test("a cache V8 rejects (corrupt) is rewritten, and the module still runs", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-code-cache-"));
    const file = join(dir, "module.cjs");
    writeFileSync(file, `"use strict"; exports.run = async () => 42;`);
    const cacheDir = join(dir, "cache");
    assert.equal(loadInChild(file, cacheDir).cache, "wrote");
    const bin = join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith(".bin"))!);
    writeFileSync(bin, Buffer.from("not a code cache"));
    assert.deepEqual(loadInChild(file, cacheDir), { result: 42, cache: "rewrote" });
    assert.notEqual(readFileSync(bin, "utf8"), "not a code cache");
    assert.deepEqual(loadInChild(file, cacheDir), { result: 42, cache: "used" });
  });

  test("a rebuilt file gets a new cache, and the old one is removed; another file's cache stays", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-code-cache-"));
    const cacheDir = join(dir, "cache");
    const file = join(dir, "module.cjs");
    const other = join(dir, "other.cjs");
    writeFileSync(file, `"use strict"; exports.run = async () => 1;`);
    writeFileSync(other, `"use strict"; exports.run = async () => "other";`);
    loadInChild(file, cacheDir);
    loadInChild(other, cacheDir);
    const before = readdirSync(cacheDir).sort();
    assert.equal(before.length, 2);
    writeFileSync(file, `"use strict"; exports.run = async () => 22;`);
    assert.deepEqual(loadInChild(file, cacheDir), { result: 22, cache: "wrote" });
    const after = readdirSync(cacheDir).sort();
    assert.equal(after.length, 2, after.join(", "));
    assert.equal(after.filter((f) => before.includes(f)).length, 1, "the other file's cache stays, this file's old one went");
  });

  test("a cache folder that cannot be written, or none, costs only the compiling", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-code-cache-"));
    const file = join(dir, "module.cjs");
    writeFileSync(file, `"use strict"; exports.run = async () => "ran";`);
    const blocker = join(dir, "a-file");
    writeFileSync(blocker, "");
    assert.deepEqual(loadInChild(file, join(blocker, "cache")), { result: "ran", cache: "unwritable" });
    // No private folder at all (shared/runtime/user-temp-dir.ts refused it): no cache read or written.
    assert.deepEqual(loadInChild(file, null), { result: "ran", cache: "unwritable" });
  });

  test("the built runtimes call no import() of their own (a cached script loses Node 20's import callback), only the caller's", () => {
    for (const runtime of ["thread-runtime.cjs", "cli-runtime.cjs"]) checkRuntime(readFileSync(join(ROOT, "dist", runtime), "utf8"));
  });

  function checkRuntime(text: string): void {
    const bannerEnd = text.indexOf("\n");
    const imports: number[] = [];
    const visit = (node: unknown): void => {
      if (!node || typeof node !== "object") return;
      const n = node as { type?: unknown; start?: number };
      if (n.type === "ImportExpression") imports.push(n.start!);
      for (const value of Object.values(node)) {
        if (Array.isArray(value)) value.forEach(visit);
        else if (value && typeof value === "object" && typeof (value as { type?: unknown }).type === "string") visit(value);
      }
    };
    visit(parse(text, { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true }));
    assert.ok(imports.length >= 1 && imports.every((at) => at < bannerEnd), `import() outside the banner at ${imports.filter((at) => at > bannerEnd).join(", ")}`);
    assert.ok((text.match(/__evalfleetImport\(/g) ?? []).length >= 5, "the runtime's dynamic imports go through the caller's function");
    assert.ok(text.startsWith('"use strict";'), "strict, as the ES modules it was built from");
  }

  test("the built thread entry is a CommonJS script (piscina require()s it; Node 20 aborts the process when a thread is terminated while require() wraps an ES module)", () => {
    const file = join(ROOT, "dist", "worker", "pool", "thread.cjs");
    const text = readFileSync(file, "utf8");
    // Throws on import/export declarations (and import.meta), which only an ES module may hold.
    parse(text, { ecmaVersion: "latest", sourceType: "script", allowReturnOutsideFunction: true });
    assert.ok(text.startsWith('"use strict";'));
    assert.match(text, /module\.exports = __toCommonJS\(/, "its default export (the batch runner) is module.exports.default");
  });

  test("save: later writes the cache when asked, with the functions that ran since: the next load uses it", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-code-cache-"));
    // run() calls 40 functions that nothing calls while the module loads: compiled only then.
    const bodies = Array.from({ length: 40 }, (_, i) => `function f${i}(x) { let s = 0; for (let j = 0; j < x; j++) s += (j * ${i + 1}) % 7; return s + ${JSON.stringify("f" + i)}.length; }`).join("\n");
    const source = `"use strict";\n${bodies}\nexports.run = async () => [${Array.from({ length: 40 }, (_, i) => `f${i}(3)`).join(", ")}].reduce((a, b) => a + b, 0);`;
    const now = join(dir, "now.cjs");
    const later = join(dir, "later.cjs");
    writeFileSync(now, source);
    writeFileSync(later, source);
    const nowDir = join(dir, "cache-now");
    const laterDir = join(dir, "cache-later");
    const a = loadInChild(now, nowDir, "now");
    assert.equal(a.cache, "wrote");
    const b = loadInChild(later, laterDir, "later");
    assert.deepEqual(b, { result: a.result, cache: "pending", saved: "wrote" });
    const size = (d: string) => readdirSync(d).map((f) => readFileSync(join(d, f)).length);
    const [nowSize] = size(nowDir);
    const [laterSize] = size(laterDir);
    assert.ok(laterSize! > nowSize! * 1.3, `the later cache holds the functions run() compiled: ${laterSize} bytes against ${nowSize}`);
    const cacheDir = laterDir;
    assert.deepEqual(loadInChild(later, cacheDir, "later"), { result: a.result, cache: "used", saved: "used" });
  });
});
