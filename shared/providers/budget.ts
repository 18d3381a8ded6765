// runs in: both
import type { CaseUsage } from "../wire/result-data.ts";
import { caseCost, caseTokens, roundUsd } from "./prices.ts";

/**
 * `--budget-usd` and `--budget-tokens`: what a whole run may spend, across the fleet. Results are
 * counted as they arrive; once either budget is spent, the run stops like `--deadline` (nothing
 * new starts, the rest is skipped with `skipped: budget exhausted`, exit 3). A case of unknown cost
 * counts as 0 against the dollars. The overshoot is at most what the cases in flight spend. Pure.
 */

/** Why unstarted cases are skipped when the budget runs out (`skipped: budget exhausted`). */
export const BUDGET_EXHAUSTED = "budget exhausted";

/** A run's budgets; null: none. */
export interface Budget {
  /** US dollars. */
  usd: number | null;
  /** Tokens (agent and judge). */
  tokens: number | null;
}

/** Counts what the cases of a run spent against its {@link Budget}. */
export class BudgetMeter {
  readonly budget: Budget;
  #usd = 0;
  #tokens = 0;

  constructor(budget: Budget) {
    this.budget = budget;
  }

  /** Counts one case's usage; returns whether a budget is now spent. */
  add(usage: CaseUsage | null | undefined): boolean {
    this.#usd = roundUsd(this.#usd + (caseCost(usage) ?? 0));
    this.#tokens += caseTokens(usage).total;
    return this.exhausted;
  }

  /**
   * How many of `wanted` more trials of a case fit in what is left of the budget, at the mean
   * cost of its trials so far (`trials`; `counted`: whether this meter has counted them already,
   * as a distributed run counts each trial as it arrives). 0 once a budget is spent. A side the
   * trials did not use (no tokens, no known cost) does not bound them.
   */
  trialsThatFit(trials: ReadonlyArray<CaseUsage | null | undefined>, wanted: number, counted: boolean): number {
    let usd = 0;
    let tokens = 0;
    for (const u of trials) {
      usd += caseCost(u) ?? 0;
      tokens += caseTokens(u).total;
    }
    const spentUsd = roundUsd(this.#usd + (counted ? 0 : usd));
    const spentTokens = this.#tokens + (counted ? 0 : tokens);
    const { usd: budgetUsd, tokens: budgetTokens } = this.budget;
    if ((budgetUsd !== null && spentUsd >= budgetUsd) || (budgetTokens !== null && spentTokens >= budgetTokens)) return 0;
    const n = Math.max(1, trials.length);
    let fit = wanted;
    if (budgetUsd !== null && usd > 0) fit = Math.min(fit, Math.floor((budgetUsd - spentUsd) / (usd / n)));
    if (budgetTokens !== null && tokens > 0) fit = Math.min(fit, Math.floor((budgetTokens - spentTokens) / (tokens / n)));
    return Math.max(0, fit);
  }

  /** Whether either budget is spent. */
  get exhausted(): boolean {
    return (this.budget.usd !== null && this.#usd >= this.budget.usd) || (this.budget.tokens !== null && this.#tokens >= this.budget.tokens);
  }

  get spent(): { usd: number; tokens: number } {
    return { usd: this.#usd, tokens: this.#tokens };
  }
}

/** Whether a budget is set at all. */
export function hasBudget(b: Budget | null | undefined): b is Budget {
  return Boolean(b && (b.usd !== null || b.tokens !== null));
}
