// CasePool's thread flags filter (worker/pool/case-pool.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { threadExecArgv } from "../../../worker/pool/case-pool.ts";

describe("threadExecArgv", () => {
  test("drops per-process flags that make new Worker throw, and the parent's preloads", () => {
    assert.deepEqual(
      threadExecArgv(["--expose-gc", "--max-old-space-size=4096", "--import", "tsx", "--require", "./trace.cjs", "--inspect", "--enable-source-maps"]),
      ["--enable-source-maps"],
    );
  });

  test("keeps the flags that shape module resolution and warnings", () => {
    assert.deepEqual(threadExecArgv(["--conditions", "development", "-C=custom", "--no-warnings", "--experimental-vm-modules"]), [
      "--conditions",
      "development",
      "-C=custom",
      "--no-warnings",
      "--experimental-vm-modules",
    ]);
  });

  test("keeps a profiler option's value whether it comes as one word or two", () => {
    assert.deepEqual(threadExecArgv(["--cpu-prof", "--cpu-prof-interval", "200", "--cpu-prof-dir=/tmp/p", "--cpu-prof-name", "t.cpuprofile"]), [
      "--cpu-prof",
      "--cpu-prof-interval",
      "200",
      "--cpu-prof-dir=/tmp/p",
      "--cpu-prof-name",
      "t.cpuprofile",
    ]);
  });
});
