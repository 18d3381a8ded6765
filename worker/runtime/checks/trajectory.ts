import type { RunOutput } from "../../../shared/case/agent.ts";
import type { ToolCallExpectation, ToolCallOrder } from "../../../shared/case/tool-call-matchers.ts";
import type { ReliabilityDetails, TrajectoryFailure, TrajectoryStep } from "../../../shared/wire/result-data.ts";
import { compileCalls, describeCall, matchesCall, matchScore, type CompiledCall } from "./trajectory-match.ts";
import { callsMade, collect, errorDetail, type Request, type Step } from "./trajectory-steps.ts";

export { isClean } from "./trajectory-steps.ts";

/**
 * The trajectory check (the reliability check with argument matchers, order modes, forbidden
 * calls and bounds): what the agent did, step by step, against what the case expects. Pure; no
 * I/O. Evidence is executions, not requests: an expectation is met only by a call that ran
 * cleanly, and an errored or paused attempt of an expected call counts for nothing (a clean retry
 * still passes), as Agno's check has it. Team members' calls count too, at every depth, and an
 * expected name `member/tool` only counts that member's calls (the member output's `agentId`).
 *
 * Steps are numbered from 1 over the run's own executions, then each member's (depth first): the
 * order the output and a stored transcript keep them in (there is no clock across members).
 */

/** The annotation on a missing tool that was attempted but never ran cleanly (the dash is U+2014). */
export const REFUSED_ANNOTATION = "(requested but refused/errored \u2014 execution matching, new in 2.8.0)";

/** What {@link evaluateTrajectory} checks. Only `expectedToolCalls` and `allowAdditionalToolCalls` are required. */
export interface TrajectoryOptions {
  /** Expected calls (names or matchers); may be empty when other checks are set. */
  expectedToolCalls: readonly ToolCallExpectation[];
  /** `false`: a call to a tool no expectation names fails the check (Agno's strict matching). */
  allowAdditionalToolCalls: boolean;
  /** Default `any`. */
  toolCallOrder?: ToolCallOrder | null;
  /** Calls that must not be made (ran, errored, or only requested). Default none. */
  forbiddenToolCalls?: readonly ToolCallExpectation[] | null;
  /** At most this many executions (clean or not). Default no bound. */
  maxToolCalls?: number | null;
  /** No execution may end in error. Default false. */
  toolCallsMustSucceed?: boolean | null;
}

/** The most failures a reason lists; the trajectory keeps every one. */
const REASON_FAILURES = 5;

/**
 * One grading's state, handed to the functions below (plain functions over one object: closures
 * made afresh for every case cost more than the check itself).
 */
interface Grading {
  steps: Step[];
  requests: Request[];
  members: Set<string>;
  expected: CompiledCall[];
  /** Per expectation: its name is `member/tool` and the run has that member. */
  qualified: boolean[];
  /** Per step: some expectation names its tool. */
  named: Uint8Array;
  /** Per step: it ran cleanly and met some expectation in full. */
  matched: Uint8Array;
  /** Per expectation: the clean steps that meet it in full, in order. */
  matches: number[][];
  /** Per step: the expectation it was counted for, or -1. */
  assigned: Int32Array;
  /** Per expectation: it was not met. */
  unmet: Uint8Array;
  failures: TrajectoryFailure[];
}

/** Whether a call of `tool` (by `member`) is one `c` names. */
function names(c: CompiledCall, qualified: boolean, tool: string, member: string | null): boolean {
  return qualified ? member === c.member && tool === c.tool : tool === c.name;
}

function fail(g: Grading, kind: TrajectoryFailure["kind"], expectation: number | null, step: number, message: string): void {
  // A request repeated (the model asked twice) is one failure, not two.
  if (step < 0) {
    for (const f of g.failures) if (f.step === null && f.message === message) return;
  }
  g.failures.push({ kind, expectation, step: step < 0 ? null : step + 1, message });
}

function requestNamed(g: Grading, r: Request): boolean {
  for (let i = 0; i < g.expected.length; i++) if (names(g.expected[i]!, g.qualified[i]!, r.tool, r.member)) return true;
  return false;
}

function describeStep(step: Step, like: CompiledCall | null): string {
  return describeCall(step.tool, step.member, step.args, step.result, like);
}

