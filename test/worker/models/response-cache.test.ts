// The response cache of the built-in model clients (worker/models/response-cache.ts, file-cache.ts):
// keys that change with the endpoint, model, body and repeat index but never carry the API key;
// only successes kept; answers too old are misses; hits counted on the case; the judge's nonce
// made deterministic only while a cache is on; the folder store and `cache clear`.
import { test, describe, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, openAIJudge, runCase } from "../../../index.ts";
import { cachedCall, responseKey, setResponseCache, type ResponseStore } from "../../../worker/models/response-cache.ts";
import { FileResponseStore, clearFileCache } from "../../../worker/models/file-cache.ts";
import { buildJudgeRequest, derivedNonce } from "../../../worker/runtime/checks/judge.ts";
import { StubAgent } from "../../support/doubles.ts";
import { useScriptedOpenAI } from "../../support/openai-server.ts";

const server = useScriptedOpenAI();
const memory = (): ResponseStore & { map: Map<string, unknown> } => {
  const map = new Map<string, unknown>();
  return { map, get: async (k) => map.get(k) ?? null, put: async (k, v) => void map.set(k, v) };
};

describe("response cache", () => {
  beforeEach(() => server.reset());
  afterEach(() => setResponseCache(null));

  test("the key follows the endpoint, model, body and repeat index", () => {
    const base = { endpoint: "http://a/v1", model: "m", body: { messages: [{ role: "user", content: "hi" }] }, repeat: 1 };
    const k = responseKey(base);
    assert.match(k, /^[0-9a-f]{64}$/);
    assert.equal(responseKey({ ...base }), k);
    for (const other of [{ ...base, endpoint: "http://b/v1" }, { ...base, model: "m2" }, { ...base, body: { messages: [{ role: "user", content: "hi!" }] } }, { ...base, repeat: 2 }]) {
      assert.notEqual(responseKey(other), k);
    }
  });

  test("a miss calls and keeps the answer, a hit does not call; failures are not kept; an answer older than the TTL is a miss", async () => {
    const store = memory();
    setResponseCache({ store, ttlSeconds: 60 });
    let calls = 0;
    const ask = (): Promise<string> => cachedCall({ endpoint: "e", model: "m", body: { q: 1 } }, async () => `answer ${++calls}`);
    assert.equal(await ask(), "answer 1");
    assert.equal(await ask(), "answer 1");
    assert.equal(calls, 1);
    await assert.rejects(cachedCall({ endpoint: "e", model: "m", body: { q: 2 } }, async () => Promise.reject(new Error("429"))), /429/);
    assert.equal(store.map.size, 1, "the failure was not kept");
    // Age the kept answer past the TTL: the next call goes to the model again.
    const [key, value] = [...store.map][0]!;
    store.map.set(key, { ...(value as object), storedAt: Date.now() - 61_000 });
    assert.equal(await ask(), "answer 2");
    setResponseCache(null);
    assert.equal(await ask(), "answer 3", "off: every call is a call");
  });

  test("through the OpenAI-compatible judge: hits counted on the case, no request made, the API key nowhere in the key or the stored answer; judge nonces are fresh without a cache", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-cache-unit-"));
    server.handle(() => ({ content: JSON.stringify({ passed: true, reason: "ok" }) }));
    const c = (key: string): Case =>
      new Case({ name: "capital", input: "Capital of France?", agent: new StubAgent({ output: { content: "Paris" } }), criteria: "Names Paris.", judgeModel: openAIJudge({ model: "judge-model", baseURL: server.url, apiKey: key }) });
    const cache = { store: new FileResponseStore(dir), ttlSeconds: 60 };
    const judgeOf = (x: Case): { usage: { totalTokens?: number } } => x.judgeModel as unknown as { usage: { totalTokens?: number } };
    const firstCase = c("sk-first-key-0123456789abcdef");
    const first = await runCase(firstCase, { cache });
    assert.equal(judgeOf(firstCase).usage.totalTokens, 18, "the scripted server's usage (11 + 7)");
    const again = await runCase(firstCase, { cache });
    assert.equal(again.modelCache?.hits, 1);
    assert.equal(judgeOf(firstCase).usage.totalTokens, 18, "a hit spends no tokens");
    assert.deepEqual([first.judgePassed, first.modelCache], [true, { hits: 0, misses: 1 }]);
    // Another key, the same request: served from the cache (the key is not part of it).
    const second = await runCase(c("sk-other-key-0123456789abcdef"), { cache });
    assert.deepEqual([second.judgePassed, second.judgeReason, second.modelCache], [true, "ok", { hits: 1, misses: 0 }]);
    assert.equal(server.requests.length, 1);
    const files = readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => readFileSync(join(dir, d, f), "utf8")));
    assert.equal(files.length, 1);
    assert.ok(!files[0]!.includes("sk-first-key"), "the API key is not stored");
    // Another repeat of the case asks again.
    await runCase(c("sk-first-key-0123456789abcdef"), { cache, repeat: 2 });
    assert.equal(server.requests.length, 2);
    // Without a cache, no count and a fresh nonce per request.
    const plain = await runCase(c("sk-first-key-0123456789abcdef"));
    assert.equal(plain.modelCache, null);
    const args = { criteria: "c", mode: "binary" as const, input: "q", output: "a" };
    assert.notEqual(buildJudgeRequest(args).user, buildJudgeRequest(args).user);
    assert.equal(derivedNonce(args), derivedNonce({ ...args }));
    assert.notEqual(derivedNonce(args), derivedNonce({ ...args, output: "b" }));
    assert.match(derivedNonce(args), /^[0-9a-f]{32}$/);
  });

  test("the folder store keeps answers whole; cache clear removes only the cache's own folders", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-cache-dir-"));
    const store = new FileResponseStore(dir);
    const key = "ab".padEnd(64, "0");
    assert.equal(await store.get(key), null);
    await store.put(key, { v: 1, storedAt: 1, value: { x: 1 } });
    assert.deepEqual(await store.get(key), { v: 1, storedAt: 1, value: { x: 1 } });
    mkdirSync(join(dir, "keep-me"));
    writeFileSync(join(dir, "notes.txt"), "mine");
    assert.equal(await clearFileCache(dir), 1);
    assert.deepEqual(readdirSync(dir).sort(), ["keep-me", "notes.txt"]);
    assert.equal(await store.get(key), null);
    assert.equal(await clearFileCache(join(dir, "missing")), 0);
  });
});
