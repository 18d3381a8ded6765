// shared/providers/limiter-core.ts with a fake clock: pacing (no burst beyond a second's share),
// the concurrency cap, FIFO order, AIMD on 429s and Retry-After, learning from headers, tokens.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CONFIGURED_DECREASE, INITIAL_UNKNOWN_RPS, LimiterCore, PACE, type LimitGrant } from "../../../shared/providers/limiter-core.ts";
import { maxInWindow } from "../../support/rate-window.ts";

/** Runs the core from `from` to `to` ms in `step` ms ticks, collecting every grant with its time. */
function drive(core: LimiterCore, from: number, to: number, step = 5, onGrant?: (g: LimitGrant, t: number) => void): Array<{ g: LimitGrant; t: number }> {
  const out: Array<{ g: LimitGrant; t: number }> = [];
  for (let t = from; t <= to; t += step) {
    for (const g of core.poll(t)) {
      out.push({ g, t });
      onGrant?.(g, t);
    }
  }
  return out;
}

describe("LimiterCore: pacing", () => {
  test("a per-minute limit is paced evenly: never more than a second's share plus one in any second", () => {
    const core = new LimiterCore({ k: { rpm: 600 } });
    for (let i = 0; i < 400; i++) core.request("k", 0, 0);
    const grants = drive(core, 0, 30_000, 5, (g, t) => core.release(g.id, { status: 200 }, t));
    const times = grants.map((x) => x.t);
    // 600 rpm paced at 97%: 9.7 per second.
    assert.ok(maxInWindow(times, 1000) <= Math.ceil(10 * PACE) + 1, `at most ${Math.ceil(10 * PACE) + 1} in any second, got ${maxInWindow(times, 1000)}`);
    assert.ok(maxInWindow(times, 60_000) <= 600);
    // And it is used: over 30 s, within 2% of the paced rate.
    const expected = 30 * 10 * PACE;
    assert.ok(Math.abs(grants.length - expected) <= expected * 0.02 + 2, `${grants.length} grants, expected about ${expected}`);
  });

  test("a short window starts paced with slack, climbs towards 0.97 of it without a 429, and never crosses it", () => {
    // The provider's window is 1 s for 10 requests: paced at 8 per second at first.
    const core = new LimiterCore({ k: { rpm: 600 } });
    core.observe("k", { status: 200, limitRequests: 10, resetRequestsMs: 1000 }, 0);
    const s = core.snapshot(0)[0]!;
    assert.ok(Math.abs(s.rpm! - 480) < 0.01, String(s.rpm));
    for (let i = 0; i < 100; i++) core.request("k", 0, 5000);
    const grants = drive(core, 5000, 15_000, 5, (g, t) => core.release(g.id, { status: 200 }, t));
    assert.ok(maxInWindow(grants.map((x) => x.t), 1000) <= 10, "never above the limit in any window");
    // Ten seconds of answers without a 429: the pace is within 2% of 0.97 of the limit.
    const rpm = core.snapshot(15_000)[0]!.rpm!;
    assert.ok(rpm > 600 * PACE * 0.98 && rpm <= 600 * PACE + 0.01, String(rpm));
  });

  test("a 429 on a short window backs the pace off towards the careful one, and lowers the pace it climbs back to", () => {
    const core = new LimiterCore({ k: { rpm: 240 } });
    // 4 per rolling second, climbed to 0.97 by a minute of answers.
    for (let t = 0; t <= 60_000; t += 1000) core.observe("k", { status: 200, limitRequests: 4, remainingRequests: 1, resetRequestsMs: 1000 }, t);
    assert.ok(Math.abs(core.snapshot(60_000)[0]!.rpm! - 240 * PACE) < 0.5, String(core.snapshot(60_000)[0]!.rpm));
    core.observe("k", { status: 429, limitRequests: 4, remainingRequests: 0, resetRequestsMs: 300, retryAfterMs: 300 }, 60_500);
    const after = core.snapshot(60_500)[0]!.rpm!;
    assert.ok(after <= 240 * 0.75, `backed off at once: ${after}`);
    for (let t = 61_000; t <= 120_000; t += 1000) core.observe("k", { status: 200, limitRequests: 4, remainingRequests: 1, resetRequestsMs: 1000 }, t);
    const back = core.snapshot(120_000)[0]!.rpm!;
    assert.ok(back < 240 * PACE - 0.5 && back > 240 * 0.9, `climbs back, under the refused pace: ${back}`);
  });

  test("no burst before the provider's first answer, a second's share after it", () => {
    const core = new LimiterCore({ k: { rpm: 600 } });
    core.request("k", 0, 0);
    const [first] = core.poll(0);
    for (let i = 0; i < 20; i++) core.request("k", 0, 0);
    // Two seconds idle: without an answer yet, the bucket still holds one request.
    assert.equal(core.poll(2000).length, 1);
    core.release(first!.id, { status: 200 }, 2000);
    assert.equal(core.poll(4000).length, Math.floor(10 * PACE), "a second's share once it answered");
  });

  test("after an idle spell the burst is at most one second's share", () => {
    const core = new LimiterCore({ k: { rpm: 60 } });
    core.request("k", 0, 0);
    drive(core, 0, 10, 5, (g, t) => core.release(g.id, { status: 200 }, t));
    for (let i = 0; i < 20; i++) core.request("k", 0, 120_000);
    const burst = core.poll(120_000);
    assert.equal(burst.length, 1, "60 rpm: a second's share is one request");
  });

  test("a fresh key starts with one request in its bucket, not a second's share", () => {
    const core = new LimiterCore({ k: { rpm: 6000 } });
    for (let i = 0; i < 200; i++) core.request("k", 0, 0);
    assert.equal(core.poll(0).length, 1);
  });

  test("requests are granted in the order they came (per key), and keys are independent", () => {
    const core = new LimiterCore({ a: { rpm: 60 }, b: { rpm: 60 } });
    const ids = [core.request("a", 0, 0), core.request("a", 0, 0), core.request("a", 0, 0)];
    const b = core.request("b", 0, 0);
    const grants = drive(core, 0, 3000, 10);
    assert.deepEqual(grants.filter((x) => x.g.key === "a").map((x) => x.g.id), ids);
    assert.equal(grants.find((x) => x.g.key === "b")?.t, 0);
    assert.equal(grants.find((x) => x.g.key === "b")?.g.id, b);
  });

  test("nextPollAt says when the head may go", () => {
    const core = new LimiterCore({ k: { rpm: 60 } });
    core.request("k", 0, 0);
    core.request("k", 0, 0);
    assert.equal(core.poll(0).length, 1);
    const at = core.nextPollAt(0)!;
    assert.ok(at > 900 && at < 1100, String(at));
    assert.equal(core.poll(at - 50).length, 0);
    assert.equal(core.poll(at).length, 1);
    assert.equal(core.nextPollAt(at), null);
  });

  test("a cancelled request is never granted", () => {
    const core = new LimiterCore({ k: { rpm: 60 } });
    core.request("k", 0, 0);
    const second = core.request("k", 0, 0);
    core.poll(0);
    assert.equal(core.cancel(second), true);
    assert.equal(core.cancel(second), false);
    assert.deepEqual(drive(core, 0, 5000, 50), []);
  });
});