/** Grades the tool calls of one output. */
export function evaluateTrajectory(output: RunOutput, options: TrajectoryOptions): ReliabilityDetails {
  const { steps, requests, members } = collect(output);
  const expected = compileCalls(options.expectedToolCalls, "expectedToolCalls");
  const forbidden = options.forbiddenToolCalls && options.forbiddenToolCalls.length > 0 ? compileCalls(options.forbiddenToolCalls, "forbiddenToolCalls") : [];
  const order: ToolCallOrder = options.toolCallOrder ?? "any";
  const strict = order === "exact" || (!options.allowAdditionalToolCalls && expected.length > 0);
  const n = steps.length;
  const g: Grading = {
    steps,
    requests,
    members,
    expected,
    qualified: expected.map((c) => c.member !== null && members.has(c.member)),
    named: new Uint8Array(n),
    matched: new Uint8Array(n),
    matches: expected.map(() => []),
    assigned: new Int32Array(n).fill(-1),
    unmet: new Uint8Array(expected.length),
    failures: [],
  };
  // Which expectations name each step, and which clean steps meet each expectation in full.
  for (let s = 0; s < n; s++) {
    const step = steps[s]!;
    for (let i = 0; i < expected.length; i++) {
      const e = expected[i]!;
      if (!names(e, g.qualified[i]!, step.tool, step.member)) continue;
      g.named[s] = 1;
      if (step.clean && matchesCall(e, step.args, step.result, step.hasResult)) {
        g.matches[i]!.push(s);
        g.matched[s] = 1;
      }
    }
  }

  if (order === "exact") exactOrder(g);
  else if (order === "in_order") inOrder(g);
  else anyOrder(g);

  // Agno's strict matching: a call to a tool no expectation names fails (exact mode has said so already).
  if (strict) {
    if (order !== "exact") {
      for (let s = 0; s < n; s++) if (!g.named[s]) fail(g, "unexpected", null, s, `unexpected call ${describeStep(steps[s]!, null)} at step ${s + 1} (only the expected tools may run)`);
    }
    for (const r of requests) if (!requestNamed(g, r)) fail(g, "unexpected", null, -1, `unexpected call ${r.member ? `${r.member}/` : ""}${r.tool} requested (it never ran; only the expected tools may run)`);
  }

  const forbiddenHit = new Uint8Array(n);
  const forbiddenRequests = new Set<Request>();
  for (const f of forbidden) {
    const q = f.member !== null && members.has(f.member);
    for (let s = 0; s < n; s++) {
      const step = steps[s]!;
      if (!names(f, q, step.tool, step.member) || !matchesCall(f, step.args, step.result, step.hasResult)) continue;
      forbiddenHit[s] = 1;
      fail(g, "forbidden", f.index, s, `forbidden ${f.label} called at step ${s + 1}: ${describeStep(step, f)}`);
    }
    for (const r of requests) {
      if (!names(f, q, r.tool, r.member) || f.result || !matchesCall(f, r.args, undefined, false)) continue;
      forbiddenRequests.add(r);
      fail(g, "forbidden", f.index, -1, `forbidden ${f.label} requested (it never ran)`);
    }
  }

  const max = options.maxToolCalls ?? null;
  if (max !== null && n > max) fail(g, "max_tool_calls", null, max, `${n} tool calls, at most ${max} allowed (the first one over at step ${max + 1})`);
  if (options.toolCallsMustSucceed) {
    for (let s = 0; s < n; s++) {
      const step = steps[s]!;
      if (step.errored) fail(g, "tool_error", null, s, `${describeStep(step, null)} ended in error at step ${s + 1}${errorDetail(step)}`);
    }
  }

  const lists = agnoLists(g, strict, forbiddenHit, forbiddenRequests);
  const failed = new Uint8Array(n);
  for (const f of g.failures) if (f.step !== null) failed[f.step - 1] = 1;
  const trajectorySteps: TrajectoryStep[] = new Array<TrajectoryStep>(n);
  for (let s = 0; s < n; s++) {
    const step = steps[s]!;
    const a = g.assigned[s]!;
    trajectorySteps[s] = {
      step: s + 1,
      tool: step.tool,
      member: step.member,
      outcome: step.clean ? "ok" : step.errored ? "error" : "paused",
      verdict: failed[s] ? "failed" : a >= 0 ? "matched" : "other",
      expectation: a >= 0 ? a : null,
    };
  }
  const failures = g.failures;
  return {
    passed: failures.length === 0,
    ...lists,
    reason: failures.length === 0 ? passReason(expected.length, order, forbidden.length > 0, max, Boolean(options.toolCallsMustSucceed), n) : failureReason(failures),
    trajectory: { order, steps: trajectorySteps, failures },
  };
}

