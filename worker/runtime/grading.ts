import type { RunOutput } from "../../shared/case/agent.ts";
import type { Case } from "../../shared/case/case.ts";
import type { JudgeModel, JudgeUsage } from "../../shared/case/judge-model.ts";
import type { CaseResult } from "../../shared/result/result.ts";
import { describeError } from "../../shared/errors.ts";
import { JudgeUsageTally, withJudgeUsage } from "../../shared/case/usage.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { errorPartKind, type ErrorPartKind } from "../../shared/result/error-kind.ts";
import { evalFunctionsFor, type EvalFunctions } from "../../shared/case/eval-functions.ts";
import type { ScoringMethod } from "../../shared/datasets/expected-output-methods.ts";
import { contentAsString } from "./evidence.ts";
import { buildJudgeRequest, runJudge } from "./checks/judge.ts";
import { evaluateReliability, reliabilityOptions } from "./checks/reliability.ts";
import { runScorer } from "./checks/scorer.ts";
import { hasExpectations, NO_RESULT_OUTPUT_JUDGE_ERROR, runExpectations } from "./checks/expectations.ts";
import { runEvalFunctions } from "./checks/eval-functions.ts";
import { defaultJudgeModel } from "../models/default-judge.ts";
import type { CaseTrace } from "./case-trace.ts";

/**
 * The grading half of a case (spec section H): once the agent's run produced a gradeable output,
 * the judge, reliability, scorer, expectations and evaluation functions run in that order, each
 * committing its verdict to the result while the run is still open (lifecycle.ts closes it on timeout).
 */

/** Recorded when the judge is needed and no model is configured anywhere. */
export const NO_JUDGE_MODEL_ERROR = "judge: no judge model configured: set OPENAI_API_KEY or pass judgeModel";

/** The run options the checks read (a subset of lifecycle.ts's RunCaseOptions). */
export interface GradingOptions {
  judgeModel?: JudgeModel | null;
  logger?: Logger;
  evalFunctions?: EvalFunctions | null;
  runEvalFunctions?: readonly string[] | null;
  scoringMethod?: ScoringMethod | null;
}

/** Everything the checks of one case share: built once by the run body, read by every check. */
export interface GradingContext {
  c: Case;
  result: CaseResult;
  /** The completed run output being graded. */
  output: RunOutput;
  /** The whole output text (the result keeps a cut copy). */
  fullOutput: string | null;
  signal: AbortSignal;
  /** The case's deadline, epoch ms. */
  deadline: number;
  options: GradingOptions;
  /** False once the case's timeout or cancellation closed the result: checks then stop. */
  isOpen(): boolean;
  /** Applies a change to the result while it is open, and tells the observer. */
  commit(apply: () => void): void;
  /** Records an error on the result while it is open. */
  record(message: string, kind?: ErrorPartKind): void;
  trace: CaseTrace | null;
}

let defaultLogger: Logger | undefined;

/** Runs every check the case declares on its completed output. Throws only on an evalfleet bug. */
export async function gradeOutput(ctx: GradingContext): Promise<void> {
  const { c, result, output, signal, options, commit, record, trace } = ctx;
  // Each check in its own span under the checks phase; without tracing, called as it is.
  const check = <T>(name: string, fn: () => Promise<T>, verdict: () => boolean | null | undefined): Promise<T> => (trace ? trace.check(name, fn, verdict) : fn());
  // The tokens of every judge call of the case (criteria and expected-output judges), priced where results are collected.
  const judgeTally = new JudgeUsageTally();
  const onJudgeUsage = (u: JudgeUsage, model: JudgeModel): void => judgeTally.add(u, model.id ?? null);
  const recordJudgeUsage = (): void => commit(() => (result.usage = withJudgeUsage(result.usage, judgeTally.usage())));
  if (c.criteria) await check("judge", () => judgeCheck(ctx, onJudgeUsage), () => result.judgePassed);
  recordJudgeUsage();
  if (!ctx.isOpen()) return;
  const reliability = reliabilityOptions(c);
  if (reliability) {
    await check(
      "reliability",
      async () => {
        try {
          const details = evaluateReliability(output, reliability);
          commit(() => {
            result.reliabilityPassed = details.passed;
            result.reliability = details;
          });
        } catch (err) {
          record(`reliability: ${describeError(err)}`, "check");
        }
      },
      () => result.reliabilityPassed,
    );
  }
  if (!ctx.isOpen()) return;
  if (c.scorer) {
    const scorer = c.scorer;
    await check(
      "scorer",
      async () => {
        try {
          const score = await runScorer(scorer, output, c.expected, signal, { caseName: c.name, input: c.input });
          commit(() => (result.score = score));
        } catch (err) {
          record(`scorer: ${describeError(err)}`, errorPartKind(err, "check"));
        }
      },
      () => result.score?.passed,
    );
  }
  if (!ctx.isOpen()) return;
  if (hasExpectations(c)) {
    await check("expectations", () => expectationsCheck(ctx, onJudgeUsage, recordJudgeUsage), () => expectationsPassed(result));
  }
  if (!ctx.isOpen()) return;
  const evalNames = evalFunctionsFor(c.evalFunctions, options.runEvalFunctions);
  if (evalNames.length > 0) {
    await check(
      "eval_functions",
      async () => {
        const { verdicts, errors } = await runEvalFunctions(c, evalNames, options.evalFunctions, output, signal);
        if (verdicts.length > 0) commit(() => (result.expectations = { ...result.expectations, evalFunctions: verdicts }));
        for (const e of errors) record(e, "check");
      },
      () => (result.expectations?.evalFunctions ? result.expectations.evalFunctions.every((v) => v.passed) : null),
    );
  }
}

