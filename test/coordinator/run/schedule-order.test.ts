// The start order of a run from history (`--order`): longest first by the median of the newest
// recorded runs, cases without history by their timeout, ties stable by declaration, and what an
// estimate makes of it on a pool of slots.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { HISTORY_SAMPLE_RUNS, expectCase, median, orderCases, type CaseHistory, type CaseSample } from "../../../coordinator/run/schedule-order.ts";
import { estimateRun, listScheduleMakespan, remainingSeconds } from "../../../coordinator/run/schedule-estimate.ts";
import { compileRunSettings, parseScheduleOrder } from "../../../shared/run-settings.ts";
import { EvalfleetError } from "../../../shared/errors.ts";

const sample = (seconds: number, tokens: number | null = null, costUsd: number | null = null): CaseSample => ({ seconds, tokens, costUsd });
const cases = (...names: string[]) => names.map((name, index) => ({ index, case: { name }, timeoutSeconds: 120 }));
const historyOf = (entries: Record<string, number[]>): CaseHistory => new Map(Object.entries(entries).map(([n, s]) => [n, s.map((x) => sample(x))]));
const byHistory = (h: CaseHistory, timeout = 120) => (s: { case: { name: string } }) => expectCase(s.case.name, timeout, h);
const names = (xs: Array<{ case: { name: string } }>) => xs.map((x) => x.case.name);

describe("orderCases", () => {
  test("history: longest median first", () => {
    const h = historyOf({ a: [1, 1, 1], b: [9, 10, 11], c: [5] });
    assert.deepEqual(names(orderCases(cases("a", "b", "c"), { kind: "history" }, byHistory(h))), ["b", "c", "a"]);
  });

  test("ties keep declaration order, whatever order the cases come in", () => {
    const h = historyOf({ a: [2], b: [3], c: [2], d: [3] });
    const shuffled = cases("a", "b", "c", "d").reverse();
    assert.deepEqual(names(orderCases(shuffled, { kind: "history" }, byHistory(h))), ["b", "d", "a", "c"]);
  });

  test("a case without history goes by its timeout (here: longer than every recorded one)", () => {
    const h = historyOf({ a: [30], b: [200] });
    const got = orderCases(cases("a", "new", "b"), { kind: "history" }, byHistory(h, 120));
    assert.deepEqual(names(got), ["b", "new", "a"]);
  });

  test("no selected case has history: declaration order, not the timeouts'", () => {
    const timeouts = new Map([["x", 5], ["y", 50]]);
    const got = orderCases(cases("x", "y"), { kind: "history" }, (s) => expectCase(s.case.name, timeouts.get(s.case.name)!, new Map()));
    assert.deepEqual(names(got), ["x", "y"]);
  });

  test("the median resists one slow outlier, and only the newest runs count", () => {
    // a: newest first 1, 1, 100 -> median 1; b: 4 -> 4.
    const h = historyOf({ a: [1, 1, 100], b: [4] });
    assert.deepEqual(names(orderCases(cases("a", "b"), { kind: "history" }, byHistory(h))), ["b", "a"]);
    // Older runs past the newest N are ignored: c was slow long ago, fast lately.
    const c = [...Array(HISTORY_SAMPLE_RUNS).fill(1), 50, 50, 50, 50, 50, 50, 50];
    assert.equal(expectCase("c", 120, historyOf({ c })).seconds, 1);
  });

  test("repeats: a case's expectation is per trial times the run's repeat", () => {
    const h: CaseHistory = new Map([["a", [sample(2, 100, 0.01)]]]);
    assert.deepEqual(expectCase("a", 120, h, 3), { seconds: 6, tokens: 300, costUsd: 0.03, fromHistory: true });
    assert.deepEqual(expectCase("none", 120, h, 3), { seconds: 360, tokens: null, costUsd: null, fromHistory: false });
  });

  test("a changed suite: renamed and added cases have no history, removed ones are ignored, matching is by name not index", () => {
    // Recorded: old_a (long), b (short), gone (longest). Now: b moved to index 0, old_a renamed to a2, new c.
    const h = historyOf({ old_a: [100], b: [1], gone: [1000] });
    const now = [{ index: 0, case: { name: "b" } }, { index: 1, case: { name: "a2" } }, { index: 2, case: { name: "c" } }];
    const got = orderCases(now, { kind: "history" }, byHistory(h, 10));
    assert.deepEqual(names(got), ["a2", "c", "b"]);
  });

  test("declared: by declaration index", () => {
    const h = historyOf({ a: [1], b: [9] });
    assert.deepEqual(names(orderCases(cases("a", "b", "c").reverse(), { kind: "declared" }, byHistory(h))), ["a", "b", "c"]);
  });

  test("random: the same seed gives the same order; another seed another; every case once", () => {
    const all = cases(...Array.from({ length: 50 }, (_, i) => `c${i}`));
    const one = names(orderCases(all, { kind: "random", seed: 7 }, byHistory(new Map())));
    assert.deepEqual(names(orderCases([...all].reverse(), { kind: "random", seed: 7 }, byHistory(new Map()))), one);
    assert.notDeepEqual(names(orderCases(all, { kind: "random", seed: 8 }, byHistory(new Map()))), one);
    assert.notDeepEqual(one, names(all));
    assert.deepEqual([...one].sort(), names(all).sort());
  });

  test("does not change its input", () => {
    const input = cases("a", "b");
    orderCases(input, { kind: "history" }, byHistory(historyOf({ b: [5], a: [1] })));
    assert.deepEqual(names(input), ["a", "b"]);
  });
});

