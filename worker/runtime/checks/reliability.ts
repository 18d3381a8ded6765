import type { RunMessage, RunOutput, ToolExecution } from "../../../shared/agent.ts";
import type { ReliabilityDetails } from "../../../shared/wire/result-data.ts";

/**
 * The reliability check: were the expected tools actually executed? Pure; no I/O (spec H).
 *
 * Evidence is executions, not requests: a refused or errored call does not count, and the
 * missing entry says so. For a team, every member's executions count, at every depth.
 */

/** The annotation on a missing tool that was attempted but never ran cleanly (the dash is U+2014). */
export const REFUSED_ANNOTATION = "(requested but refused/errored \u2014 execution matching, new in 2.8.0)";

/** Options of {@link evaluateReliability}. */
export interface ReliabilityOptions {
  /** Tool names that must run cleanly; duplicates are met by one call. */
  expectedToolCalls: readonly string[];
  /** Subset matching (`true`, the suite default) or strict matching (`false`). */
  allowAdditionalToolCalls: boolean;
}

/** Grades the tool evidence of one output. */
export function evaluateReliability(output: RunOutput, options: ReliabilityOptions): ReliabilityDetails {
  const expected = new Set(options.expectedToolCalls);
  const lenient = options.allowAdditionalToolCalls;
  const executions = collectExecutions(output);
  const requested = requestedToolNames(output);

  const passedToolCalls: string[] = [];
  const failedToolCalls: string[] = [];
  const additionalToolCalls: string[] = [];
  const cleanNames = new Set<string>();
  const executedNames = new Set<string>();

  for (const exec of executions) {
    const name = exec.toolName ?? "";
    if (name) executedNames.add(name);
    if (!expected.has(name)) {
      // Strict mode polices the attempt, so an errored or refused unexpected call still fails.
      (lenient ? additionalToolCalls : failedToolCalls).push(name || "?");
    } else if (isClean(exec)) {
      passedToolCalls.push(name);
      cleanNames.add(name);
    }
    // An expected call that errored or is paused is recorded nowhere: a clean retry still passes.
  }

  const requestOnly = [...requested].filter((n) => !executedNames.has(n)).sort();
  for (const name of requestOnly) {
    if (!expected.has(name)) (lenient ? additionalToolCalls : failedToolCalls).push(name);
  }

  const missingToolCalls: string[] = [];
  for (const name of expected) {
    if (cleanNames.has(name)) continue;
    const attempted = executedNames.has(name) || requested.has(name);
    missingToolCalls.push(attempted ? `${name} ${REFUSED_ANNOTATION}` : name);
  }

  return {
    passed: failedToolCalls.length === 0 && missingToolCalls.length === 0,
    passedToolCalls,
    failedToolCalls,
    additionalToolCalls,
    missingToolCalls,
  };
}

/** A clean execution has a name, no truthy error and is not paused. */
export function isClean(exec: ToolExecution): boolean {
  return Boolean(exec.toolName) && !exec.toolCallError && !exec.isPaused;
}

/** The output's own executions, then every member's, depth first. */
export function collectExecutions(output: RunOutput): ToolExecution[] {
  const all: ToolExecution[] = [];
  walk(output, (o) => {
    for (const t of o.tools ?? []) if (t) all.push(t);
  });
  return all;
}

/** Names requested in any message of the output or its members, except messages replayed from history. */
export function requestedToolNames(output: RunOutput): Set<string> {
  const names = new Set<string>();
  walk(output, (o) => {
    for (const m of (o.messages ?? []) as readonly RunMessage[]) {
      if (!m || m.fromHistory) continue;
      for (const call of m.toolCalls ?? []) {
        const name = call?.function?.name;
        if (name) names.add(name);
      }
    }
  });
  return names;
}

function walk(output: RunOutput, visit: (o: RunOutput) => void, seen: Set<RunOutput> = new Set()): void {
  if (!output || seen.has(output)) return;
  seen.add(output);
  visit(output);
  for (const member of output.memberResponses ?? []) walk(member, visit, seen);
}
