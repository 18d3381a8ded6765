// runs in: both
import type { RunMetrics } from "./agent.ts";
import type { CaseUsage, ModelUsage } from "../wire/result-data.ts";

/**
 * What an agent's run cost, as the agent reported it (`RunOutput.metrics`). Pure; no I/O.
 * Kept on the case result so the results store can record it in every mode (the raw response
 * does not travel back from distributed workers). The shape, `CaseUsage`, is written once with
 * the case result's (shared/wire/result-data.ts).
 */

/**
 * The usage in an agent's `metrics`, or `null` when it reports none. A total missing from the
 * metrics is the sum of input and output when both are there. Non-numbers and negative or
 * non-finite values are ignored (a framework's metrics object is free-form).
 */
export function usageFromMetrics(metrics: RunMetrics | null | undefined, outputModel?: string | null): CaseUsage | null {
  if (!metrics || typeof metrics !== "object") return null;
  const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
  const inputTokens = num(metrics.inputTokens);
  const outputTokens = num(metrics.outputTokens);
  const totalTokens = num(metrics.totalTokens) ?? (inputTokens !== null && outputTokens !== null ? inputTokens + outputTokens : null);
  const costUsd = num(metrics.costUsd);
  // The model priced: the metrics' own, else the run output's (`RunOutput.model`).
  const model = typeof metrics.model === "string" && metrics.model ? metrics.model : typeof outputModel === "string" && outputModel ? outputModel : null;
  if (inputTokens === null && outputTokens === null && totalTokens === null && costUsd === null) return null;
  return { inputTokens, outputTokens, totalTokens, costUsd, ...(model ? { model } : {}) };
}

/** Adds up the token usage of judge calls (one case's), keeping the judge model's name for pricing. */
export class JudgeUsageTally {
  #calls = 0;
  #input: number | null = null;
  #output: number | null = null;
  #total: number | null = null;
  #model: string | null = null;

  /** One judge call's usage; `model` is the judge's id (its model name for the built-in judges). */
  add(usage: { inputTokens?: number; outputTokens?: number; totalTokens?: number }, model?: string | null): void {
    this.#calls++;
    const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
    const i = num(usage.inputTokens);
    const o = num(usage.outputTokens);
    const t = num(usage.totalTokens) ?? (i !== null && o !== null ? i + o : null);
    if (i !== null) this.#input = (this.#input ?? 0) + i;
    if (o !== null) this.#output = (this.#output ?? 0) + o;
    if (t !== null) this.#total = (this.#total ?? 0) + t;
    if (model && !this.#model) this.#model = model;
  }

  /** The judge side of a case's usage, or null when no judge call reported any. */
  usage(): ModelUsage | null {
    if (this.#calls === 0) return null;
    return { inputTokens: this.#input, outputTokens: this.#output, totalTokens: this.#total, costUsd: null, ...(this.#model ? { model: this.#model } : {}) };
  }
}

/** A case's usage with its judge side added (the agent side empty when the agent reported none). */
export function withJudgeUsage(usage: CaseUsage | null | undefined, judge: ModelUsage | null): CaseUsage | null {
  if (!judge) return usage ?? null;
  return { ...(usage ?? { inputTokens: null, outputTokens: null, totalTokens: null, costUsd: null }), judge };
}
