import type { RunMessage, RunOutput, ToolExecution } from "../../../shared/case/agent.ts";
import { argsObject } from "./trajectory-match.ts";

/**
 * What the trajectory check reads of a run: its tool executions as numbered steps (the run's own,
 * then each member's, depth first, under the member's `agentId`), the requests that never ran,
 * and how a step's error reads in a reason. Pure; no I/O.
 */

/** One execution, as the check reads it. */
export interface Step {
  tool: string;
  member: string | null;
  args: Record<string, unknown>;
  result: unknown;
  hasResult: boolean;
  clean: boolean;
  errored: boolean;
  exec: ToolExecution;
}

/** A call the model requested that never executed (no execution has its name). */
export interface Request {
  tool: string;
  member: string | null;
  args: Record<string, unknown>;
}

/** `calls made: search, book` (the distinct names, the first five), or `no tool calls`. */
export function callsMade(steps: readonly Step[]): string {
  if (steps.length === 0) return "no tool calls";
  const distinct = [...new Set(steps.map((s) => (s.member ? `${s.member}/${s.tool}` : s.tool) || "?"))];
  return `calls made: ${distinct.slice(0, 5).join(", ")}${distinct.length > 5 ? ", ..." : ""}`;
}

/** `: timeout` from a call's error (its text, else its result's), cut to a line; "" without one. */
export function errorDetail(step: Step): string {
  const e = step.exec.toolCallError;
  const text = typeof e === "string" && e ? e : typeof step.result === "string" ? step.result : "";
  const line = text.split("\n")[0]!.trim();
  return line ? `: ${line.length > 80 ? `${line.slice(0, 77)}...` : line}` : "";
}

/** A clean execution has a name, no truthy error and is not paused. */
export function isClean(exec: ToolExecution): boolean {
  return Boolean(exec.toolName) && !exec.toolCallError && !exec.isPaused;
}

/** The output's executions (its own, then every member's, depth first), the requests that never ran, and the members' ids. */
export function collect(output: RunOutput): { steps: Step[]; requests: Request[]; members: Set<string> } {
  const steps: Step[] = [];
  const requested: Request[] = [];
  const members = new Set<string>();
  const executed = new Set<string>();
  const visit = (o: RunOutput, depth: number, seen: Set<RunOutput>): void => {
    if (!o || seen.has(o)) return;
    seen.add(o);
    const member = depth > 0 && typeof o.agentId === "string" && o.agentId ? o.agentId : null;
    if (member) members.add(member);
    for (const t of o.tools ?? []) {
      if (!t) continue;
      const tool = typeof t.toolName === "string" ? t.toolName : "";
      if (tool) executed.add(tool);
      steps.push({ tool, member, args: argsObject(t.toolArgs), result: t.result, hasResult: t.result !== undefined, clean: isClean(t), errored: Boolean(t.toolCallError), exec: t });
    }
    for (const m of (o.messages ?? []) as readonly RunMessage[]) {
      if (!m || m.fromHistory) continue;
      for (const call of m.toolCalls ?? []) {
        const name = call?.function?.name;
        if (name) requested.push({ tool: name, member, args: call.function.arguments === undefined ? {} : argsObject(call.function.arguments) });
      }
    }
    for (const m of o.memberResponses ?? []) visit(m, depth + 1, seen);
  };
  visit(output, 0, new Set());
  return { steps, requests: requested.filter((r) => !executed.has(r.tool)), members };
}
