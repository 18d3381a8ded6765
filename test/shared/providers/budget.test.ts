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

test("trialsThatFit: the trials of a batch that fit in what is left, at the mean cost of the case's trials", () => {
  const u = (tokens: number, costUsd: number | null = null) => ({ inputTokens: tokens, outputTokens: 0, totalTokens: tokens, costUsd, model: "m" });
  const tokens = new BudgetMeter({ usd: null, tokens: 1000 });
  tokens.add(u(500));
  // 500 spent; the case's 2 trials (not counted yet) used 200: 300 left at 100 a trial.
  assert.equal(tokens.trialsThatFit([u(100), u(100)], 10, false), 3);
  assert.equal(tokens.trialsThatFit([u(100), u(100)], 2, false), 2, "never more than wanted");
  // Counted already (a distributed run counts each trial as it arrives): 500 left.
  assert.equal(tokens.trialsThatFit([u(100), u(100)], 10, true), 5);
  assert.equal(tokens.trialsThatFit([u(300), u(300)], 10, false), 0, "spent counting them");
  assert.equal(tokens.trialsThatFit([u(0)], 7, false), 7, "trials that used nothing are not bounded");
  const usd = new BudgetMeter({ usd: 1, tokens: null });
  assert.equal(usd.trialsThatFit([u(10, 0.25)], 10, false), 3);
  assert.equal(usd.trialsThatFit([u(10, null)], 10, false), 10, "an unknown cost counts 0 against the dollars, as everywhere");
});
