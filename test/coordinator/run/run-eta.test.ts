// The ETA from history: expected work left (queued whole, in flight less what it ran) over the
// slots, never under the longest case left; driven by a fake clock.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { HistoryEta, shortDuration } from "../../../coordinator/run/run-eta.ts";

describe("HistoryEta", () => {
  test("work over slots, in flight less its elapsed time, the longest case as a floor", () => {
    let now = 0;
    const expected = new Map([["long", 100], ["a", 10], ["b", 10], ["c", 10], ["d", 10]]);
    const eta = new HistoryEta(expected.keys(), expected, 2, () => now);
    // 140 s of work on 2 slots, but `long` alone takes 100.
    assert.equal(eta.secondsLeft(), 100);
    eta.started("long");
    eta.started("a");
    now = 10_000;
    // long: 90 left, a: 0 left, b c d queued: 30 -> max(90, 120 / 2).
    assert.equal(eta.secondsLeft(), 90);
    eta.ended("a");
    eta.started("b");
    now = 95_000;
    // long: 5 left, b: 0 (overran), c d: 20 -> max(10, 25 / 2).
    assert.equal(eta.secondsLeft(), 12.5);
    for (const n of ["long", "b", "c", "d"]) eta.ended(n);
    assert.equal(eta.secondsLeft(), 0);
  });

  test("the floor follows the longest case not yet started, not one that has", () => {
    const expected = new Map([["x", 50], ["y", 20], ["z", 20]]);
    let now = 0;
    const eta = new HistoryEta(expected.keys(), expected, 10, () => now);
    assert.equal(eta.secondsLeft(), 50);
    eta.started("x");
    now = 40_000;
    // x: 10 left; the longest queued is 20 now.
    assert.equal(eta.secondsLeft(), 20);
  });

  test("a case skipped without starting leaves the queue; unknown names are ignored", () => {
    const expected = new Map([["a", 30], ["b", 30]]);
    const eta = new HistoryEta(expected.keys(), expected, 1, () => 0);
    eta.ended("a");
    eta.started("nope");
    eta.ended("nope");
    assert.equal(eta.secondsLeft(), 30);
  });

  test("shortDuration", () => {
    assert.deepEqual([0, 45.4, 65, 3599, 7800].map(shortDuration), ["0s", "45s", "1m 05s", "59m 59s", "2h 10m"]);
  });
});
