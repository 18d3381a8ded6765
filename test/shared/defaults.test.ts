// Every default written once, and the two resolution chains built on them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { DEFAULT_TIMEOUT_SECONDS, defaultThreads, resolveDefaultTimeout } from "../../shared/defaults.ts";
import { DEFAULT_TIMEOUT_SECONDS as PUBLIC_DEFAULT_TIMEOUT_SECONDS } from "../../index.ts";

test("the per-case timeout: the runner's, else the suite's, else 120 seconds", () => {
  assert.equal(DEFAULT_TIMEOUT_SECONDS, 120);
  assert.equal(PUBLIC_DEFAULT_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS);
  assert.equal(resolveDefaultTimeout(30, 60), 30);
  assert.equal(resolveDefaultTimeout(null, 60), 60);
  assert.equal(resolveDefaultTimeout(undefined), 120);
  // 0 is a timeout (an immediate one), not "unset".
  assert.equal(resolveDefaultTimeout(0, 60), 0);
});

test("threads: min(CPUs, concurrency), at least one", () => {
  assert.equal(defaultThreads(1), 1);
  assert.equal(defaultThreads(0), 1);
  assert.equal(defaultThreads(10_000), availableParallelism());
});
