// The trajectory check (worker/runtime/checks/trajectory.ts, through evaluateReliability): each
// matcher kind, the three order modes and Agno's strict option, forbidden calls, the bounds, team
// members, and reasons that point at the step. Pure: plain outputs in, verdicts out.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { evaluateReliability, type RunMessage, type RunOutput, type ToolExecution } from "../../../../index.ts";
import type { ReliabilityOptions } from "../../../../worker/runtime/checks/reliability.ts";
import { TrajectoryPredicateError } from "../../../../worker/runtime/checks/trajectory-match.ts";

const call = (toolName: string, toolArgs: Record<string, unknown> = {}, result: unknown = "ok", extra: Partial<ToolExecution> = {}): ToolExecution => ({ toolName, toolArgs, result, ...extra });
const errored = (toolName: string, toolArgs: Record<string, unknown> = {}, error: unknown = "timeout talking to the API"): ToolExecution => ({ toolName, toolArgs, result: null, toolCallError: error });
const run = (tools: ToolExecution[], extra: Partial<RunOutput> = {}): RunOutput => ({ content: "done", status: "completed", tools, ...extra });
const request = (name: string, args: Record<string, unknown> = {}): RunMessage => ({ role: "assistant", toolCalls: [{ id: "c", function: { name, arguments: JSON.stringify(args) } }] });
const check = (output: RunOutput, options: Partial<ReliabilityOptions>) => evaluateReliability(output, { expectedToolCalls: [], allowAdditionalToolCalls: true, ...options });
const verdicts = (r: ReturnType<typeof check>) => r.trajectory!.steps.map((s) => s.verdict);

const weather = run([call("search", { q: "flights to Paris" }), call("get_weather", { city: "Paris", units: "c" }, "rain, 12C"), call("book", { id: 7, seats: ["12A"] }, { ok: true })]);

