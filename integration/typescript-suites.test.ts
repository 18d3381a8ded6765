// How the command loads a TypeScript suite, checked from inside the worker threads that run it:
// bundled once (shared/suite/suite-bundle.ts), its threads never load tsx, and each project file keeps
// its own import.meta; a suite a bundle cannot reproduce (a computed import) loads through tsx,
// as does any suite with EVALFLEET_SUITE_LOADER=tsx. Whichever way, the suite's `import "evalfleet"`
// in a thread is the thread's own runtime (the facade, dist/index.js), not a second copy.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";

interface Report {
  summary: { passed: number; failed: number };
  cases: Array<{ name: string; passed: boolean; output: string | null }>;
}

async function run(suite: string, env: Record<string, string> = {}): Promise<{ code: number | null; report: Report; output: string }> {
  const report = join(mkdtempSync(join(tmpdir(), "evalfleet-ts-loading-")), "report.json");
  const r = await exitOf(evalfleet(["run", fixture(suite), "--threads", "2", "--json-output", report], env), "evalfleet run", 120_000);
  return { code: r.code, report: readJson<Report>(report), output: outputOf(r) };
}

describe("TypeScript suites", { timeout: 300_000 }, () => {
  test("a bundled suite: its worker threads never load tsx, and a helper file reads next to itself", async () => {
    const r = await run("ts-loading/bundled-suite.ts");
    assert.equal(r.code, 0, r.output);
    assert.equal(r.report.summary.passed, 4, JSON.stringify(r.report.cases));
  });

  test("EVALFLEET_SUITE_LOADER=tsx loads it through tsx in every thread (the same cases, now expecting tsx)", async () => {
    const r = await run("ts-loading/bundled-suite.ts", { EVALFLEET_SUITE_LOADER: "tsx" });
    assert.equal(r.code, 0, r.output);
    assert.equal(r.report.summary.passed, 4, JSON.stringify(r.report.cases));
  });

  test("a suite that imports a computed path loads through tsx, and runs the same", async () => {
    const r = await run("ts-loading/tsx-suite.ts");
    assert.equal(r.code, 0, r.output);
    assert.equal(r.report.summary.passed, 4, JSON.stringify(r.report.cases));
  });

  test("a .mjs suite: its threads run evalfleet's one runtime file, and the suite's evalfleet is that instance", async () => {
    const r = await run("ts-loading/plain-suite.mjs");
    assert.equal(r.code, 0, r.output);
    assert.equal(r.report.summary.passed, 3, JSON.stringify(r.report.cases));
  });

  test("the check can fail: a bundled suite told to expect tsx fails its loader case, and only that one", async () => {
    const r = await run("ts-loading/bundled-suite.ts", { EVALFLEET_TEST_EXPECT_TSX: "1" });
    assert.equal(r.code, 1, r.output);
    const failed = r.report.cases.filter((c) => !c.passed);
    assert.deepEqual(failed.map((c) => [c.name, c.output]), [["thread_loader", "tsx:false"]]);
  });
});