/** Whether every data-driven check that ran passed (null: none ran). */
function expectationsPassed(result: CaseResult): boolean | null {
  const e = result.expectations;
  if (!e) return null;
  const verdicts = [e.expectedOutput, e.expectedAgentTools, e.expectedKnowledgeSources].filter((v) => v !== undefined);
  return verdicts.length === 0 ? null : verdicts.every((v) => v!.passed);
}

async function expectationsCheck(ctx: GradingContext, onJudgeUsage: (usage: JudgeUsage, model: JudgeModel) => void, recordJudgeUsage: () => void): Promise<void> {
  const { c, result, output: captured, fullOutput, signal, deadline, options, commit, record } = ctx;
  try {
    const { expectations, errors } = await runExpectations(c, captured, fullOutput, {
      scoringMethod: options.scoringMethod ?? null,
      // Same resolution as the criteria judge: the case's, the suite's or runner's, then the default.
      model: () => c.judgeModel || options.judgeModel || defaultJudgeModel(),
      signal,
      deadline,
      onProblem: (problem) => (options.logger ?? (defaultLogger ??= silentLogger())).debug({ case: c.name, problem }, "expected_output judge returned no result"),
      onUsage: onJudgeUsage,
    });
    recordJudgeUsage();
    commit(() => (result.expectations = expectations));
    for (const e of errors) record(e, e === NO_RESULT_OUTPUT_JUDGE_ERROR ? "infra" : "check");
  } catch (err) {
    record(`expected_output: ${describeError(err)}`, errorPartKind(err, "check"));
  }
}

async function judgeCheck(ctx: GradingContext, onUsage: (usage: JudgeUsage, model: JudgeModel) => void): Promise<void> {
  const { c, result, output, fullOutput, signal, deadline, options, commit, record } = ctx;
  let outcome: Awaited<ReturnType<typeof runJudge>>;
  try {
    // Resolution order: the case's judge, the suite's or runner's, then the default from the
    // environment (none without OPENAI_API_KEY). A malformed environment is a judge error.
    const model = c.judgeModel || options.judgeModel || defaultJudgeModel();
    if (!model) {
      record(NO_JUDGE_MODEL_ERROR, "check");
      return;
    }
    const request = buildJudgeRequest({ criteria: c.criteria!, mode: c.judgeMode, input: c.input, output: fullOutput ?? contentAsString(output.content) });
    outcome = await runJudge(model, request, c.judgeMode, c.judgeThreshold, signal, { deadline, onUsage: (u) => onUsage(u, model) });
  } catch (err) {
    record(`judge: ${describeError(err)}`, errorPartKind(err, "check"));
    return;
  }
  if ("verdict" in outcome) {
    const v = outcome.verdict;
    commit(() => {
      result.judgePassed = v.passed;
      result.judgeReason = v.reason;
      result.judgeScore = v.score;
    });
  } else {
    (options.logger ?? (defaultLogger ??= silentLogger())).debug({ case: c.name, problem: outcome.problem }, "judge returned no result");
    // The judge's provider refused or failed (its client's retries spent), or it answered nothing usable.
    record("judge: returned no result", "infra");
  }
}