describe("argument matchers", () => {
  test("the issue's example: the right tool with the wrong argument, pointed at its step", () => {
    const r = check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }] });
    assert.equal(r.passed, false);
    assert.equal(r.reason, 'expected get_weather(city="London"), got get_weather(city="Paris", ...) at step 2');
    assert.deepEqual(r.trajectory!.failures, [{ kind: "mismatch", expectation: 0, step: 2, message: r.reason }]);
    assert.deepEqual(verdicts(r), ["other", "failed", "other"]);
    assert.deepEqual(r.missingToolCalls, ['get_weather(city="London")'], "not annotated: a clean call of that tool ran");
  });

  test("deep equality: listed arguments only (unlisted ones are free), nested values exactly", () => {
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { id: 7, seats: ["12A"] } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { seats: ["12A", "12B"] } }] }).passed, false);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { id: "7" } }] }).passed, false, "7 is not '7'");
    const nested = run([call("create", { user: { name: "Ann", roles: ["admin"], note: undefined } })]);
    assert.equal(check(nested, { expectedToolCalls: [{ name: "create", args: { user: { name: "Ann", roles: ["admin"] } } }] }).passed, true, "an undefined value is an absent key");
    assert.equal(check(nested, { expectedToolCalls: [{ name: "create", args: { user: { name: "Ann" } } }] }).passed, false, "inside a value, equality is exact");
    assert.equal(check(run([call("f", { x: Number.NaN })]), { expectedToolCalls: [{ name: "f", args: { x: Number.NaN } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { missing: undefined } }] }).passed, true, "undefined: the argument must be absent");
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: undefined } }] }).passed, false);
  });

  test("a RegExp (code) and { $regex, $flags } (data) test string values; a global flag keeps no state", () => {
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: /^par/i } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: { $regex: "^par", $flags: "i" } } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: { $regex: "^par" } } }] }).passed, false, "case matters without the i flag");
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { id: /7/ } }] }).passed, false, "a regex tests text only, not the number 7");
    const twice = run([call("s", { q: "abc" }), call("s", { q: "abc" })]);
    const r = check(twice, { expectedToolCalls: [{ name: "s", args: { q: /abc/g }, times: 2 }] });
    assert.equal(r.passed, true, "both calls match although the pattern is global");
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { seats: [{ $regex: "^12" }] } }] }).passed, true, "matchers nest inside lists and objects");
  });

  test("a predicate (code): truthy is a match; one that throws makes the check undecidable, naming it", () => {
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { id: (v: unknown) => typeof v === "number" && v > 5 } }] }).passed, true);
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", args: { id: (v: unknown) => v === 8 } }] }).passed, false);
    const boom = () => check(weather, { expectedToolCalls: ["search", { name: "book", args: { id: () => { throw new TypeError("nope"); } } }] });
    assert.throws(boom, (err: unknown) => err instanceof TrajectoryPredicateError && /^the predicate of expectedToolCalls\[1\]\.args\.id threw TypeError: nope$/.test((err as Error).message));
  });

  test("result: what the call returned, by deep equality or regex; an errored call never matches", () => {
    assert.equal(check(weather, { expectedToolCalls: [{ name: "book", result: { ok: true } }] }).passed, true);
    const r = check(weather, { expectedToolCalls: [{ name: "get_weather", args: { city: "Paris" }, result: /sun/ }] });
    assert.equal(r.reason, 'expected get_weather(city="Paris") -> /sun/, got get_weather(city="Paris", ...) -> "rain, 12C" at step 2');
    assert.equal(check(run([errored("book")]), { expectedToolCalls: [{ name: "book", result: null }] }).passed, false);
  });

  test("arguments given as JSON text are read as an object", () => {
    const output = run([{ toolName: "get_weather", toolArgs: '{"city":"Oslo"}' as unknown as Record<string, unknown>, result: "snow" }]);
    assert.equal(check(output, { expectedToolCalls: [{ name: "get_weather", args: { city: "Oslo" } }] }).passed, true);
  });

  test("the closest call is the one with most of the listed arguments right", () => {
    const output = run([call("book", { from: "AMS", to: "NYC", day: "mon" }), call("book", { from: "LHR", to: "CDG", day: "tue" }), call("book", { from: "LHR", to: "CDG", day: "mon" })]);
    const r = check(output, { expectedToolCalls: [{ name: "book", args: { from: "LHR", to: "CDG", day: "wed" } }] });
    assert.equal(r.reason, 'expected book(from="LHR", to="CDG", day="wed"), got book(from="LHR", to="CDG", day="tue") at step 2');
  });

  test("times (any order): exactly N matching calls in the run", () => {
    const output = run([call("s", { q: 1 }), call("t"), call("s", { q: 2 }), call("s", { q: 1 })]);
    assert.equal(check(output, { expectedToolCalls: [{ name: "s", times: 3 }] }).passed, true);
    const over = check(output, { expectedToolCalls: [{ name: "s", args: { q: 1 }, times: 1 }] });
    assert.equal(over.reason, "expected s(q=1) 1 time, got 2 matching calls (steps 1, 4)");
    assert.equal(over.trajectory!.failures[0]!.step, 4, "the call one too many");
    assert.equal(check(output, { expectedToolCalls: [{ name: "s", times: 4 }] }).reason, "expected s 4 times, got 3 matching calls (steps 1, 3, 4)");
    assert.equal(check(output, { expectedToolCalls: [{ name: "t", times: 0 }] }).reason, "expected t 0 times, got 1 matching call (step 2)");
    assert.equal(check(output, { expectedToolCalls: [{ name: "u", times: 0 }] }).passed, true);
    assert.equal(check(output, { expectedToolCalls: [{ name: "s", args: { q: 3 }, times: 2 }] }).reason, "expected s(q=3) 2 times, got s(q=1) at step 1");
  });
});

