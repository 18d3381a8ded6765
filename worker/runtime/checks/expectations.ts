import type { RunOutput } from "../../../shared/case/agent.ts";
import type { Case } from "../../../shared/case/case.ts";
import type { JudgeModel, JudgeUsage } from "../../../shared/case/judge-model.ts";
import type { ExpectationVerdict, ExpectationsData } from "../../../shared/wire/result-data.ts";
import { contentAsString } from "../evidence.ts";
import { scoreExpectedOutput } from "./expected-output.ts";
import { buildJudgeRequest, runJudge } from "./judge.ts";
import { isClean } from "./reliability.ts";
import { expectedOutputProblem, type ResolvedScoring, type ScoringMethod } from "../../../shared/datasets/expected-output-methods.ts";

/**
 * The data-driven checks (Exulu's test case fields): `expected_output` by its scoring method,
 * `expected_agent_tools` against the team members' tool calls, `expected_knowledge_sources`
 * against the sources the run reports. Each verdict carries a one-line reason.
 */

/** The error of an expected-output judge that gave no verdict (its provider failed, or it answered nothing usable): an `infra` error. */
export const NO_RESULT_OUTPUT_JUDGE_ERROR = "expected_output: judge returned no result";

/** Recorded when the `judge` scoring method needs a model and none is configured anywhere. */
export const NO_OUTPUT_JUDGE_ERROR = "expected_output: no judge model configured: set OPENAI_API_KEY or pass judgeModel";

/** True when the case has any data-driven check. */
export function hasExpectations(c: Case): boolean {
  return c.expectedOutput !== null || c.expectedAgentTools !== null || c.expectedKnowledgeSources !== null;
}

/**
 * What the judge sees as its criteria for the `judge` scoring method: agreement on facts with
 * the expected answer, whatever the wording.
 */
export function factualAgreementCriteria(expected: string): string {
  return [
    "The output agrees factually with the expected answer below: it states the same facts, figures and conclusions.",
    "Wording, order, formatting and extra correct detail do not matter; a missing, different or contradicting fact fails.",
    "",
    "Expected answer:",
    expected,
  ].join("\n");
}

/** How {@link runExpectations} reaches the judge (only the `judge` scoring method uses it). */
export interface ExpectationsJudge {
  /** Resolves the judge model (case, suite, default); called only when needed; may throw. */
  model: () => JudgeModel | null;
  signal: AbortSignal;
  /** Epoch ms. */
  deadline?: number;
  /** Told why a judge gave no usable answer (debug). */
  onProblem?: (problem: string) => void;
  /** The run's scoring method, replacing the case's own (`--scoring-method`). Default: the case's. */
  scoringMethod?: ScoringMethod | null;
  /** Told the tokens of each judge call, with the judge model (the case's judge usage). */
  onUsage?: (usage: JudgeUsage, model: JudgeModel) => void;
}

/**
 * Runs the case's data-driven checks on a completed run. Returns the verdicts, and the errors of
 * checks that could not decide (no judge model, no usable answer), each under its prefix.
 */
