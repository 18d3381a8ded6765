// shared/providers/prices.ts: the dated price table, a case's cost (null when unknown, never 0), the totals.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { BUILTIN_PRICES, PRICES_AS_OF, caseCost, caseTokens, checkPrices, costOf, priceOf, priceUsage, usageTotals } from "../../../shared/providers/prices.ts";
import type { CaseUsage } from "../../../shared/wire/result-data.ts";

const usage = (u: Partial<CaseUsage>): CaseUsage => ({ inputTokens: null, outputTokens: null, totalTokens: null, costUsd: null, ...u });

describe("prices", () => {
  test("the table is dated and looked up by name, without a provider prefix or a date suffix", () => {
    assert.match(PRICES_AS_OF, /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual(priceOf("gpt-5-mini", BUILTIN_PRICES), { inputPerMTok: 0.25, outputPerMTok: 2 });
    assert.deepEqual(priceOf("openai/gpt-5-mini", BUILTIN_PRICES), priceOf("gpt-5-mini", BUILTIN_PRICES));
    assert.deepEqual(priceOf("openai.chat:gpt-4o-mini-2024-07-18", BUILTIN_PRICES), BUILTIN_PRICES["gpt-4o-mini"]);
    assert.equal(priceOf("my-local-llama", BUILTIN_PRICES), null);
    assert.equal(priceOf(null, BUILTIN_PRICES), null);
  });

  test("cost: tokens at the price, to a millionth of a dollar; null without a price or a count", () => {
    assert.equal(costOf({ inputPerMTok: 0.25, outputPerMTok: 2 }, 100, 50), 0.000125);
    assert.equal(costOf(null, 100, 50), null);
    assert.equal(costOf({ inputPerMTok: 1, outputPerMTok: 1 }, null, 50), null);
  });

  test("a case's usage priced: the agent's own cost wins; the judge priced by its model; unknown stays null", () => {
    const priced = priceUsage(usage({ inputTokens: 100, outputTokens: 50, totalTokens: 150, model: "gpt-5-mini", judge: usage({ inputTokens: 11, outputTokens: 7, totalTokens: 18, model: "gpt-5-mini" }) }), BUILTIN_PRICES)!;
    assert.equal(priced.costUsd, 0.000125);
    assert.equal(priced.judge!.costUsd, 0.00001675);
    assert.equal(caseCost(priced), 0.00014175);
    assert.deepEqual(caseTokens(priced), { agent: 150, judge: 18, total: 168 });
    assert.equal(priceUsage(usage({ inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd: 0.5, model: "gpt-5" }), BUILTIN_PRICES)!.costUsd, 0.5);
    const unknown = priceUsage(usage({ inputTokens: 10, outputTokens: 10, totalTokens: 20, model: "my-local-llama" }), BUILTIN_PRICES);
    assert.equal(unknown!.costUsd, null);
    assert.equal(caseCost(unknown), null, "unknown, never 0");
    assert.equal(caseCost(null), 0, "a case that used no model costs nothing");
    // A suite's table overrides the built-in one.
    assert.equal(priceUsage(usage({ inputTokens: 1_000_000, outputTokens: 0, totalTokens: 1_000_000, model: "my-local-llama" }), { ...BUILTIN_PRICES, "my-local-llama": { inputPerMTok: 0.1, outputPerMTok: 0.1 } })!.costUsd, 0.1);
  });

  test("totals: tokens by side, the known cost, the cases of unknown cost", () => {
    const known = priceUsage(usage({ inputTokens: 100, outputTokens: 50, totalTokens: 150, model: "gpt-5-mini" }), BUILTIN_PRICES);
    const unknown = priceUsage(usage({ inputTokens: 10, outputTokens: 10, totalTokens: 20, model: "mystery" }), BUILTIN_PRICES);
    assert.deepEqual(usageTotals([known, unknown, null]), { tokens: { agent: 170, judge: 0, total: 170 }, costUsd: 0.000125, unknownCostCases: 1 });
  });

  test("a suite's prices: a table or a JSON/YAML file; a bad one names the model and field", () => {
    const table = { m: { inputPerMTok: 1, outputPerMTok: 2 } };
    assert.deepEqual(checkPrices(table, () => "", () => null), { prices: table, problem: null });
    assert.deepEqual(checkPrices("p.json", () => JSON.stringify(table), () => null).prices, table);
    assert.deepEqual(checkPrices("p.yaml", () => "ignored", () => table).prices, table);
    assert.match(checkPrices({ m: { inputPerMTok: -1, outputPerMTok: 2 } }, () => "", () => null).problem!, /^prices: m\.inputPerMTok: /);
    assert.match(checkPrices("missing.json", () => { throw new Error("ENOENT"); }, () => null).problem!, /^prices \(missing\.json\): cannot read the price table: ENOENT/);
  });
});