describe("order modes", () => {
  const trip = run([call("check_stock", { sku: "A" }), call("log"), call("charge_card", { amount: 10 }), call("ship")]);

  test("any: the calls in any order (today's subset rule)", () => {
    assert.equal(check(trip, { expectedToolCalls: ["ship", "check_stock"] }).passed, true);
  });

  test("in_order: the expected calls in this order, others may come between", () => {
    const r = check(trip, { expectedToolCalls: ["check_stock", "charge_card", "ship"], toolCallOrder: "in_order" });
    assert.equal(r.passed, true);
    assert.equal(r.reason, "all 3 expected calls matched in order (4 tool calls)");
    assert.deepEqual(r.trajectory!.steps.map((s) => s.expectation), [0, null, 1, 2]);
    const charged = run([call("charge_card", { amount: 10 }), call("check_stock", { sku: "A" })]);
    const wrong = check(charged, { expectedToolCalls: ["check_stock", "charge_card"], toolCallOrder: "in_order" });
    assert.equal(wrong.reason, "expected charge_card after check_stock at step 2, got it at step 1 (out of order)");
    assert.deepEqual(wrong.trajectory!.failures.map((f) => [f.kind, f.step]), [["order", 1]]);
    assert.deepEqual(verdicts(wrong), ["failed", "matched"]);
  });

  test("in_order: an expectation twice needs two calls; one never made is named with the closest call", () => {
    assert.equal(check(trip, { expectedToolCalls: ["log", "log"], toolCallOrder: "in_order" }).passed, false);
    assert.equal(check(run([call("log"), call("x"), call("log")]), { expectedToolCalls: ["log", "log"], toolCallOrder: "in_order" }).passed, true);
    const r = check(trip, { expectedToolCalls: ["check_stock", { name: "charge_card", args: { amount: 20 } }, "ship"], toolCallOrder: "in_order" });
    assert.equal(r.reason, "expected charge_card(amount=20), got charge_card(amount=10) at step 3");
    assert.deepEqual(r.trajectory!.steps.map((s) => s.expectation), [0, null, null, 2], "the later expectations still match in order");
  });

  test("in_order: the earliest match is taken, so an overlapping matcher does not steal a later call", () => {
    const output = run([call("s", { q: "a" }), call("s", { q: "b" })]);
    assert.equal(check(output, { expectedToolCalls: ["s", { name: "s", args: { q: "b" } }], toolCallOrder: "in_order" }).passed, true);
    assert.equal(check(output, { expectedToolCalls: [{ name: "s", args: { q: "b" } }, "s"], toolCallOrder: "in_order" }).passed, false);
  });

  test("in_order: times N is exactly N matching calls between the previous expectation's call and the next one's", () => {
    const output = run([call("search"), call("search"), call("book"), call("search")]);
    assert.equal(check(output, { expectedToolCalls: [{ name: "search", times: 2 }, "book"], toolCallOrder: "in_order" }).passed, true);
    const once = check(output, { expectedToolCalls: [{ name: "search", times: 1 }, "book"], toolCallOrder: "in_order" });
    assert.equal(once.reason, "expected search 1 time before book, got 2 matching calls (the first extra one at step 2)");
    assert.equal(once.trajectory!.failures[0]!.step, 2);
    assert.equal(check(output, { expectedToolCalls: [{ name: "search", times: 2 }, "book", { name: "search", times: 1 }], toolCallOrder: "in_order" }).passed, true, "the same tool later is another expectation");
    const last = check(output, { expectedToolCalls: ["book", { name: "search", times: 0 }], toolCallOrder: "in_order" });
    assert.equal(last.reason, "expected search 0 times, got 1 matching call (the first extra one at step 4)");
    const zero = (calls: string[]) => check(run(calls.map((c) => call(c))), { expectedToolCalls: [{ name: "a", times: 1 }, { name: "b", times: 0 }, "c"], toolCallOrder: "in_order" });
    assert.equal(zero(["a", "c", "b"]).passed, true, "b after c is after the window");
    assert.deepEqual(zero(["a", "a", "c"]).trajectory!.failures.map((f) => [f.expectation, f.step]), [[0, 2]], "a's window is still counted past b's");
    assert.deepEqual(zero(["a", "b", "c"]).trajectory!.failures.map((f) => [f.expectation, f.step]), [[1, 2]]);
    const short = check(output, { expectedToolCalls: ["book", { name: "search", times: 2 }], toolCallOrder: "in_order" });
    assert.equal(short.reason, "expected search 2 times after book at step 3, got 1 matching call (step 4)");
  });

  test("exact: exactly these calls in this order and nothing else", () => {
    assert.equal(check(trip, { expectedToolCalls: ["check_stock", "log", "charge_card", "ship"], toolCallOrder: "exact" }).passed, true);
    const extra = check(trip, { expectedToolCalls: ["check_stock", "log", "charge_card"], toolCallOrder: "exact" });
    assert.equal(extra.reason, "expected exactly 3 calls, got another: ship() at step 4");
    assert.equal(extra.trajectory!.failures[0]!.step, 4);
    const fewer = check(trip, { expectedToolCalls: ["check_stock", "log", "charge_card", "ship", "notify"], toolCallOrder: "exact" });
    assert.equal(fewer.reason, "expected notify as call 5 of 5, got no call there (4 calls made)");
    const swapped = check(trip, { expectedToolCalls: ["check_stock", "charge_card", "log", "ship"], toolCallOrder: "exact" });
    assert.equal(swapped.reason, "expected charge_card as call 2 of 4, got log() at step 2");
    assert.deepEqual(verdicts(swapped), ["matched", "failed", "other", "other"]);
    const expanded = run([call("a"), call("a"), call("b")]);
    assert.equal(check(expanded, { expectedToolCalls: [{ name: "a", times: 2 }, "b"], toolCallOrder: "exact" }).passed, true);
    assert.equal(check(expanded, { expectedToolCalls: [{ name: "a", times: 1 }, "b"], toolCallOrder: "exact" }).reason, "expected b as call 2 of 2, got a() at step 2");
  });

  test("exact: an errored attempt of an expected call is not a call (a clean retry passes); an errored other call is", () => {
    const retried = run([call("a"), errored("b"), call("b")]);
    assert.equal(check(retried, { expectedToolCalls: ["a", "b"], toolCallOrder: "exact" }).passed, true);
    const other = check(run([call("a"), errored("rm"), call("b")]), { expectedToolCalls: ["a", "b"], toolCallOrder: "exact" });
    assert.equal(other.reason, "expected b as call 2 of 2, got rm() at step 2 (it ended in error)");
    assert.deepEqual(other.failedToolCalls, ["rm"]);
    const requested = check(run([call("a")], { messages: [request("rm")] }), { expectedToolCalls: ["a"], toolCallOrder: "exact" });
    assert.equal(requested.reason, "unexpected call rm requested (it never ran; only the expected tools may run)");
  });

  test("Agno's strict option maps onto the modes: any order, and no call to a tool no expectation names", () => {
    const strict = check(trip, { expectedToolCalls: ["check_stock", "charge_card", "ship"], allowAdditionalToolCalls: false });
    assert.equal(strict.reason, "unexpected call log() at step 2 (only the expected tools may run)");
    assert.deepEqual(strict.failedToolCalls, ["log"]);
    assert.deepEqual(strict.trajectory!.failures.map((f) => f.kind), ["unexpected"]);
    assert.equal(check(trip, { expectedToolCalls: ["ship", "log", "charge_card", "check_stock"], allowAdditionalToolCalls: false }).passed, true, "any order");
    const ordered = check(trip, { expectedToolCalls: ["check_stock", "ship"], allowAdditionalToolCalls: false, toolCallOrder: "in_order" });
    assert.deepEqual(ordered.trajectory!.failures.map((f) => [f.kind, f.step]), [["unexpected", 2], ["unexpected", 3]]);
    assert.equal(check(trip, { expectedToolCalls: [{ name: "charge_card", args: { amount: 99 } }, "check_stock", "log", "ship"], allowAdditionalToolCalls: false }).failedToolCalls.length, 0, "strict is by name: a call of a named tool is not unexpected");
  });
});

