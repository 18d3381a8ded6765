import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { evaluateReliability } from "../../../../index.ts";
import type { RunMessage, RunOutput, ToolExecution } from "../../../../index.ts";

/**
 * Reliability semantics (spec H), ported from Agno's test_reliability_eval.py: evidence is what
 * actually executed, requests only annotate failures and police strict mode.
 */

const ANNOTATION = "(requested but refused/errored \u2014 execution matching, new in 2.8.0)";
const annotated = (name: string): string => `${name} ${ANNOTATION}`;

const ok = (toolName: string, extra: Partial<ToolExecution> = {}): ToolExecution => ({ toolName, toolArgs: {}, result: "ok", toolCallError: null, isPaused: false, ...extra });
const errored = (toolName: string): ToolExecution => ({ toolName, toolArgs: {}, result: "boom", toolCallError: true, isPaused: false });
const paused = (toolName: string): ToolExecution => ({ toolName, toolArgs: {}, result: null, toolCallError: null, isPaused: true });
const request = (names: string[], fromHistory = false): RunMessage => ({
  role: "assistant",
  content: null,
  toolCalls: names.map((name, i) => ({ id: `call_${i}`, function: { name, arguments: "{}" } })),
  fromHistory,
});
const run = (parts: Partial<RunOutput> = {}): RunOutput => ({ content: "done", status: "completed", ...parts });
const strict = (expectedToolCalls: string[]) => ({ expectedToolCalls, allowAdditionalToolCalls: false });
const lenient = (expectedToolCalls: string[]) => ({ expectedToolCalls, allowAdditionalToolCalls: true });

