// The queue metrics (coordinator/distributed/queue-metrics.ts): which consumers are runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runOfConsumer } from "../../../coordinator/distributed/queue-metrics.ts";

test("queue-metrics counts run consumers only", () => {
  assert.equal(runOfConsumer("run-nightly-29406360"), "nightly-29406360");
  assert.equal(runOfConsumer("run-"), null);
  assert.equal(runOfConsumer("pool"), null);
  assert.equal(runOfConsumer("KV_watcher"), null);
});