describe("forbidden calls and bounds", () => {
  test("a forbidden call fails wherever it is, ran cleanly, errored, or was only requested", () => {
    const r = check(run([call("lookup"), call("delete_user", { id: 3 })]), { forbiddenToolCalls: ["delete_user"] });
    assert.equal(r.reason, "forbidden delete_user called at step 2: delete_user(id=3)");
    assert.deepEqual(r.trajectory!.failures, [{ kind: "forbidden", expectation: 0, step: 2, message: r.reason }]);
    assert.deepEqual(r.failedToolCalls, ["delete_user"]);
    assert.deepEqual(r.additionalToolCalls, ["lookup"]);
    assert.equal(check(run([errored("delete_user")]), { forbiddenToolCalls: ["delete_user"] }).passed, false);
    const asked = check(run([], { messages: [request("delete_user", { id: 3 }), request("delete_user", { id: 3 })] }), { forbiddenToolCalls: [{ name: "delete_user", args: { id: 3 } }] });
    assert.equal(asked.reason, "forbidden delete_user(id=3) requested (it never ran)", "once, though asked twice");
    assert.equal(check(run([], { messages: [request("delete_user", { id: 4 })] }), { forbiddenToolCalls: [{ name: "delete_user", args: { id: 3 } }] }).passed, true);
  });

  test("a forbidden matcher forbids only the calls it matches", () => {
    const output = run([call("charge", { amount: 10 }), call("charge", { amount: 0 })]);
    const r = check(output, { forbiddenToolCalls: [{ name: "charge", args: { amount: 0 } }] });
    assert.deepEqual(r.trajectory!.failures.map((f) => f.step), [2]);
    assert.deepEqual(verdicts(r), ["other", "failed"]);
    assert.equal(check(output, { forbiddenToolCalls: [{ name: "charge", args: { amount: (v: unknown) => (v as number) > 100 } }] }).passed, true);
  });

  test("maxToolCalls counts every execution, errored ones too", () => {
    const output = run([call("a"), errored("b"), call("c")]);
    assert.equal(check(output, { maxToolCalls: 3 }).passed, true);
    const r = check(output, { maxToolCalls: 2 });
    assert.equal(r.reason, "3 tool calls, at most 2 allowed (the first one over at step 3)");
    assert.deepEqual(r.trajectory!.failures.map((f) => [f.kind, f.step]), [["max_tool_calls", 3]]);
    assert.equal(check(run([]), { maxToolCalls: 0 }).reason, "at most 0 calls (0 tool calls)");
    assert.equal(check(output, { maxToolCalls: 0 }).trajectory!.failures[0]!.step, 1);
  });

  test("toolCallsMustSucceed: no execution ended in error; a paused call is not an error", () => {
    const r = check(run([call("a"), errored("get_weather", { city: "Oslo" }, "HTTP 503\nretry later"), call("get_weather", { city: "Oslo" })]), { expectedToolCalls: ["get_weather"], toolCallsMustSucceed: true });
    assert.equal(r.reason, 'get_weather(city="Oslo") ended in error at step 2: HTTP 503');
    assert.deepEqual(r.trajectory!.steps.map((s) => s.outcome), ["ok", "error", "ok"]);
    assert.equal(check(run([errored("a", {}, true)]), { toolCallsMustSucceed: true }).reason, "a() ended in error at step 1");
    assert.equal(check(run([call("a", {}, null, { isPaused: true })]), { toolCallsMustSucceed: true }).passed, true);
    assert.equal(check(run([errored("a"), call("a")]), { expectedToolCalls: ["a"] }).passed, true, "without it, a clean retry passes as before");
  });

  test("every failure is kept; the reason lists five and says how many more", () => {
    const output = run(Array.from({ length: 8 }, (_, i) => call(`t${i}`)));
    const r = check(output, { expectedToolCalls: ["t0"], allowAdditionalToolCalls: false, maxToolCalls: 2 });
    assert.equal(r.trajectory!.failures.length, 8);
    assert.match(r.reason!, /^unexpected call t1\(\) at step 2 .*; and 3 more$/);
    assert.equal(r.reason!.split("; ").length, 6);
  });
});