describe("evaluateReliability: matching", () => {
  test("an exact match passes", () => {
    const r = evaluateReliability(run({ tools: [ok("search"), ok("calculate")] }), strict(["search", "calculate"]));
    assert.deepEqual(r, {
      passed: true,
      passedToolCalls: ["search", "calculate"],
      failedToolCalls: [],
      additionalToolCalls: [],
      missingToolCalls: [],
      reason: "all 2 expected calls matched (2 tool calls)",
      trajectory: {
        order: "any",
        steps: [
          { step: 1, tool: "search", member: null, outcome: "ok", verdict: "matched", expectation: 0 },
          { step: 2, tool: "calculate", member: null, outcome: "ok", verdict: "matched", expectation: 1 },
        ],
        failures: [],
      },
    });
  });

  test("strict mode fails on an unexpected tool", () => {
    const r = evaluateReliability(run({ tools: [ok("search"), ok("delete_file")] }), strict(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.failedToolCalls, ["delete_file"]);
    assert.deepEqual(r.additionalToolCalls, []);
    assert.deepEqual(r.missingToolCalls, []);
  });

  test("a missing expected tool is reported as missing", () => {
    const r = evaluateReliability(run({ tools: [ok("search")] }), strict(["search", "calculate"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.missingToolCalls, ["calculate"]);
  });

  test("no tools at all: every expected tool is missing, in declared order", () => {
    for (const tools of [undefined, null, []] as const) {
      const r = evaluateReliability(run({ tools }), lenient(["weather", "search"]));
      assert.equal(r.passed, false);
      assert.deepEqual(r.missingToolCalls, ["weather", "search"]);
      assert.deepEqual(r.passedToolCalls, []);
    }
  });

  test("subset mode passes with extras, listed as additional", () => {
    const r = evaluateReliability(run({ tools: [ok("lookup"), ok("search"), ok("format")] }), lenient(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.additionalToolCalls, ["lookup", "format"]);
    assert.deepEqual(r.failedToolCalls, []);
  });

  test("subset mode still fails on a missing tool", () => {
    const r = evaluateReliability(run({ tools: [ok("lookup")] }), lenient(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, ["search"]);
    assert.deepEqual(r.additionalToolCalls, ["lookup"]);
  });

  test("duplicate expected names are met by one clean call", () => {
    const r = evaluateReliability(run({ tools: [ok("search")] }), strict(["search", "search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.missingToolCalls, []);
  });

  test("two clean calls give two passed entries", () => {
    const r = evaluateReliability(run({ tools: [ok("search"), ok("search")] }), strict(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["search", "search"]);
  });
});

describe("evaluateReliability: executions, not requests", () => {
  test("a refused call (requested, never executed) fails with the annotated missing entry", () => {
    const output = run({
      tools: [],
      messages: [
        { role: "user", content: "find it" },
        request(["search"]),
        { role: "tool", content: "Tool call limit reached. Cannot call search." },
      ],
    });
    const r = evaluateReliability(output, lenient(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, []);
    assert.deepEqual(r.missingToolCalls, ["search (requested but refused/errored \u2014 execution matching, new in 2.8.0)"]);
    assert.ok(r.missingToolCalls[0]!.startsWith("search "));
    assert.ok(r.missingToolCalls[0]!.includes("\u2014"), "the annotation uses an em dash (U+2014)");
  });

  test("an errored execution fails, annotated", () => {
    const r = evaluateReliability(run({ tools: [errored("search")], messages: [request(["search"])] }), strict(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, []);
    assert.deepEqual(r.failedToolCalls, [], "an expected call that errored is recorded nowhere");
    assert.deepEqual(r.missingToolCalls, [annotated("search")]);
  });

  test("an errored execution is annotated even without a matching request message", () => {
    const r = evaluateReliability(run({ tools: [errored("search")] }), strict(["search"]));
    assert.deepEqual(r.missingToolCalls, [annotated("search")]);
  });

  test("toolCallError null (and other falsy values) counts as clean", () => {
    for (const toolCallError of [null, undefined, false, "", 0]) {
      const r = evaluateReliability(run({ tools: [ok("search", { toolCallError })] }), strict(["search"]));
      assert.equal(r.passed, true, `toolCallError=${String(toolCallError)}`);
      assert.deepEqual(r.passedToolCalls, ["search"]);
    }
  });

  test("an approved HITL call (confirmed, no error, not paused) passes", () => {
    const r = evaluateReliability(run({ tools: [ok("delete_file", { result: "deleted" })] }), strict(["delete_file"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["delete_file"]);
  });

  test("a rejected HITL call (error set) fails", () => {
    const r = evaluateReliability(run({ tools: [{ toolName: "delete_file", toolCallError: true, result: "rejected by user" }] }), strict(["delete_file"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, [annotated("delete_file")]);
  });

  test("a still-paused call fails, is annotated and is not in passed", () => {
    const r = evaluateReliability(run({ status: "paused", tools: [paused("delete_file")] }), lenient(["delete_file"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, []);
    assert.deepEqual(r.missingToolCalls, [annotated("delete_file")]);
  });

  test("an errored call followed by a clean retry passes", () => {
    const r = evaluateReliability(run({ tools: [errored("search"), ok("search")], messages: [request(["search"]), request(["search"])] }), strict(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.failedToolCalls, []);
    assert.deepEqual(r.missingToolCalls, []);
  });

  test("strict mode fails on an unexpected call even when that call errored", () => {
    const r = evaluateReliability(run({ tools: [ok("search"), errored("delete_file")] }), strict(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.passedToolCalls, ["search"]);
    assert.deepEqual(r.failedToolCalls, ["delete_file"]);
  });

  test("a never-requested missing tool stays a bare name, beside an annotated one", () => {
    const r = evaluateReliability(run({ tools: [errored("search")], messages: [request(["search"])] }), lenient(["search", "weather"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, [annotated("search"), "weather"]);
  });

  test("strict mode fails on a refused unexpected request", () => {
    const output = run({ tools: [ok("search")], messages: [request(["search", "delete_file"])] });
    const r = evaluateReliability(output, strict(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.failedToolCalls, ["delete_file"]);
    assert.deepEqual(r.passedToolCalls, ["search"]);
  });

  test("lenient mode lists a refused unexpected request as additional and passes", () => {
    const output = run({ tools: [ok("search")], messages: [request(["search", "delete_file"])] });
    const r = evaluateReliability(output, lenient(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.additionalToolCalls, ["delete_file"]);
    assert.deepEqual(r.failedToolCalls, []);
  });

  test("request-only names are added sorted, after the executions in execution order", () => {
    const output = run({
      tools: [ok("zzz_exec"), ok("search"), ok("aaa_exec")],
      messages: [request(["zeta", "search"]), request(["alpha", "mid"])],
    });
    const r = evaluateReliability(output, lenient(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.additionalToolCalls, ["zzz_exec", "aaa_exec", "alpha", "mid", "zeta"]);
    const s = evaluateReliability(output, strict(["search"]));
    assert.deepEqual(s.failedToolCalls, ["zzz_exec", "aaa_exec", "alpha", "mid", "zeta"]);
  });

  test("a request for a name that also executed is not counted twice", () => {
    const output = run({ tools: [ok("lookup"), ok("search")], messages: [request(["lookup", "search"])] });
    const r = evaluateReliability(output, lenient(["search"]));
    assert.deepEqual(r.additionalToolCalls, ["lookup"]);
  });
});

describe("evaluateReliability: history", () => {
  test("fromHistory requests are ignored: strict mode passes", () => {
    const output = run({
      tools: [ok("search")],
      messages: [request(["delete_file", "send_email"], true), { role: "user", content: "today" }, request(["search"])],
    });
    const r = evaluateReliability(output, strict(["search"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.failedToolCalls, []);
    assert.deepEqual(r.additionalToolCalls, []);
  });

  test("fromHistory requests do not annotate a missing tool", () => {
    const output = run({ tools: [], messages: [request(["search"], true)] });
    const r = evaluateReliability(output, strict(["search"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, ["search"]);
  });
});

describe("evaluateReliability: teams", () => {
  const delegate = (): ToolExecution => ok("delegate_task_to_member");

  test("a team member's executions match", () => {
    const team = run({ tools: [delegate()], memberResponses: [run({ tools: [ok("multiply")] })] });
    const r = evaluateReliability(team, lenient(["multiply"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["multiply"]);
    assert.deepEqual(r.additionalToolCalls, ["delegate_task_to_member"]);
  });

  test("a nested grandchild's executions match", () => {
    const team = run({
      tools: [delegate()],
      memberResponses: [run({ tools: [delegate()], memberResponses: [run({ tools: [ok("multiply")] })] })],
    });
    const r = evaluateReliability(team, lenient(["multiply"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["multiply"]);
  });

  test("strict mode: delegate_task_to_member at depth 2 fails unless listed", () => {
    const team = run({
      tools: [delegate()],
      memberResponses: [run({ tools: [delegate()], memberResponses: [run({ tools: [ok("multiply")] })] })],
    });
    const unlisted = evaluateReliability(team, strict(["multiply"]));
    assert.equal(unlisted.passed, false);
    assert.deepEqual(unlisted.failedToolCalls, ["delegate_task_to_member", "delegate_task_to_member"]);
    assert.deepEqual(unlisted.passedToolCalls, ["multiply"]);

    const listed = evaluateReliability(team, strict(["delegate_task_to_member", "multiply"]));
    assert.equal(listed.passed, true);
    assert.deepEqual(listed.failedToolCalls, []);
    assert.deepEqual(listed.passedToolCalls, ["delegate_task_to_member", "delegate_task_to_member", "multiply"]);
  });

  test("a member's request messages annotate a missing tool", () => {
    const team = run({ tools: [delegate()], memberResponses: [run({ tools: [], messages: [request(["multiply"])] })] });
    const r = evaluateReliability(team, lenient(["multiply"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, [annotated("multiply")]);
  });

  test("an errored member call fails the team", () => {
    const team = run({ tools: [delegate()], memberResponses: [run({ tools: [errored("multiply")] })] });
    const r = evaluateReliability(team, lenient(["multiply"]));
    assert.equal(r.passed, false);
    assert.deepEqual(r.missingToolCalls, [annotated("multiply")]);
  });

  test("a member output that refers back to its parent does not loop forever", () => {
    const member: { tools: ToolExecution[]; memberResponses: RunOutput[] } = { tools: [ok("multiply")], memberResponses: [] };
    const team: RunOutput = { status: "completed", tools: [delegate()], memberResponses: [member] };
    member.memberResponses.push(team);
    const r = evaluateReliability(team, lenient(["multiply"]));
    assert.equal(r.passed, true);
    assert.deepEqual(r.passedToolCalls, ["multiply"]);
    assert.deepEqual(r.additionalToolCalls, ["delegate_task_to_member"]);
  });
});

describe("evaluateReliability: purity", () => {
  test("the output is not modified and the same input gives the same verdict", () => {
    const output = run({ tools: [errored("search"), ok("search"), ok("extra")], messages: [request(["other"])] });
    const snapshot = structuredClone(output);
    const a = evaluateReliability(output, strict(["search"]));
    const b = evaluateReliability(output, strict(["search"]));
    assert.deepEqual(output, snapshot);
    assert.deepEqual(a, b);
    assert.notEqual(a.passedToolCalls, b.passedToolCalls, "each call returns fresh lists");
  });
});
