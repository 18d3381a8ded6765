// shared/providers/budget.ts: what a run spent against --budget-usd / --budget-tokens.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { BudgetMeter, hasBudget } from "../../../shared/providers/budget.ts";
import type { CaseUsage } from "../../../shared/wire/result-data.ts";

const spent = (tokens: number, costUsd: number | null): CaseUsage => ({ inputTokens: tokens, outputTokens: 0, totalTokens: tokens, costUsd });

describe("BudgetMeter", () => {
  test("tokens: spent once the total reaches the budget", () => {
    const m = new BudgetMeter({ usd: null, tokens: 300 });
    assert.equal(m.add(spent(100, 0.01)), false);
    assert.equal(m.add(spent(150, 0.01)), false);
    assert.equal(m.add(spent(50, 0.01)), true);
    assert.deepEqual(m.spent, { usd: 0.03, tokens: 300 });
  });

  test("dollars: a case of unknown cost counts as 0", () => {
    const m = new BudgetMeter({ usd: 0.02, tokens: null });
    assert.equal(m.add(spent(1000, null)), false);
    assert.equal(m.add(spent(10, 0.015)), false);
    assert.equal(m.add(spent(10, 0.005)), true);
  });

  test("no budget, no meter", () => {
    assert.equal(hasBudget(null), false);
    assert.equal(hasBudget({ usd: null, tokens: null }), false);
    assert.equal(hasBudget({ usd: 1, tokens: null }), true);
  });
});