describe("team members", () => {
  const team = run([call("delegate", { to: "researcher" }), call("delegate", { to: "writer" })], {
    memberResponses: [
      { agentId: "researcher", content: "notes", tools: [call("search", { q: "paris" }), call("search", { q: "lyon" })] },
      { agentId: "writer", content: "text", tools: [call("search", { q: "style guide" }), call("publish", { draft: 1 })], memberResponses: [{ agentId: "editor", content: "ok", tools: [call("approve")] }] },
    ],
  });

  test("steps number the run's own calls, then each member's, depth first, under the member's name", () => {
    const r = check(team, { expectedToolCalls: ["approve"] });
    assert.deepEqual(r.trajectory!.steps.map((s) => [s.step, s.member, s.tool]), [
      [1, null, "delegate"],
      [2, null, "delegate"],
      [3, "researcher", "search"],
      [4, "researcher", "search"],
      [5, "writer", "search"],
      [6, "writer", "publish"],
      [7, "editor", "approve"],
    ]);
    assert.equal(r.passed, true, "a nested member's call counts");
  });

  test("a bare name matches any member's call; member/tool only that member's", () => {
    assert.equal(check(team, { expectedToolCalls: [{ name: "search", args: { q: "style guide" } }] }).passed, true);
    assert.equal(check(team, { expectedToolCalls: [{ name: "researcher/search", args: { q: "lyon" } }] }).passed, true);
    const r = check(team, { expectedToolCalls: [{ name: "researcher/search", args: { q: "style guide" } }] });
    assert.equal(r.reason, 'expected researcher/search(q="style guide"), got researcher/search(q="paris") at step 3');
    assert.equal(check(team, { expectedToolCalls: ["editor/approve", "writer/publish"], toolCallOrder: "in_order" }).reason, "expected writer/publish after editor/approve at step 7, got it at step 6 (out of order)");
    assert.equal(check(team, { expectedToolCalls: ["nobody/search"] }).reason, "expected nobody/search: never called (calls made: delegate, researcher/search, writer/search, writer/publish, editor/approve)", "no such member: the name is a plain tool name");
  });

  test("forbidden and strict by member", () => {
    const r = check(team, { forbiddenToolCalls: ["writer/search"] });
    assert.deepEqual(r.trajectory!.failures.map((f) => f.step), [5]);
    assert.equal(r.reason, 'forbidden writer/search called at step 5: writer/search(q="style guide")');
    const strict = check(team, { expectedToolCalls: ["delegate", "researcher/search", "publish", "approve"], allowAdditionalToolCalls: false });
    assert.deepEqual(strict.trajectory!.failures.map((f) => f.step), [5], "the writer's search is not the researcher's");
  });

  test("in_order and exact read the numbered order, members included", () => {
    assert.equal(check(team, { expectedToolCalls: ["delegate", "researcher/search", "publish", "approve"], toolCallOrder: "in_order" }).passed, true);
    assert.equal(check(team, { expectedToolCalls: ["delegate", "delegate", { name: "search", times: 3 }, "publish", "approve"], toolCallOrder: "exact" }).passed, true);
  });
});

