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

  /** Whether a budget would be spent once `more` (usages not counted yet: a case's trials so far) were counted too. */
  spentWith(more: ReadonlyArray<CaseUsage | null | undefined>): boolean {
    let usd = this.#usd;
    let tokens = this.#tokens;
    for (const u of more) {
      usd += caseCost(u) ?? 0;
      tokens += caseTokens(u).total;
    }
    return (this.budget.usd !== null && roundUsd(usd) >= this.budget.usd) || (this.budget.tokens !== null && tokens >= this.budget.tokens);
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