describe("LimiterCore: concurrency", () => {
  test("requests in flight never exceed the cap; a release makes room", () => {
    const core = new LimiterCore({ k: { concurrency: 2 } });
    for (let i = 0; i < 5; i++) core.request("k", 0, 0);
    // No rate configured: the key learns; its start is paced, so drive a while.
    const first = drive(core, 0, 5000, 10);
    assert.equal(first.length, 2);
    assert.equal(core.nextPollAt(5000), null, "only a release can make room");
    core.release(first[0]!.g.id, { status: 200 }, 5000);
    assert.equal(drive(core, 5000, 7000, 10).length, 1);
    assert.equal(core.snapshot(7000)[0]!.inFlight, 2);
  });
});

describe("LimiterCore: adapting to the provider", () => {
  test("a 429 lowers the rate at once (one decrease per burst) and its Retry-After pauses the key", () => {
    const core = new LimiterCore({ k: { rpm: 600 } });
    const rpm = (t: number): number => core.snapshot(t)[0]!.rpm!;
    core.request("k", 0, 0);
    const [g] = core.poll(0);
    const before = rpm(0);
    core.release(g!.id, { status: 429, retryAfterMs: 2000 }, 100);
    assert.ok(Math.abs(rpm(100) - before * CONFIGURED_DECREASE) < 0.5, `${rpm(100)} after a 429, from ${before}`);
    // A second 429 of the same burst does not halve again.
    core.request("k", 0, 100);
    core.observe("k", { status: 429 }, 150);
    assert.ok(Math.abs(rpm(150) - before * CONFIGURED_DECREASE) < 0.5);
    assert.equal(core.poll(1000).length, 0, "paused by Retry-After");
    const after = drive(core, 1000, 3000, 10);
    assert.ok(after.length === 1 && after[0]!.t >= 2100, "granted once the pause is over");
  });

  test("successes raise the rate back to the ceiling, at most once a second", () => {
    const core = new LimiterCore({ k: { rpm: 600 } });
    core.observe("k", { status: 429 }, 0);
    const low = core.snapshot(0)[0]!.rpm!;
    core.observe("k", { status: 200 }, 500);
    assert.equal(core.snapshot(500)[0]!.rpm, low, "not within the second");
    for (let t = 1000; t <= 20_000; t += 1000) core.observe("k", { status: 200 }, t);
    assert.ok(Math.abs(core.snapshot(20_000)[0]!.rpm! - 600 * PACE) < 0.01);
  });

  test("an unknown key starts carefully and doubles each second without a refusal", () => {
    const core = new LimiterCore();
    core.observe("k", { status: 200 }, 0);
    assert.equal(core.snapshot(0)[0]!.rpm, INITIAL_UNKNOWN_RPS * 60);
    core.observe("k", { status: 200 }, 1000);
    core.observe("k", { status: 200 }, 2000);
    assert.equal(core.snapshot(2000)[0]!.rpm, INITIAL_UNKNOWN_RPS * 4 * 60);
  });

  test("an unknown key learns its limit and window from the headers", () => {
    const core = new LimiterCore();
    core.observe("k", { status: 200, limitRequests: 60, remainingRequests: 59, resetRequestsMs: 6000 }, 0);
    const s = core.snapshot(0)[0]!;
    assert.deepEqual(s.learnt, { requests: 60, tokens: null, windowSeconds: 6 });
    // 60 per 6 s, paced to keep 2 requests of slack in the window: 58 per 6 s.
    assert.ok(Math.abs(s.rpm! - 580) < 0.01, String(s.rpm));
  });

  test("a configured limit wins over the headers; configure() applies new limits to keys in use", () => {
    const core = new LimiterCore({ k: { rpm: 120 } });
    core.observe("k", { status: 200, limitRequests: 10_000, resetRequestsMs: 60_000 }, 0);
    assert.ok(Math.abs(core.snapshot(0)[0]!.rpm! - 120 * PACE) < 0.01);
    core.configure({ k: { rpm: 60 } }, 10);
    // 60 per minute keeps 2 requests of slack: 58.
    assert.ok(Math.abs(core.snapshot(10)[0]!.rpm! - 58) < 0.01);
  });

  test("a provider that states a lower limit than configured is believed, and its stated limit can drop mid-run", () => {
    // Configured 1200 per minute; the provider says 20 per 2 s (600 per minute).
    const core = new LimiterCore({ k: { rpm: 1200 } });
    core.observe("k", { status: 200, limitRequests: 20, remainingRequests: 19, resetRequestsMs: 2000 }, 0);
    // 20 per 2 s, paced with 10% slack (2 requests, 200 ms of the window): 18 per 2 s.
    assert.ok(Math.abs(core.snapshot(0)[0]!.rpm! - 540) < 0.01, String(core.snapshot(0)[0]!.rpm));
    // It lowers it to 10 per 2 s: the pace follows at once, and no success climbs above it.
    core.observe("k", { status: 429, limitRequests: 10, remainingRequests: 0, resetRequestsMs: 1500, retryAfterMs: 1500 }, 100);
    for (let t = 2000; t <= 20_000; t += 1000) core.observe("k", { status: 200, limitRequests: 10, remainingRequests: 5, resetRequestsMs: 1000 }, t);
    // 10 per 2 s (300 per minute): paced at first with 2 requests of slack (8 per 2 s), then
    // climbing without a 429, never above 0.97 of the stated limit.
    const rpm = core.snapshot(20_000)[0]!.rpm!;
    assert.ok(rpm >= 240 - 0.01 && rpm <= 300 * PACE + 0.01, String(rpm));
    // Paced grants over 20 s: never more than the stated 10 in any 2 s window.
    const times: number[] = [];
    for (let i = 0; i < 200; i++) core.request("k", 0, 20_000);
    for (let t = 20_000; t < 40_000; t += 10) for (const g of core.poll(t)) (times.push(t), core.release(g.id, { status: 200 }, t));
    assert.ok(maxInWindow(times, 2000) <= 10, String(maxInWindow(times, 2000)));
  });

  test("a provider that states a higher limit than configured does not raise it; tokens likewise", () => {
    const core = new LimiterCore({ k: { rpm: 60, tpm: 6000 } });
    core.observe("k", { status: 200, limitRequests: 10_000, limitTokens: 1_000_000, resetRequestsMs: 60_000 }, 0);
    assert.ok(Math.abs(core.snapshot(0)[0]!.rpm! - 58) < 0.01);
    assert.ok(Math.abs(core.snapshot(0)[0]!.tpm! - 6000 * PACE) < 0.01);
    core.observe("k", { status: 200, limitTokens: 3000, resetTokensMs: 60_000 }, 10);
    assert.ok(Math.abs(core.snapshot(10)[0]!.tpm! - 3000 * PACE) < 0.01, String(core.snapshot(10)[0]!.tpm));
  });

  test("5xx and connection errors are counted, not slowed down for", () => {
    const core = new LimiterCore({ k: { rpm: 600 } });
    core.observe("k", { status: 503 }, 0);
    core.observe("k", { status: null }, 0);
    const s = core.snapshot(0)[0]!;
    assert.equal(s.failed, 2);
    assert.ok(Math.abs(s.rpm! - 600 * PACE) < 0.01);
  });
});

