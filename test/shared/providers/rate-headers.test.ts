// shared/providers/rate-headers.ts: the x-ratelimit-* headers, Retry-After and their durations.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { feedbackFrom, parseDurationMs, retryAfterMs } from "../../../shared/providers/rate-headers.ts";

describe("rate-limit headers", () => {
  test("durations as providers write them", () => {
    assert.equal(parseDurationMs("1s"), 1000);
    assert.equal(parseDurationMs("6m0s"), 360_000);
    assert.equal(parseDurationMs("1m30.5s"), 90_500);
    assert.equal(parseDurationMs("250ms"), 250);
    assert.equal(parseDurationMs("2h"), 7_200_000);
    assert.equal(parseDurationMs("0.5"), 500);
    assert.equal(parseDurationMs("soon"), null);
    assert.equal(parseDurationMs("5x"), null);
    assert.equal(parseDurationMs(""), null);
    assert.equal(parseDurationMs(undefined), null);
  });

  test("Retry-After: retry-after-ms first, then seconds or an HTTP date", () => {
    assert.equal(retryAfterMs({ "retry-after-ms": "1500", "retry-after": "9" }), 1500);
    assert.equal(retryAfterMs({ "retry-after": "2" }), 2000);
    assert.equal(retryAfterMs({ "retry-after": new Date(10_000).toUTCString() }, 4000), 6000);
    assert.equal(retryAfterMs({}), null);
    assert.equal(retryAfterMs(new Headers({ "retry-after": "1" })), 1000);
  });

  test("every header of an answer, from a Headers object or a record", () => {
    const h = new Headers({
      "x-ratelimit-limit-requests": "600",
      "x-ratelimit-remaining-requests": "12",
      "x-ratelimit-reset-requests": "1.2s",
      "x-ratelimit-limit-tokens": "200000",
      "x-ratelimit-remaining-tokens": "150000",
      "x-ratelimit-reset-tokens": "6m0s",
    });
    assert.deepEqual(feedbackFrom(200, h, 42), {
      status: 200,
      retryAfterMs: null,
      limitRequests: 600,
      remainingRequests: 12,
      resetRequestsMs: 1200,
      limitTokens: 200000,
      remainingTokens: 150000,
      resetTokensMs: 360_000,
      tokens: 42,
    });
    assert.equal(feedbackFrom(429, { "x-ratelimit-remaining-requests": "0" }).remainingRequests, 0);
    assert.equal(feedbackFrom(200, { "x-ratelimit-limit-requests": "lots" }).limitRequests, null);
  });
});