/** The failure of an expectation no call met: the closest call of that name, or why there is none. */
function unmatched(g: Grading, i: number): void {
  const e = g.expected[i]!;
  const q = g.qualified[i]!;
  let best = -1;
  let bestScore = -1;
  let attempt = -1;
  for (let s = 0; s < g.steps.length; s++) {
    const step = g.steps[s]!;
    if (!names(e, q, step.tool, step.member)) continue;
    if (!step.clean) {
      if (attempt < 0) attempt = s;
      continue;
    }
    const score = matchScore(e, step.args, step.result, step.hasResult);
    if (score > bestScore) {
      best = s;
      bestScore = score;
    }
  }
  if (best >= 0) return fail(g, "mismatch", i, best, `expected ${e.label}, got ${describeStep(g.steps[best]!, e)} at step ${best + 1}`);
  if (attempt >= 0) {
    const step = g.steps[attempt]!;
    return fail(g, "missing", i, attempt, `expected ${e.label}: ${describeStep(step, e)} at step ${attempt + 1} ${step.errored ? "ended in error" : "is paused"}`);
  }
  for (const r of g.requests) if (names(e, q, r.tool, r.member)) return fail(g, "missing", i, -1, `expected ${e.label}: requested, but it never ran`);
  fail(g, "missing", i, -1, `expected ${e.label}: never called (${callsMade(g.steps)})`);
}

/** `any`: each expectation met by some call (exactly `times` calls when it says so). */
function anyOrder(g: Grading): void {
  const seen = new Map<string, boolean>();
  for (let i = 0; i < g.expected.length; i++) {
    const e = g.expected[i]!;
    const matches = g.matches[i]!;
    for (const s of matches) if (g.assigned[s]! < 0) g.assigned[s] = i;
    const same = seen.get(e.label);
    // The same expectation twice is met by the same calls (Agno: duplicates are met by one call).
    if (same !== undefined) {
      if (!same) g.unmet[i] = 1;
      continue;
    }
    const count = matches.length;
    const met = e.times === null ? count > 0 : count === e.times;
    seen.set(e.label, met);
    if (met) continue;
    g.unmet[i] = 1;
    if (count === 0) {
      unmatched(g, i);
      continue;
    }
    fail(g, "times", i, count > e.times! ? matches[e.times!]! : -1, `expected ${e.label}, got ${count} matching call${count === 1 ? "" : "s"} (step${count === 1 ? "" : "s"} ${matches.map((s) => s + 1).join(", ")})`);
  }
}

/** `in_order`: the expectations met in this order by distinct calls, the earliest each time. */
function inOrder(g: Grading): void {
  let cursor = -1;
  let previous: CompiledCall | null = null;
  // Expectations with `times` met: their matching calls before the next expectation's call are counted then.
  const pending: { i: number; last: number }[] = [];
  const settle = (until: number, next: CompiledCall | null): void => {
    for (const p of pending) {
      const e = g.expected[p.i]!;
      let extra = -1;
      let extras = 0;
      for (const s of g.matches[p.i]!) {
        if (s <= p.last || s >= until) continue;
        if (extra < 0) extra = s;
        extras++;
      }
      if (extras === 0) continue;
      g.unmet[p.i] = 1;
      const got = e.times! + extras;
      fail(g, "times", p.i, extra, `expected ${e.label}${next ? ` before ${next.label}` : ""}, got ${got} matching call${got === 1 ? "" : "s"} (the first extra one at step ${extra + 1})`);
    }
    pending.length = 0;
  };
  for (let i = 0; i < g.expected.length; i++) {
    const e = g.expected[i]!;
    const need = e.times ?? 1;
    const all = g.matches[i]!;
    const after = all.filter((s) => s > cursor);
    if (after.length >= need) {
      if (need > 0) {
        settle(after[0]!, e);
        for (let k = 0; k < need; k++) g.assigned[after[k]!] = i;
        cursor = after[need - 1]!;
        previous = e;
      }
      if (e.times !== null) pending.push({ i, last: cursor });
      continue;
    }
    g.unmet[i] = 1;
    if (after.length > 0) {
      fail(g, "times", i, -1, `expected ${e.label}${previous ? ` after ${previous.label} at step ${cursor + 1}` : ""}, got ${after.length} matching call${after.length === 1 ? "" : "s"} (step${after.length === 1 ? "" : "s"} ${after.map((s) => s + 1).join(", ")})`);
    } else if (all.length > 0 && previous) {
      fail(g, "order", i, all[0]!, `expected ${e.label} after ${previous.label} at step ${cursor + 1}, got it at step${all.length === 1 ? "" : "s"} ${all.map((s) => s + 1).join(", ")} (out of order)`);
    } else unmatched(g, i);
  }
  settle(g.steps.length, null);
}