export async function runExpectations(c: Case, run: RunOutput, output: string | null, judge: ExpectationsJudge): Promise<{ expectations: ExpectationsData | null; errors: string[] }> {
  const expectations: ExpectationsData = {};
  const errors: string[] = [];
  const text = output ?? contentAsString(run.content);
  const scoring: ResolvedScoring = judge.scoringMethod ? { ...c.outputScoring, method: judge.scoringMethod } : c.outputScoring;
  // The case was checked against its own method when it was built; the run's may not fit its expected value.
  const misfit = c.expectedOutput !== null && judge.scoringMethod ? expectedOutputProblem(c.expectedOutput, scoring) : null;
  if (misfit) errors.push(`expected_output: ${misfit} (--scoring-method ${scoring.method})`);
  else if (c.expectedOutput !== null) {
    if (scoring.method !== "judge") {
      expectations.expectedOutput = { method: scoring.method, ...scoreExpectedOutput(text, c.expectedOutput, scoring) };
    } else {
      let model: JudgeModel | null;
      try {
        model = judge.model();
      } catch (err) {
        errors.push(`expected_output: ${(err as Error).message}`);
        model = null;
      }
      if (!model) {
        if (errors.length === 0) errors.push(NO_OUTPUT_JUDGE_ERROR);
      } else {
        const expectedText = typeof c.expectedOutput === "string" ? c.expectedOutput : contentAsString(c.expectedOutput);
        const request = buildJudgeRequest({ criteria: factualAgreementCriteria(expectedText), mode: c.judgeMode, input: c.input, output: text });
        const judgeModel = model;
        const outcome = await runJudge(model, request, c.judgeMode, c.judgeThreshold, judge.signal, { deadline: judge.deadline, onUsage: (u) => judge.onUsage?.(u, judgeModel) });
        if ("verdict" in outcome) {
          const v = outcome.verdict;
          const score = v.score !== null ? ` (score ${v.score}, passes at ${c.judgeThreshold})` : "";
          expectations.expectedOutput = { method: "judge", passed: v.passed, reason: `judge${score}: ${v.reason ?? (v.passed ? "agrees with the expected answer" : "does not agree")}` };
        } else {
          judge.onProblem?.(outcome.problem);
          errors.push(NO_RESULT_OUTPUT_JUDGE_ERROR);
        }
      }
    }
  }
  if (c.expectedAgentTools !== null) expectations.expectedAgentTools = checkAgentTools(run, c.expectedAgentTools);
  if (c.expectedKnowledgeSources !== null) expectations.expectedKnowledgeSources = checkKnowledgeSources(run, c.expectedKnowledgeSources);
  return { expectations: Object.keys(expectations).length > 0 ? expectations : null, errors };
}

/**
 * `expected_agent_tools`: every entry must have run cleanly in a team member (not the leader),
 * at any depth. `tool` matches any member; `member/tool` only the member whose output says
 * `agentId: "member"`. Pure.
 */
export function checkAgentTools(run: RunOutput, expected: readonly string[]): ExpectationVerdict {
  const ran: string[] = [];
  const any = new Set<string>();
  const byMember = new Set<string>();
  const members = new Set<string>();
  const walk = (o: RunOutput, seen: Set<RunOutput>): void => {
    for (const m of o.memberResponses ?? []) {
      if (!m || seen.has(m)) continue;
      seen.add(m);
      if (m.agentId) members.add(m.agentId);
      for (const t of m.tools ?? []) {
        if (!t || !isClean(t)) continue;
        any.add(t.toolName!);
        if (m.agentId) byMember.add(`${m.agentId}/${t.toolName}`);
        ran.push(m.agentId ? `${m.agentId}/${t.toolName}` : t.toolName!);
      }
      walk(m, seen);
    }
  };
  walk(run, new Set());
  const missing = expected.filter((entry) => {
    const slash = entry.indexOf("/");
    if (slash > 0 && members.has(entry.slice(0, slash))) return !byMember.has(entry);
    return !any.has(entry);
  });
  const seen = ran.length > 0 ? `members ran: ${[...new Set(ran)].join(", ")}` : (run.memberResponses?.length ?? 0) > 0 ? "the members ran no tool cleanly" : "the run has no team member outputs (memberResponses): is it a team?";
  return missing.length === 0 ? { passed: true, reason: seen } : { passed: false, reason: `missing member tool calls: ${missing.join(", ")} (${seen})` };
}

/**
 * `expected_knowledge_sources`: every entry must be among the sources the run (or a member)
 * reports in `knowledgeSources`. Pure.
 */
export function checkKnowledgeSources(run: RunOutput, expected: readonly string[]): ExpectationVerdict {
  const retrieved = new Set<string>();
  const walk = (o: RunOutput, seen: Set<RunOutput>): void => {
    if (!o || seen.has(o)) return;
    seen.add(o);
    for (const s of o.knowledgeSources ?? []) if (typeof s === "string" && s) retrieved.add(s);
    for (const m of o.memberResponses ?? []) walk(m, seen);
  };
  walk(run, new Set());
  const missing = expected.filter((s) => !retrieved.has(s));
  const seen = retrieved.size > 0 ? `retrieved: ${[...retrieved].join(", ")}` : "the run reported no knowledge sources (RunOutput.knowledgeSources)";
  return missing.length === 0 ? { passed: true, reason: seen } : { passed: false, reason: `missing knowledge sources: ${missing.join(", ")} (${seen})` };
}
