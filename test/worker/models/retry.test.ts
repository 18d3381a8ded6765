// The retry policy of the model clients (worker/models/retry.ts): pure parts and the loop.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { ModelCallError } from "../../../index.ts";
import { backoffDelay, DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfter, withRetries, type AttemptFailure } from "../../../worker/models/retry.ts";

describe("parseRetryAfter", () => {
  test("retry-after-ms wins; seconds; an HTTP date; nothing usable", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now), 250);
    assert.equal(parseRetryAfter(new Headers({ "retry-after": "2" }), now), 2000);
    assert.equal(parseRetryAfter(new Headers({ "retry-after": "0.5" }), now), 500);
    assert.equal(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, now), 3000);
    assert.equal(parseRetryAfter({ "retry-after": "Wed, 31 Dec 2025 23:59:00 GMT" }, now), 0, "a date in the past means now");
    assert.equal(parseRetryAfter({ "retry-after": "soon" }, now), undefined);
    assert.equal(parseRetryAfter({ "retry-after-ms": "-5" }, now), undefined);
    assert.equal(parseRetryAfter({}, now), undefined);
    assert.equal(parseRetryAfter(null, now), undefined);
  });
});

describe("backoffDelay", () => {
  test("doubles from the base, half fixed and half jitter, capped", () => {
    const policy = { baseDelayMs: 100, maxDelayMs: 1000 };
    assert.equal(backoffDelay(0, policy, () => 0), 50);
    assert.equal(backoffDelay(0, policy, () => 1), 100);
    assert.equal(backoffDelay(2, policy, () => 0), 200);
    assert.equal(backoffDelay(2, policy, () => 1), 400);
    assert.equal(backoffDelay(10, policy, () => 1), 1000, "capped");
    assert.equal(backoffDelay(10, policy, () => 0), 500);
  });
});

describe("isRetryableStatus", () => {
  test("408, 409, 429 and 5xx only", () => {
    assert.deepEqual([400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504].filter(isRetryableStatus), [408, 409, 429, 500, 502, 503, 504]);
  });
});

describe("withRetries", () => {
  const failure = (status: number | null, headers: Record<string, string> = {}): AttemptFailure => ({ status, headers, retryable: status === null || isRetryableStatus(status), message: `status ${status}` });
  const classify = (err: unknown) => err as AttemptFailure;

  test("retries until success, telling each wait", async () => {
    const waits: number[] = [];
    let n = 0;
    const value = await withRetries(
      async () => {
        n++;
        if (n < 3) throw failure(503);
        return "ok";
      },
      { ...DEFAULT_RETRY_POLICY, signal: new AbortController().signal, classify, baseDelayMs: 1, maxDelayMs: 2, onRetry: ({ delayMs }) => void waits.push(delayMs) },
    );
    assert.equal(value, "ok");
    assert.equal(n, 3);
    assert.equal(waits.length, 2);
  });

  test("a non-retryable failure throws at once with its status", async () => {
    let n = 0;
    const err = await withRetries(
      async () => {
        n++;
        throw failure(401);
      },
      { ...DEFAULT_RETRY_POLICY, signal: new AbortController().signal, classify },
    ).catch((e: unknown) => e);
    assert.ok(err instanceof ModelCallError);
    assert.equal(err.status, 401);
    assert.equal(err.attempts, 1);
    assert.equal(err.code, "MODEL_CALL_FAILED");
    assert.equal(n, 1);
  });

  test("maxRetries 0 makes one attempt", async () => {
    let n = 0;
    await assert.rejects(
      withRetries(
        async () => {
          n++;
          throw failure(500);
        },
        { ...DEFAULT_RETRY_POLICY, signal: new AbortController().signal, classify, maxRetries: 0 },
      ),
      /status 500 \(gave up after 1 attempts\)/,
    );
    assert.equal(n, 1);
  });

  test("a wait past the deadline is not started", async () => {
    const started = Date.now();
    await assert.rejects(
      withRetries(
        async () => {
          throw failure(429, { "retry-after": "5" });
        },
        { ...DEFAULT_RETRY_POLICY, signal: new AbortController().signal, classify, deadline: Date.now() + 1000 },
      ),
      /the next attempt would start in 5s \(Retry-After\), past the case deadline/,
    );
    assert.ok(Date.now() - started < 1000);
  });

  test("an abort during the wait ends the call with the signal's reason", async () => {
    const controller = new AbortController();
    const pending = withRetries(
      async () => {
        queueMicrotask(() => controller.abort(new Error("deadline")));
        throw failure(503, { "retry-after": "30" });
      },
      { ...DEFAULT_RETRY_POLICY, signal: controller.signal, classify },
    );
    await assert.rejects(pending, /^Error: deadline$/);
  });
});
