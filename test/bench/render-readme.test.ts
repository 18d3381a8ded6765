import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderedBenchReadme, writeBenchReadme } from "../../bench/render-readme.ts";
import { ROOT, fixture } from "../support/paths.ts";

test("the committed bench/README.md is what bench/results.json renders (regenerate it with npm run bench:readme)", () => {
  assert.equal(readFileSync(join(ROOT, "bench", "README.md"), "utf8"), renderedBenchReadme());
});

test("writes README.md beside results.json and the template", () => {
  const bench = mkdtempSync(join(tmpdir(), "evalfleet-bench-readme-"));
  try {
    writeFileSync(join(bench, "results.json"), readFileSync(fixture("bench/results.json")));
    writeFileSync(join(bench, "README.template.md"), "# B\n\n{{figures}}\n");
    const path = writeBenchReadme(bench);
    assert.equal(path, join(bench, "README.md"));
    const md = readFileSync(path, "utf8");
    assert.match(md, /^# B\n\n### Throughput \(trivial cases\)/);
    assert.equal(md, renderedBenchReadme(bench));
  } finally {
    rmSync(bench, { recursive: true, force: true });
  }
});