describe("median", () => {
  test("odd, even, none", () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});

describe("--order values", () => {
  test("parses declared, history, random:SEED; random draws a seed", () => {
    assert.deepEqual(parseScheduleOrder("declared"), { kind: "declared" });
    assert.deepEqual(parseScheduleOrder("History"), { kind: "history" });
    assert.deepEqual(parseScheduleOrder("random:42"), { kind: "random", seed: 42 });
    assert.deepEqual(parseScheduleOrder("random", "order", () => 9), { kind: "random", seed: 9 });
  });

  test("a bad value names the field and the value", () => {
    for (const bad of ["longest", "random:", "random:-1", "random:x", "random:4294967296", ""]) {
      assert.throws(() => parseScheduleOrder(bad, "--order"), (err: unknown) => err instanceof EvalfleetError && err.message.includes("--order") && err.message.includes(`'${bad}'`), bad);
    }
  });

  test("compileRunSettings: default history; a string is parsed", () => {
    assert.deepEqual(compileRunSettings({}).order, { kind: "history" });
    assert.deepEqual(compileRunSettings({ order: "random:3" }).order, { kind: "random", seed: 3 });
    assert.throws(() => compileRunSettings({ order: "nope" }), /order must be/);
  });
});

describe("estimateRun", () => {
  test("list scheduling: makespan of the start order on the slots", () => {
    assert.equal(listScheduleMakespan([], 4), 0);
    assert.equal(listScheduleMakespan([5, 1, 1, 1, 1, 1], 2), 5);
    // Declared order with the long case last: 1+1 on each slot, then 5.
    assert.equal(listScheduleMakespan([1, 1, 1, 1, 5], 2), 7);
    assert.equal(listScheduleMakespan([3, 3, 3], 1), 9);
  });

  test("history order beats declared order when the long case is declared last", () => {
    const sel = cases("a", "b", "c", "d", "long");
    const h = historyOf({ a: [1], b: [1], c: [1], d: [1], long: [5] });
    assert.equal(estimateRun(sel, h, { order: { kind: "declared" }, slots: 2 }).seconds, 7);
    assert.equal(estimateRun(sel, h, { order: { kind: "history" }, slots: 2 }).seconds, 5);
  });

  test("sums tokens and cost from history, counts the cases without history and without cost", () => {
    const h: CaseHistory = new Map([
      ["a", [sample(2, 100, 0.5), sample(4, 300, 1.5)]],
      ["b", [sample(1, 10, null)]],
    ]);
    const e = estimateRun([...cases("a", "b"), { index: 2, case: { name: "n" }, timeoutSeconds: 30 }], h, { order: { kind: "history" }, slots: 8, repeat: 2 });
    assert.equal(e.cases, 3);
    assert.equal(e.withoutHistory, 1);
    assert.equal(e.withoutCost, 1);
    assert.equal(e.tokens, 2 * 200 + 2 * 10);
    assert.equal(e.costUsd, 2 * 1);
    assert.equal(e.workSeconds, 6 + 2 + 60);
    assert.equal(e.seconds, 60);
  });

  test("remainingSeconds: work over slots, never under the longest left", () => {
    assert.equal(remainingSeconds(0, 0, 4), 0);
    assert.equal(remainingSeconds(100, 10, 4), 25);
    assert.equal(remainingSeconds(20, 15, 4), 15);
  });
});
