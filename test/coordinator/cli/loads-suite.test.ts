// Which command lines load a suite file (the CLI starts the block watchdog early for them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { loadsSuite } from "../../../coordinator/cli/loads-suite.ts";

test("the commands that load a suite, and only them", () => {
  for (const argv of [["run", "s.ts"], ["list", "s.ts", "--tag", "x"], ["regrade", "r1"], ["worker", "s.ts", "--nats", "u"], ["queue-metrics", "s.ts"], ["coordinator", "run", "s.ts"], ["coordinator", "resume", "r1"]]) {
    assert.equal(loadsSuite(argv), true, argv.join(" "));
  }
  for (const argv of [[], ["--help"], ["--version"], ["run", "--help"], ["coordinator", "run", "-h"], ["coordinator", "status", "r1"], ["coordinator", "cancel", "r1"], ["runs"], ["report", "r1"], ["cache", "clear"], ["s.ts"]]) {
    assert.equal(loadsSuite(argv), false, argv.join(" ") || "(nothing)");
  }
});