describe("reasons and legacy lists", () => {
  test("a call never made says so, with the calls that were; one requested or errored says that", () => {
    assert.equal(check(weather, { expectedToolCalls: ["cancel"] }).reason, "expected cancel: never called (calls made: search, get_weather, book)");
    assert.equal(check(run([]), { expectedToolCalls: ["cancel"] }).reason, "expected cancel: never called (no tool calls)");
    const refused = check(run([], { messages: [request("cancel")] }), { expectedToolCalls: [{ name: "cancel", args: { id: 1 } }] });
    assert.equal(refused.reason, "expected cancel(id=1): requested, but it never ran");
    assert.deepEqual(refused.missingToolCalls, ["cancel(id=1) (requested but refused/errored \u2014 execution matching, new in 2.8.0)"]);
    const failed = check(run([errored("cancel", { id: 1 })]), { expectedToolCalls: [{ name: "cancel", args: { id: 1 } }] });
    assert.equal(failed.reason, "expected cancel(id=1): cancel(id=1) at step 1 ended in error");
    assert.deepEqual(failed.trajectory!.failures[0]!.step, 1);
  });

  test("a pass says what was checked", () => {
    const r = check(weather, { expectedToolCalls: ["search", "book"], toolCallOrder: "in_order", forbiddenToolCalls: ["delete_user"], maxToolCalls: 5, toolCallsMustSucceed: true });
    assert.equal(r.reason, "all 2 expected calls matched in order; no forbidden call; at most 5 calls; no call ended in error (3 tool calls)");
    assert.deepEqual(r.trajectory!.failures, []);
    assert.equal(r.trajectory!.order, "in_order");
  });

  test("Agno's lists with matchers: passed names the matching calls, missing the unmet expectations (once each)", () => {
    const r = check(weather, { expectedToolCalls: [{ name: "book", args: { id: 7 } }, { name: "get_weather", args: { city: "Rome" } }, { name: "get_weather", args: { city: "Rome" } }] });
    assert.deepEqual(r.passedToolCalls, ["book"]);
    assert.deepEqual(r.missingToolCalls, ['get_weather(city="Rome")']);
    assert.deepEqual(r.additionalToolCalls, ["search"]);
    assert.equal(r.trajectory!.failures.length, 1, "a duplicate expectation is one failure");
  });

  test("the same output and options give the same details, and the output is left as it was", () => {
    const snapshot = structuredClone(weather);
    const options = { expectedToolCalls: Object.freeze([{ name: "get_weather", args: { city: /^P/ } }, "book"]), toolCallOrder: "in_order" as const };
    assert.deepEqual(check(weather, options), check(weather, options));
    assert.deepEqual(weather, snapshot);
  });
});