/** `exact`: exactly the expected calls, in order (an errored attempt of an expected tool is not a call). */
function exactOrder(g: Grading): void {
  const calls: number[] = [];
  for (let s = 0; s < g.steps.length; s++) if (g.steps[s]!.clean || !g.named[s]) calls.push(s);
  const sequence: number[] = [];
  for (let i = 0; i < g.expected.length; i++) for (let k = 0; k < (g.expected[i]!.times ?? 1); k++) sequence.push(i);
  const unmetFrom = (j: number): void => {
    for (let k = j; k < sequence.length; k++) g.unmet[sequence[k]!] = 1;
  };
  for (let j = 0; j < Math.max(calls.length, sequence.length); j++) {
    const s = calls[j];
    const i = sequence[j];
    if (s === undefined) {
      unmetFrom(j);
      return fail(g, "exact", i!, -1, `expected ${g.expected[i!]!.label} as call ${j + 1} of ${sequence.length}, got no call there (${calls.length} call${calls.length === 1 ? "" : "s"} made)`);
    }
    const step = g.steps[s]!;
    if (i === undefined) return fail(g, "exact", null, s, `expected exactly ${sequence.length} call${sequence.length === 1 ? "" : "s"}, got another: ${describeStep(step, null)} at step ${s + 1}`);
    const e = g.expected[i]!;
    const same = names(e, g.qualified[i]!, step.tool, step.member);
    if (step.clean && same && matchesCall(e, step.args, step.result, step.hasResult)) {
      g.assigned[s] = i;
      continue;
    }
    unmetFrom(j);
    const how = step.clean ? "" : step.errored ? " (it ended in error)" : " (it is paused)";
    return fail(g, "exact", i, s, `expected ${e.label} as call ${j + 1} of ${sequence.length}, got ${describeStep(step, same ? e : null)} at step ${s + 1}${how}`);
  }
}

/** The lists Agno's check reports (passed, failed, additional, missing), from the same evidence. */
function agnoLists(g: Grading, strict: boolean, forbiddenHit: Uint8Array, forbiddenRequests: ReadonlySet<Request>): Pick<ReliabilityDetails, "passedToolCalls" | "failedToolCalls" | "additionalToolCalls" | "missingToolCalls"> {
  const passedToolCalls: string[] = [];
  const failedToolCalls: string[] = [];
  const additionalToolCalls: string[] = [];
  for (let s = 0; s < g.steps.length; s++) {
    const tool = g.steps[s]!.tool;
    if (g.matched[s]) passedToolCalls.push(tool);
    if ((strict && !g.named[s]) || forbiddenHit[s]) failedToolCalls.push(tool || "?");
    else if (!g.named[s]) additionalToolCalls.push(tool || "?");
  }
  if (g.requests.length > 0) {
    const requested = new Map<string, boolean>();
    for (const r of g.requests) if (!requestNamed(g, r)) requested.set(r.tool, (requested.get(r.tool) ?? false) || strict || forbiddenRequests.has(r));
    for (const name of [...requested.keys()].sort()) (requested.get(name) ? failedToolCalls : additionalToolCalls).push(name);
  }
  const missingToolCalls: string[] = [];
  const listed = new Set<string>();
  for (let i = 0; i < g.expected.length; i++) {
    if (!g.unmet[i]) continue;
    const e = g.expected[i]!;
    if (listed.has(e.label)) continue;
    listed.add(e.label);
    let clean = false;
    let attempted = false;
    for (const step of g.steps) {
      if (!names(e, g.qualified[i]!, step.tool, step.member)) continue;
      if (step.clean) clean = true;
      else attempted = true;
    }
    if (!attempted && !clean) attempted = g.requests.some((r) => names(e, g.qualified[i]!, r.tool, r.member));
    missingToolCalls.push(!clean && attempted ? `${e.label} ${REFUSED_ANNOTATION}` : e.label);
  }
  return { passedToolCalls, failedToolCalls, additionalToolCalls, missingToolCalls };
}

/** The failures in one line: the first few, then how many more. */
function failureReason(failures: readonly TrajectoryFailure[]): string {
  const shown = failures.slice(0, REASON_FAILURES).map((f) => f.message);
  const more = failures.length - shown.length;
  return more > 0 ? `${shown.join("; ")}; and ${more} more` : shown.join("; ");
}

function passReason(expected: number, order: ToolCallOrder, forbidden: boolean, max: number | null, mustSucceed: boolean, calls: number): string {
  const parts: string[] = [];
  if (expected > 0) parts.push(`${expected === 1 ? "the expected call" : `all ${expected} expected calls`} matched${order === "exact" ? ", exactly and in order" : order === "in_order" ? " in order" : ""}`);
  if (forbidden) parts.push("no forbidden call");
  if (max !== null) parts.push(`at most ${max} calls`);
  if (mustSucceed) parts.push("no call ended in error");
  return `${parts.join("; ")} (${calls} tool call${calls === 1 ? "" : "s"})`;
}