describe("LimiterCore: tokens", () => {
  test("tokens per minute are paced; a request larger than the bucket goes into debt and the next waits", () => {
    const core = new LimiterCore({ k: { tpm: 6000 } });
    // 6000 tpm at 97%: 97 tokens per second, the bucket holds a second's share.
    core.request("k", 500, 0);
    core.request("k", 50, 0);
    const grants = drive(core, 0, 10_000, 10, (g, t) => core.release(g.id, { status: 200, tokens: g.tokens }, t));
    assert.equal(grants.length, 2);
    const waited = grants[1]!.t - grants[0]!.t;
    assert.ok(waited >= 4000, `the second waited ${waited} ms for the first one's debt`);
    assert.equal(core.snapshot(10_000)[0]!.tokens, 550);
  });

  test("settling: a request that used fewer tokens than estimated gives them back", () => {
    // 97 tokens per second; without the 80 given back, 7 + 48 by t = 500 ms would not admit 80.
    const core = new LimiterCore({ k: { tpm: 6000, rpm: 6000 } });
    core.request("k", 90, 0);
    const [g] = core.poll(0);
    core.release(g!.id, { status: 200, tokens: 10 }, 0);
    core.request("k", 80, 0);
    assert.equal(core.poll(500).length, 1);
  });
});
