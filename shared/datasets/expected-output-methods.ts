// runs in: both
import * as z from "zod";
import { DEFAULT_SCORING_METHOD, SCORING_METHODS, type ScoringMethod } from "./scoring-methods.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The `expected_output` methods of data-driven cases: how a case's expected output is compared
 * with the agent's answer (`exact`, `contains`, `regex`, `json`, `numeric`, `judge`), their
 * options, and which expected values each accepts. Pure; no I/O. The comparison itself is
 * worker/runtime/checks/expected-output.ts (its verdict is the case's `expectations`). This is
 * not a custom scorer: a case's `scorer` (the `Scorer`/`Score` contract, shared/case/score.ts) is
 * user code that gives the `score_*` keys, run by worker/runtime/checks/scorer.ts.
 */

/**
 * The scoring methods and the default (shared/datasets/scoring-methods.ts holds the list, so the command line's
 * `--scoring-method` can offer it without loading zod):
 * - `exact`: the answer equals the expected text (both trimmed).
 * - `contains`: the answer contains the expected text.
 * - `regex`: the answer matches the expected text read as a JavaScript regular expression.
 * - `json`: the answer, parsed as JSON (bare or in a ```json fence), deep-equals the expected value.
 * - `numeric`: a number in the answer is within `tolerance` of the expected number.
 * - `judge`: an LLM judge decides whether the answer agrees factually with the expected answer.
 */
export { DEFAULT_SCORING_METHOD, SCORING_METHODS, type ScoringMethod };

/** A scoring method with its options. */
export interface OutputScoring {
  method: ScoringMethod;
  /** `exact`, `contains` and `regex` ignore letter case. Default false. */
  ignoreCase?: boolean;
  /** `numeric`: the largest absolute difference that still passes. Default 0 (equal, up to float noise). */
  tolerance?: number;
}

/** {@link OutputScoring} with every option resolved. */
export type ResolvedScoring = Readonly<Required<OutputScoring>>;

/** zod schema of a scoring option: a method name, or `{ method, ignoreCase?, tolerance? }`. */
export const OutputScoringSchema = lazySchema(() => z.union(
  [
    z.enum(SCORING_METHODS),
    z.strictObject({
      method: z.enum(SCORING_METHODS),
      ignoreCase: z.boolean().optional(),
      tolerance: z.number().finite().nonnegative().optional(),
    }),
  ],
  { error: `must be a scoring method (${SCORING_METHODS.join(", ")}) or { method, ignoreCase?, tolerance? }` },
));

/** Resolves a scoring option (a name, an object or nothing) against the defaults. */
export function resolveScoring(value: ScoringMethod | OutputScoring | null | undefined, fallback?: ResolvedScoring): ResolvedScoring {
  const base: ResolvedScoring = fallback ?? { method: DEFAULT_SCORING_METHOD, ignoreCase: false, tolerance: 0 };
  if (value === null || value === undefined) return base;
  if (typeof value === "string") return Object.freeze({ ...base, method: value });
  return Object.freeze({ method: value.method, ignoreCase: value.ignoreCase ?? base.ignoreCase, tolerance: value.tolerance ?? base.tolerance });
}

/** The expected values a case may hold: text, a number, a boolean, or JSON data (for `json`). */
export type ExpectedOutput = string | number | boolean | readonly unknown[] | { readonly [key: string]: unknown };

/**
 * Why `expected` cannot be scored with `scoring`, or null when it can. Checked when a case is
 * built (and when a dataset row is validated), so a bad pattern fails the load, not the run.
 */
export function expectedOutputProblem(expected: unknown, scoring: ResolvedScoring): string | null {
  if (expected === null || expected === undefined) return "must be set";
  const t = typeof expected;
  if (t === "function" || t === "symbol" || t === "bigint") return `must be text, a number or JSON data, got a ${t}`;
  switch (scoring.method) {
    case "exact":
    case "contains":
    case "judge":
      return t === "object" && scoring.method !== "judge" ? `must be text or a number for scoring method '${scoring.method}' (use 'json' for structured data)` : null;
    case "regex": {
      if (t !== "string") return "must be a regular expression (text) for scoring method 'regex'";
      try {
        new RegExp(expected as string, scoring.ignoreCase ? "i" : "");
        return null;
      } catch (err) {
        return `is not a valid regular expression: ${(err as Error).message}`;
      }
    }
    case "json": {
      if (t !== "string") return null;
      try {
        JSON.parse(expected as string);
        return null;
      } catch (err) {
        return `must be JSON for scoring method 'json': ${jsonErrorText(err)}`;
      }
    }
    case "numeric":
      return expectedNumber(expected) === null ? "must be a number (or text holding one) for scoring method 'numeric'" : null;
  }
}

/** A JSON.parse error without its position suffix (which differs between Node versions). */
export function jsonErrorText(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .replace(/ at position \d+.*$/s, "")
    .replace(/ in JSON$/, "");
}

/** The expected value as a number for `numeric` scoring, or null. Thousands separators are allowed (`35,401,058`). */
export function expectedNumber(expected: unknown): number | null {
  if (typeof expected === "number") return Number.isFinite(expected) ? expected : null;
  if (typeof expected !== "string") return null;
  const text = expected.trim().replace(/(\d),(?=\d{3}\b)/g, "$1");
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}
