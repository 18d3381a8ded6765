// Intervals as the reports print them (shared/stats/interval.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { contains, formatPercentInterval } from "../../../shared/stats/interval.ts";

test("a rate and its interval print as the issue shows them; what is not a number prints as ?", () => {
  assert.equal(formatPercentInterval(0.95, [0.91, 0.973]), "95.0% [91.0%, 97.3%]");
  assert.equal(formatPercentInterval(1, [0.8389, 1], 2), "100.00% [83.89%, 100.00%]");
  assert.equal(formatPercentInterval(Number.NaN, [Number.NEGATIVE_INFINITY, 1]), "? [?, 100.0%]");
  assert.ok(contains([0.2, 0.4], 0.2) && contains([0.2, 0.4], 0.4) && !contains([0.2, 0.4], 0.41));
});
