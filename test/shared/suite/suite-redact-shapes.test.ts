// A suite's redactShapes (shared/suite/suite.ts): read and checked when the file loads (a bad value
// fails the load, naming the shape), and a command's load (loadSuiteWithin) makes it the process's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { SuiteLoadError, loadSuite } from "../../../index.ts";
import { loadSuiteWithin } from "../../../shared/suite/bounded-load.ts";
import { currentRedactedShapes, useSuiteRedactShapes } from "../../../shared/redaction/secrets.ts";
import { SECRET_SHAPES } from "../../../shared/redaction/shapes.ts";
import { ROOT } from "../../support/paths.ts";

const dir = mkdtempSync(join(tmpdir(), "evalfleet-suite-shapes-"));

/** A suite file with `redactShapes` set to `value` (a JavaScript expression), or unset. */
function suite(name: string, value?: string): string {
  const file = join(dir, `${name}.mjs`);
  const option = value === undefined ? "" : `redactShapes: ${value}, `;
  writeFileSync(
    file,
    `import { Case, defineSuite } from ${JSON.stringify(pathToFileURL(join(ROOT, "index.ts")).href)};\n` +
      `export default defineSuite({ ${option}cases: [new Case({ name: "a", agent: { id: "a", run: async () => ({ content: "x" }) }, input: "x", scorer: { score: () => ({ value: 1, passed: true }) } })] });\n`,
  );
  return file;
}

test("a suite's redactShapes is read when it loads, true when unset; an unknown shape or a bad value fails the load", async () => {
  assert.equal((await loadSuite(suite("unset"))).redactShapes, true);
  assert.equal((await loadSuite(suite("off", "false"))).redactShapes, false);
  assert.deepEqual((await loadSuite(suite("except", '{ except: ["github", "jwt"] }'))).redactShapes, { except: ["github", "jwt"] });
  for (const [name, value, problem] of [
    ["unknown", '{ except: ["jwts"] }', /^redactShapes\.except\[0\]: unknown shape 'jwts' \(the shapes: private-key, bearer, sk-key, /],
    ["string", '"off"', /^redactShapes must be true, false or \{ except: \[shape names\] \}, got 'off'$/],
  ] as const) {
    const err = await loadSuite(suite(name, value)).then(() => assert.fail(`${name} fails the load`), (e: unknown) => e);
    assert.ok(err instanceof SuiteLoadError, String(err));
    assert.match(err.problems.join("\n"), problem);
  }
});

test("a command's load (loadSuiteWithin) makes the suite's choice the process's", async () => {
  try {
    await loadSuiteWithin(suite("command", '{ except: ["jwt"] }'), 60);
    assert.deepEqual(currentRedactedShapes(), SECRET_SHAPES.filter((s) => s !== "jwt"));
  } finally {
    useSuiteRedactShapes(true);
  }
  assert.deepEqual(currentRedactedShapes(), SECRET_SHAPES);
});
