// The built public API (dist/index.js, a facade scripts/build.mjs writes over whichever runtime the
// thread or process runs; shared/runtime/public-api.ts): every export of index.ts, of the same kind, in a
// program of the user's (the facade loads dist/thread-runtime.cjs), in the CLI's process (the CLI's
// runtime, evaluated on first use) and with the two runtimes side by side; and one instance: the
// facade hands out the runtime's own Case, so a case built through it is the runner's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import * as sources from "../../index.ts";
import { ROOT } from "../support/paths.ts";

/** `{ name: typeof value }` of every export of index.ts. */
const EXPECTED = Object.fromEntries(Object.keys(sources).sort().map((name) => [name, typeof (sources as Record<string, unknown>)[name]]));

/** Runs an ES module script in a fresh Node process; returns what it printed as JSON. */
function inNode(script: string): unknown {
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const kinds = `Object.fromEntries(Object.keys(api).sort().map((n) => [n, typeof api[n]]))`;

test("a program that imports evalfleet gets every export of the public API, of the same kind", () => {
  const got = inNode(`
    const api = await import(${JSON.stringify(join(ROOT, "dist", "index.js"))});
    const runtime = globalThis[Symbol.for("evalfleet.api")];
    const c = new api.Case({ name: "c", input: "q", agent: { run: async () => ({ content: "" }) }, criteria: "c" });
    console.log(JSON.stringify({ kinds: ${kinds}, same: runtime.Case === api.Case && c instanceof runtime.Case }));`) as { kinds: Record<string, string>; same: boolean };
  assert.deepEqual(got.kinds, EXPECTED);
  assert.equal(got.same, true, "the facade hands out the runtime's own Case");
});

test("in the CLI's process the facade hands out the CLI's runtime, evaluated when first read", () => {
  const got = inNode(`
    import { createRequire } from "node:module";
    const runtime = createRequire(import.meta.url)(${JSON.stringify(join(ROOT, "dist", "cli-runtime.cjs"))});
    let evaluated = 0;
    Object.defineProperty(globalThis, Symbol.for("evalfleet.api"), { configurable: true, get: () => (evaluated++, runtime.publicApi()) });
    const api = await import(${JSON.stringify(join(ROOT, "dist", "index.js"))});
    console.log(JSON.stringify({ kinds: ${kinds}, evaluated, same: api.Case === runtime.publicApi().Case }));`) as { kinds: Record<string, string>; evaluated: number; same: boolean };
  assert.deepEqual(got.kinds, EXPECTED);
  assert.equal(got.evaluated, 1);
  assert.equal(got.same, true);
});

test("both runtimes hold the whole public API (the threads' and the CLI's)", () => {
  const got = inNode(`
    import { createRequire } from "node:module";
    const require = createRequire(import.meta.url);
    const thread = require(${JSON.stringify(join(ROOT, "dist", "thread-runtime.cjs"))});
    const cli = require(${JSON.stringify(join(ROOT, "dist", "cli-runtime.cjs"))}).publicApi();
    const names = ${JSON.stringify(Object.keys(EXPECTED))};
    const pick = (api) => Object.fromEntries(names.map((n) => [n, typeof api[n]]));
    console.log(JSON.stringify({ thread: pick(thread), cli: pick(cli) }));`) as { thread: Record<string, string>; cli: Record<string, string> };
  assert.deepEqual(got.thread, EXPECTED);
  assert.deepEqual(got.cli, EXPECTED);
});
