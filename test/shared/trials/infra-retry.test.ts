// shared/trials/infra-retry.ts: --retries re-runs infra failures only, counts every execution, waits
// 1 s doubling within the case's deadline, and stops at once on a cancel.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { withInfraRetries } from "../../../shared/trials/infra-retry.ts";
import { CaseResult } from "../../../shared/result/result.ts";

function infraResult(): CaseResult {
  const r = new CaseResult({ name: "c", attempts: 1 });
  r.addError("judge: returned no result", "infra");
  return r;
}

/** A fake clock: sleep advances it and records each wait. */
function clock(): { now: () => number; sleep: (ms: number) => Promise<boolean>; waits: number[] } {
  let t = 1_000_000;
  const waits: number[] = [];
  return { now: () => t, sleep: async (ms) => ((t += ms), waits.push(ms), true), waits };
}

describe("withInfraRetries", () => {
  test("an infra failure is run again until it passes; attempts counts every execution", async () => {
    const c = clock();
    let runs = 0;
    const outcome = await withInfraRetries(async () => ({ result: ++runs < 3 ? infraResult() : new CaseResult({ name: "c", judgePassed: true, attempts: 1 }) }), { retries: 5, ...c });
    assert.equal(runs, 3);
    assert.equal(outcome.result.passed, true);
    assert.equal(outcome.result.attempts, 3);
    assert.deepEqual(c.waits, [1000, 2000]);
  });

  test("the retries run out: the last result stands, with every execution counted", async () => {
    const c = clock();
    let runs = 0;
    const outcome = await withInfraRetries(async () => (runs++, { result: infraResult() }), { retries: 2, ...c });
    assert.equal(runs, 3);
    assert.equal(outcome.result.failureKind, "infra");
    assert.equal(outcome.result.attempts, 3);
  });

  test("a failed check, an agent error and a timeout are never retried", async () => {
    for (const make of [
      () => new CaseResult({ name: "c", judgePassed: false, attempts: 1 }),
      () => {
        const r = new CaseResult({ name: "c", attempts: 1 });
        r.addError("agent: boom");
        return r;
      },
      () => new CaseResult({ name: "c", timedOut: true, attempts: 1, error: "timeout: exceeded 1s" }),
    ]) {
      let runs = 0;
      await withInfraRetries(async () => (runs++, { result: make() }), { retries: 3, ...clock() });
      assert.equal(runs, 1);
    }
  });

  test("0 retries runs once", async () => {
    let runs = 0;
    await withInfraRetries(async () => (runs++, { result: infraResult() }), { retries: 0, ...clock() });
    assert.equal(runs, 1);
  });

  test("a collateral re-run on the pool counts as an execution too", async () => {
    let runs = 0;
    const outcome = await withInfraRetries(async () => ({ result: ++runs === 1 ? Object.assign(infraResult(), { attempts: 2 }) : new CaseResult({ name: "c", judgePassed: true, attempts: 1 }) }), { retries: 1, ...clock() });
    assert.equal(outcome.result.attempts, 3);
  });

  test("no retry whose wait would end past the case's deadline (its first start plus its timeout)", async () => {
    const c = clock();
    let runs = 0;
    // 2.5 s of timeout: the 1 s wait fits, the 2 s one after it would not.
    await withInfraRetries(async () => (runs++, { result: infraResult() }), { retries: 5, timeoutSeconds: 2.5, ...c });
    assert.equal(runs, 2);
    assert.deepEqual(c.waits, [1000]);
  });

  test("a cancelled run starts no retry, and a cancel during the wait ends it at once", async () => {
    const aborted = AbortSignal.abort();
    let runs = 0;
    await withInfraRetries(async () => (runs++, { result: infraResult() }), { retries: 3, signal: aborted });
    assert.equal(runs, 1);
    const controller = new AbortController();
    runs = 0;
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await withInfraRetries(async () => (runs++, { result: infraResult() }), { retries: 3, signal: controller.signal });
    assert.equal(runs, 1);
    assert.ok(Date.now() - started < 900, "the 1 s wait was cut short");
  });

  test("a crashed outcome is returned as it is (a distributed worker hands it back)", async () => {
    let runs = 0;
    const outcome = await withInfraRetries(async () => (runs++, { result: infraResult(), crashed: "thread died" }), { retries: 3, ...clock() });
    assert.equal(runs, 1);
    assert.equal(outcome.crashed, "thread died");
  });

  test("onRetry is told each wait with the error", async () => {
    const seen: number[] = [];
    await withInfraRetries(async () => ({ result: infraResult() }), { retries: 2, ...clock(), onRetry: (i) => seen.push(i.delayMs) });
    assert.deepEqual(seen, [1000, 2000]);
  });
});
