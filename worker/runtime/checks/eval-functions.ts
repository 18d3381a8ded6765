import type { RunOutput } from "../../../shared/case/agent.ts";
import type { Case } from "../../../shared/case/case.ts";
import { describeError } from "../../../shared/errors.ts";
import type { EvalFunctions } from "../../../shared/case/eval-functions.ts";
import { round3 } from "../../../shared/py-format.ts";
import type { EvalFunctionVerdict } from "../../../shared/wire/result-data.ts";
import { runScorer } from "./scorer.ts";

/**
 * The named evaluation functions of a case (Exulu's `eval_functions`): each is a scorer the suite
 * registers by name, run on a completed run like a case's own scorer, and its verdict is one more
 * check that must pass (`expectations.evalFunctions`). What each one receives as `expected`: the
 * case's expected output (a row's `expected_output`), else the case's `expected`.
 */

/** Verdicts in the order of `names`, and the errors of functions that gave none, each under its prefix. */
export async function runEvalFunctions(
  c: Case,
  names: readonly string[],
  registry: EvalFunctions | null | undefined,
  run: RunOutput,
  signal: AbortSignal,
): Promise<{ verdicts: EvalFunctionVerdict[]; errors: string[] }> {
  const verdicts: EvalFunctionVerdict[] = [];
  const errors: string[] = [];
  const expected = c.expectedOutput ?? c.expected ?? null;
  for (const name of names) {
    const scorer = registry?.get(name);
    if (!scorer) {
      const known = [...(registry?.keys() ?? [])];
      errors.push(`eval_function ${name}: unknown evaluation function (${known.length > 0 ? `registered: ${known.join(", ")}` : "none registered for this run"})`);
      continue;
    }
    try {
      const score = await runScorer(scorer, run, expected, signal, { caseName: c.name, input: c.input });
      verdicts.push({ name, value: score.value, passed: score.passed, reason: score.reason ?? `${score.passed ? "passed" : "failed"} with ${round3(score.value)}` });
    } catch (err) {
      errors.push(`eval_function ${name}: ${describeError(err)}`);
    }
    if (signal.aborted) break;
  }
  return { verdicts, errors };
}
