import type { RunMetrics } from "./agent.ts";

/**
 * What an agent's run cost, as the agent reported it (`RunOutput.metrics`). Pure; no I/O.
 * Kept on the case result so the results store can record it in every mode (the raw response
 * does not travel back from distributed workers).
 */

/** Tokens and cost of one case's agent run; a field the agent did not report is `null`. */
export interface CaseUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  /** US dollars. */
  costUsd: number | null;
}

/**
 * The usage in an agent's `metrics`, or `null` when it reports none. A total missing from the
 * metrics is the sum of input and output when both are there. Non-numbers and negative or
 * non-finite values are ignored (a framework's metrics object is free-form).
 */
export function usageFromMetrics(metrics: RunMetrics | null | undefined): CaseUsage | null {
  if (!metrics || typeof metrics !== "object") return null;
  const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
  const inputTokens = num(metrics.inputTokens);
  const outputTokens = num(metrics.outputTokens);
  const totalTokens = num(metrics.totalTokens) ?? (inputTokens !== null && outputTokens !== null ? inputTokens + outputTokens : null);
  const costUsd = num(metrics.costUsd);
  if (inputTokens === null && outputTokens === null && totalTokens === null && costUsd === null) return null;
  return { inputTokens, outputTokens, totalTokens, costUsd };
}
