// shared/trials/execute-case.ts: the one composition of --repeat and --retries every runner uses:
// each repeat gets its own infra retries, repeats are folded, a cancel stops new repeats and
// retries, the shared limit bounds the runs in flight, a crash is reported.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import pLimit from "p-limit";
import { executeCase } from "../../../shared/trials/execute-case.ts";
import { REPEAT_NOT_STARTED } from "../../../shared/trials/repeats.ts";
import { CaseResult } from "../../../shared/result/result.ts";

const pass = (): CaseResult => new CaseResult({ name: "c", judgePassed: true, attempts: 1 });
const fail = (): CaseResult => new CaseResult({ name: "c", judgePassed: false, attempts: 1 });
function infra(): CaseResult {
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
const base = { timeoutSeconds: 120, limit: null, shell: () => new CaseResult({ name: "c" }) };

describe("executeCase", () => {
  test("repeat 1, retries 0: one run, returned as it is", async () => {
    const calls: number[] = [];
    const r = pass();
    const outcome = await executeCase({ repeat: 1, retries: 0 }, async (rep) => (calls.push(rep), { result: r }), { ...base, signal: new AbortController().signal });
    assert.deepEqual(calls, [1]);
    assert.equal(outcome.result, r);
    assert.equal(outcome.result.repeats ?? null, null);
  });

  test("each repeat is retried on its own infra failure; repeats are folded; attempts count every execution of a repeat", async () => {
    const c = clock();
    const calls: number[] = [];
    // Repeat 2 fails for the infrastructure's sake once, then passes; repeats 1 and 3 pass at once.
    const seen = new Map<number, number>();
    const outcome = await executeCase(
      { repeat: 3, retries: 2 },
      async (rep) => {
        calls.push(rep);
        const n = (seen.get(rep) ?? 0) + 1;
        seen.set(rep, n);
        return { result: rep === 2 && n === 1 ? infra() : pass() };
      },
      { ...base, signal: new AbortController().signal, ...c },
    );
    assert.deepEqual([...calls].sort(), [1, 2, 2, 3]);
    assert.equal(outcome.result.repeats?.length, 3);
    assert.equal(outcome.result.passed, true);
    assert.deepEqual(c.waits, [1000]);
    assert.deepEqual(
      outcome.result.repeats!.map((r) => r.attempts),
      [1, 2, 1],
    );
  });

  test("retries 0: an infra failure stands; a plain failure is never retried", async () => {
    let runs = 0;
    const o1 = await executeCase({ repeat: 1, retries: 0 }, async () => (runs++, { result: infra() }), { ...base, signal: new AbortController().signal, ...clock() });
    assert.equal(runs, 1);
    assert.equal(o1.result.failureKind, "infra");
    runs = 0;
    const o2 = await executeCase({ repeat: 1, retries: 3 }, async () => (runs++, { result: fail() }), { ...base, signal: new AbortController().signal, ...clock() });
    assert.equal(runs, 1);
    assert.equal(o2.result.passed, false);
  });

  test("a cancel before the start: no repeat runs, each is recorded as skipped", async () => {
    const ac = new AbortController();
    ac.abort();
    let runs = 0;
    const outcome = await executeCase({ repeat: 2, retries: 1 }, async () => (runs++, { result: pass() }), { ...base, signal: ac.signal });
    assert.equal(runs, 0);
    assert.equal(outcome.result.repeats?.length, 2);
    assert.ok(outcome.result.repeats!.every((r) => r.skipped && r.error === REPEAT_NOT_STARTED));
  });

  test("a cancel during a repeat: its infra failure is not retried", async () => {
    const ac = new AbortController();
    let runs = 0;
    const outcome = await executeCase(
      { repeat: 1, retries: 5 },
      async () => {
        runs++;
        ac.abort();
        return { result: infra() };
      },
      { ...base, signal: ac.signal, ...clock() },
    );
    assert.equal(runs, 1);
    assert.equal(outcome.result.failureKind, "infra");
  });

  test("the shared limit bounds the runs in flight across repeats", async () => {
    let inFlight = 0;
    let most = 0;
    await executeCase(
      { repeat: 6, retries: 0 },
      async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        return { result: pass() };
      },
      { ...base, limit: pLimit(2), signal: new AbortController().signal },
    );
    assert.equal(most, 2);
  });

  test("a crashed run is reported on the folded outcome and not retried", async () => {
    let runs = 0;
    const outcome = await executeCase(
      { repeat: 2, retries: 3 },
      async (rep) => (runs++, rep === 2 ? { result: infra(), crashed: "thread exited" } : { result: pass() }),
      { ...base, signal: new AbortController().signal, ...clock() },
    );
    assert.equal(runs, 2);
    assert.equal(outcome.crashed, "thread exited");
  });

  test("no retry waits past the case's deadline (its first start plus its timeout)", async () => {
    const c = clock();
    let runs = 0;
    // 1.5 s of timeout: the first wait (1 s) fits, the second (2 s) would end past the deadline.
    await executeCase({ repeat: 1, retries: 5 }, async () => (runs++, { result: infra() }), { ...base, timeoutSeconds: 1.5, signal: new AbortController().signal, ...c });
    assert.equal(runs, 2);
    assert.deepEqual(c.waits, [1000]);
  });
});
