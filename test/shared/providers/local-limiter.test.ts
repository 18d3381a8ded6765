// shared/providers/local-limiter.ts with real timers: permits come paced, an aborted wait gives its
// place up, a permit is released once, and RunContext.fetch reports the answer's headers.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { LocalLimiter } from "../../../shared/providers/local-limiter.ts";
import { limitedFetch, providerKey } from "../../../shared/providers/limiter.ts";

describe("LocalLimiter", () => {
  test("permits of a key come paced: 600 rpm gives the first at once and the next about 100 ms later", async () => {
    const limiter = new LocalLimiter({ k: { rpm: 600 } });
    const t0 = performance.now();
    const a = await limiter.acquire("k");
    const t1 = performance.now();
    const b = await limiter.acquire("k");
    const t2 = performance.now();
    assert.ok(t1 - t0 < 50, `the first at once (${t1 - t0} ms)`);
    assert.ok(t2 - t1 >= 80 && t2 - t1 < 400, `the second about 100 ms later (${t2 - t1} ms)`);
    a.release({ status: 200 });
    b.release({ status: 200 });
    b.release({ status: 429 });
    assert.equal(limiter.snapshot()[0]!.rateLimited, 0, "a second release is ignored");
    limiter.close();
  });

  test("an aborted wait rejects with the signal's reason and gives its place up; the concurrency cap holds", async () => {
    const limiter = new LocalLimiter({ k: { concurrency: 1, rpm: 6000 } });
    const held = await limiter.acquire("k");
    const controller = new AbortController();
    const waiting = limiter.acquire("k", { signal: controller.signal });
    controller.abort(new Error("case over"));
    await assert.rejects(waiting, /case over/);
    const next = limiter.acquire("k");
    let got = false;
    void next.then(() => (got = true));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(got, false, "one in flight at most");
    held.release({ status: 200 });
    (await next).release({ status: 200 });
    assert.equal(limiter.snapshot()[0]!.inFlight, 0);
    limiter.close();
  });

  test("limitedFetch waits for a permit and tells the limiter the answer's status and rate-limit headers", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(429, { "retry-after": "1", "x-ratelimit-limit-requests": "30", "x-ratelimit-reset-requests": "6s" });
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat`;
      const limiter = new LocalLimiter();
      const res = await limitedFetch(limiter)(url, { method: "POST", limitKey: "mine" });
      assert.equal(res.status, 429);
      const s = limiter.snapshot().find((x) => x.key === "mine")!;
      assert.equal(s.rateLimited, 1);
      assert.deepEqual(s.learnt, { requests: 30, tokens: null, windowSeconds: 6 });
      assert.ok(s.pausedUntil !== null, "paused by the Retry-After");
      limiter.close();
    } finally {
      server.close();
    }
  });

  test("derived keys: openai:<model> for OpenAI's API, <host:port>:<model> for any other server", () => {
    assert.equal(providerKey(undefined, "gpt-5-mini"), "openai:gpt-5-mini");
    assert.equal(providerKey("https://api.openai.com/v1", "gpt-5"), "openai:gpt-5");
    assert.equal(providerKey("http://127.0.0.1:11434/v1", "llama3.1"), "127.0.0.1:11434:llama3.1");
  });
});
