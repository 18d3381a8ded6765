// Every phase of a case is bounded in the lifecycle itself (worker/runtime/lifecycle.ts): setup and
// teardown within their own bounds (outside the timeout, as Agno keeps them, but never unbounded),
// seconds per phase on the result, the output cut on the result while the checks see it whole, and
// the child processes a case starts ended with it. runCase in this thread, no pool.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Case, runCase, type Agent } from "../../../index.ts";
import { StubScorer } from "../../support/doubles.ts";

const never = (): Promise<never> => new Promise(() => {});
const answers: Agent = { id: "answers", async run() { return { content: "done" }; } };
const passes = { score: () => ({ value: 1, passed: true }) };

function mk(extra: Partial<ConstructorParameters<typeof Case>[0]> = {}): Case {
  return new Case({ name: "bounded", input: "x", agent: answers, scorer: passes, ...extra });
}

describe("bounded hooks", () => {
  test("a setup that never settles ends at the case's bound: `setup: exceeded Ns`, no run, no teardown", async () => {
    let tornDown = false;
    let ran = false;
    const c = mk({ setup: never, setupTimeoutSeconds: 0.2, teardown: () => void (tornDown = true), agent: { async run() { ran = true; return { content: "x" }; } } });
    const r = await runCase(c);
    assert.equal(r.error, "setup: exceeded 0.2s");
    assert.equal(r.timedOut, false, "the run's timeout did not pass: setup is outside it");
    assert.equal(ran, false);
    assert.equal(tornDown, false);
    assert.ok(r.phaseSeconds!.setup >= 0.19 && r.phaseSeconds!.run === 0, JSON.stringify(r.phaseSeconds));
  });

  test("a teardown that never settles ends at the runner's bound when the case sets none: `cleanup: teardown exceeded Ns`", async () => {
    const r = await runCase(mk({ teardown: never }), { teardownTimeout: 0.2 });
    assert.equal(r.error, "cleanup: teardown exceeded 0.2s");
    assert.ok(r.phaseSeconds!.teardown >= 0.19, JSON.stringify(r.phaseSeconds));
  });

  test("the case's own bound wins over the runner's; a slow setup within its bound is no error, even past the timeout (Agno D11)", async () => {
    const slow = () => new Promise((resolve) => setTimeout(() => resolve("ctx"), 300));
    const r = await runCase(mk({ setup: slow, setupTimeoutSeconds: 5, timeoutSeconds: 0.1 }), { setupTimeout: 0.05 });
    assert.equal(r.error, null);
    assert.equal(r.passed, true);
  });

  test("the setup's context still reaches teardown, and the phases add up to about the duration", async () => {
    let seen: unknown;
    const r = await runCase(mk({ setup: () => "ctx", teardown: (ctx) => void (seen = ctx) }));
    assert.equal(seen, "ctx");
    const p = r.phaseSeconds!;
    assert.deepEqual(Object.keys(p), ["setup", "run", "checks", "teardown"]);
    assert.ok(p.setup + p.run + p.checks + p.teardown <= r.durationSeconds + 0.005, `${JSON.stringify(p)} vs ${r.durationSeconds}`);
  });
});

describe("the output bound", () => {
  test("the result keeps at most maxOutputBytes, marked; the checks see the whole output", async () => {
    const whole = "z".repeat(100_000);
    const scorer = new StubScorer({ value: 1, passed: true });
    const r = await runCase(mk({ agent: { async run() { return { content: whole }; } }, scorer }), { maxOutputBytes: 4096 });
    assert.ok(Buffer.byteLength(r.output!) <= 4096);
    assert.match(r.output!, /\[evalfleet: output truncated: 100000 bytes, kept the first \d+\]$/);
    assert.equal(String(scorer.calls[0]!.run.content).length, 100_000);
  });
});

describe("child processes", () => {
  test("a process the case started (and its own child) is ended when the case times out", async () => {
    const pids: number[] = [];
    const agent: Agent = {
      async run() {
        pids.push(spawn("sh", ["-c", "sleep 1000; true"], { stdio: "ignore" }).pid!);
        await never();
        return { content: "x" };
      },
    };
    const r = await runCase(mk({ agent, timeoutSeconds: 0.3 }));
    assert.equal(r.timedOut, true);
    const gone = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    const until = Date.now() + 5_000;
    while (!gone(pids[0]!) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(gone(pids[0]!), "the shell is gone (reaped: this process was its parent)");
  });
});
