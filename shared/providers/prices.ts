// runs in: both
import * as z from "zod";
import type { CaseUsage } from "../wire/result-data.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * What model calls cost: a dated built-in price table for common models, overridable by a suite's
 * `prices`, and the arithmetic that turns a case's tokens into US dollars. A model the table does
 * not know gives `null`, never 0: the summary counts the cases whose cost is unknown. Pure; no I/O.
 */

/** When the built-in prices were last checked against the providers' price pages (they change: override them in the suite). */
export const PRICES_AS_OF = "2025-09-01";

/** US dollars per million tokens. */
export const ModelPriceSchema = lazySchema(() => z.strictObject({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
}));
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** Prices by model name (`gpt-5-mini`); a suite's table is merged over the built-in one. */
export const PriceTableSchema = lazySchema(() => z.record(z.string().min(1), ModelPriceSchema));
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** List prices per million tokens as of {@link PRICES_AS_OF} (standard tier, no caching or batch discounts). */
export const BUILTIN_PRICES: Readonly<PriceTable> = Object.freeze({
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2 },
  "gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  "gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  o3: { inputPerMTok: 2, outputPerMTok: 8 },
  "o4-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4 },
  "claude-opus-4-1": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-sonnet-4": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-3-5-haiku": { inputPerMTok: 0.8, outputPerMTok: 4 },
  "gemini-2.5-pro": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gemini-2.5-flash": { inputPerMTok: 0.3, outputPerMTok: 2.5 },
});

/**
 * The price of `model` in `table`: the exact name, else without a provider prefix
 * (`openai/gpt-5-mini`, `openai:gpt-5-mini`), else without a trailing date
 * (`gpt-4o-mini-2024-07-18`, `claude-sonnet-4-20250514`). Null when unknown.
 */
export function priceOf(model: string | null | undefined, table: Readonly<PriceTable>): ModelPrice | null {
  if (!model) return null;
  const candidates = [model];
  const bare = model.replace(/^.*[/:]/, "");
  candidates.push(bare);
  candidates.push(bare.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, ""));
  for (const c of candidates) {
    const p = table[c];
    if (p) return p;
  }
  return null;
}

/** Dollars for `inputTokens` and `outputTokens` at `price`; null when a count is missing. */
export function costOf(price: ModelPrice | null, inputTokens: number | null, outputTokens: number | null): number | null {
  if (!price || inputTokens === null || outputTokens === null) return null;
  return roundUsd((inputTokens * price.inputPerMTok + outputTokens * price.outputPerMTok) / 1_000_000);
}

/** To a ten-billionth of a dollar: floating sums stay readable, a case's cent fractions stay exact. */
export function roundUsd(n: number): number {
  return Math.round(n * 1e10) / 1e10;
}

/**
 * A case's usage with its costs filled in: the agent's own `costUsd` when it reported one, else
 * its tokens at its model's price; the judge's tokens at the judge model's price. What cannot be
 * priced stays null.
 */
export function priceUsage(usage: CaseUsage | null | undefined, table: Readonly<PriceTable>): CaseUsage | null {
  if (!usage) return null;
  const agentCost = usage.costUsd ?? costOf(priceOf(usage.model, table), usage.inputTokens, usage.outputTokens);
  const judge = usage.judge ? { ...usage.judge, costUsd: usage.judge.costUsd ?? costOf(priceOf(usage.judge.model, table), usage.judge.inputTokens, usage.judge.outputTokens) } : usage.judge;
  return { ...usage, costUsd: agentCost, ...(judge !== undefined ? { judge } : {}) };
}

/** The tokens of one case: the agent's, the judge's, and both. */
export interface CaseTokens {
  agent: number;
  judge: number;
  total: number;
}

/** A case's tokens (0 for a side that reported none). */
export function caseTokens(usage: CaseUsage | null | undefined): CaseTokens {
  const agent = usage?.totalTokens ?? 0;
  const judge = usage?.judge?.totalTokens ?? 0;
  return { agent, judge, total: agent + judge };
}

/**
 * A case's cost in dollars: agent plus judge. Null when a side that used tokens (or ran at all,
 * with a model) cannot be priced: the cost is unknown, not 0. A case that used no model costs 0.
 */
export function caseCost(usage: CaseUsage | null | undefined): number | null {
  if (!usage) return 0;
  const parts: Array<number | null> = [];
  const agentUsed = (usage.totalTokens ?? 0) > 0 || usage.inputTokens !== null || usage.costUsd !== null;
  if (agentUsed) parts.push(usage.costUsd);
  if (usage.judge && ((usage.judge.totalTokens ?? 0) > 0 || usage.judge.costUsd !== null)) parts.push(usage.judge.costUsd);
  if (parts.some((p) => p === null)) return null;
  return roundUsd(parts.reduce<number>((s, p) => s + (p ?? 0), 0));
}

/** A run's totals: tokens by side, the known cost, and how many cases' cost is unknown. */
export interface UsageTotals {
  tokens: CaseTokens;
  /** Dollars, the cases of unknown cost counted as 0. */
  costUsd: number;
  /** Cases whose cost is unknown (a model missing from the price table). */
  unknownCostCases: number;
}

/** The totals over `usages` (one per case). */
export function usageTotals(usages: ReadonlyArray<CaseUsage | null | undefined>): UsageTotals {
  const tokens: CaseTokens = { agent: 0, judge: 0, total: 0 };
  let costUsd = 0;
  let unknownCostCases = 0;
  for (const u of usages) {
    const t = caseTokens(u);
    tokens.agent += t.agent;
    tokens.judge += t.judge;
    tokens.total += t.total;
    const c = caseCost(u);
    if (c === null) unknownCostCases++;
    else costUsd += c;
  }
  return { tokens, costUsd: roundUsd(costUsd), unknownCostCases };
}

/**
 * A suite's `prices`: a table, or the path of a JSON or YAML file holding one (relative to the
 * suite's folder). Returns the table, or the problem in one line naming the model and field.
 */
export function checkPrices(value: unknown, readText: (path: string) => string, parseYaml: (text: string) => unknown): { prices: PriceTable; problem: string | null } {
  if (value === undefined || value === null) return { prices: {}, problem: null };
  let raw: unknown = value;
  let where = "prices";
  if (typeof value === "string") {
    where = `prices (${value})`;
    try {
      const text = readText(value);
      raw = /\.ya?ml$/i.test(value) ? parseYaml(text) : JSON.parse(text);
    } catch (err) {
      return { prices: {}, problem: `${where}: cannot read the price table: ${(err as Error).message}` };
    }
  }
  const parsed = PriceTableSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { prices: {}, problem: `${where}: ${issue.path.map(String).join(".") || "the table"}: ${issue.message} (each model: { inputPerMTok, outputPerMTok } in US dollars per million tokens)` };
  }
  return { prices: parsed.data, problem: null };
}
