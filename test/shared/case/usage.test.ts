// Token usage and cost from an agent's metrics (shared/case/usage.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { usageFromMetrics } from "../../../shared/case/usage.ts";

describe("usageFromMetrics", () => {
  test("usage from an agent's metrics: totals computed, junk ignored, nothing reported -> null", () => {
    assert.deepEqual(usageFromMetrics({ inputTokens: 10, outputTokens: 5, costUsd: 0.02 }), { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.02 });
    assert.deepEqual(usageFromMetrics({ totalTokens: 7 }), { inputTokens: null, outputTokens: null, totalTokens: 7, costUsd: null });
    assert.equal(usageFromMetrics({ inputTokens: "10" as never, requests: 3 }), null);
    assert.equal(usageFromMetrics({ inputTokens: -1 }), null);
    assert.equal(usageFromMetrics(null), null);
  });
});
