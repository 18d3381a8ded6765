// A .ts suite in a package without "type": "module" (what `npm init -y` makes) is compiled to
// CommonJS by tsx: loadSuite reads its exports through the CommonJS wrapper. (The same suite in a
// project that installed the packed package: integration/package-install.test.ts.)
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case } from "../../../shared/case/case.ts";
import { loadSuite } from "../../../shared/suite/suite.ts";

/** The suites below build their cases with this process's Case (they cannot resolve "evalfleet" from a temporary folder). */
(globalThis as Record<string, unknown>).__evalfleetTestCase = Case;

function commonJsProject(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-cjs-suite-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "cjs-project", version: "1.0.0", type: "commonjs" }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const CASES = `const C = (globalThis as any).__evalfleetTestCase;
const echo = { id: "echo", run: async (input: unknown) => ({ content: String(input) }) };
const cases = [new C({ name: "one", agent: echo, input: "1", expectedOutput: "1" }), new C({ name: "two", agent: echo, input: "2", expectedOutput: "2" })];
`;

describe("loadSuite: a .ts suite compiled to CommonJS", () => {
  test("its default export is the suite, not the CommonJS wrapper", async () => {
    const dir = commonJsProject({ "suite.ts": `${CASES}export default cases;\n` });
    const suite = await loadSuite(join(dir, "suite.ts"));
    assert.deepEqual(suite.cases.map((c) => c.name), ["one", "two"]);
    assert.equal(suite.name, "suite");
  });

  test("its named `cases` export is found", async () => {
    const dir = commonJsProject({ "named.ts": `${CASES}export { cases };\n` });
    const suite = await loadSuite(join(dir, "named.ts"));
    assert.deepEqual(suite.cases.map((c) => c.name), ["one", "two"]);
  });

  test("a top-level await says what to do, with file and line", async () => {
    const dir = commonJsProject({ "tla.ts": `${CASES}await Promise.resolve();\nexport default cases;\n` });
    await assert.rejects(loadSuite(join(dir, "tla.ts")), (err: Error) => {
      assert.match(err.message, /tla\.ts:4:\d+: ERROR: Top-level await .*: this \.ts file is compiled as CommonJS; add "type": "module" to its package\.json or rename it to \.mts/);
      return true;
    });
  });
});
