// Every phase of a case is bounded on the pool, and the case whose phase overran takes the blame.
// Real piscina threads, real fixtures (test/fixtures/bounds-suite.ts, spawn-suite.ts): a setup or
// teardown that never settles ends at its bound; one that spins synchronously gets its thread
// terminated, with its thread-mates run again; a thread crashed by one case's unhandled rejection
// fails that case only; the processes a case starts die with the case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSuite, type LoadedSuite } from "../../../shared/suite/suite.ts";
import { CasePool } from "../../../worker/pool/case-pool.ts";
import { resultShell } from "../../../shared/result/result-shell.ts";
import type { CaseResult } from "../../../shared/result/result.ts";
import { fixture } from "../../support/paths.ts";

// The fixtures log what ran (and the pids they started) here; threads inherit the environment.
const dir = mkdtempSync(join(tmpdir(), "evalfleet-bounds-"));
process.env.EVALFLEET_TEST_DIR = dir;
const bounds = await loadSuite(fixture("bounds-suite.ts"));
const spawning = await loadSuite(fixture("spawn-suite.ts"));

function runOn(pool: CasePool, suite: LoadedSuite, names: string[]): Promise<CaseResult>[] {
  const hookDefaults = { setup: 30, teardown: 30 };
  return names.map((name) => {
    const i = suite.cases.findIndex((c) => c.name === name);
    const c = suite.cases[i]!;
    return pool.run({
      index: i,
      name,
      defaultTimeout: 60,
      timeoutSeconds: c.resolveTimeout(60),
      hookDefaults,
      hookTimeouts: c.resolveHookTimeouts(hookDefaults),
      hasTeardown: c.teardown !== null,
      maxOutputBytes: 256 * 1024,
      shell: () => resultShell(c, i),
      signal: new AbortController().signal,
    });
  });
}

function events(): string[] {
  return existsSync(join(dir, "events.log")) ? readFileSync(join(dir, "events.log"), "utf8").trim().split("\n") : [];
}

/** Whether `pid` is a live process (a zombie, dead and waiting to be reaped, is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

test("a setup that never settles ends at its bound, without its teardown; a teardown that never settles ends at its", async () => {
  const pool = new CasePool({ suitePath: bounds.path, fingerprint: bounds.fingerprint, threads: 1, concurrency: 2, graceMs: 500, logLevel: "warn" });
  try {
    const [setup, teardown] = (await Promise.all(runOn(pool, bounds, ["hung_setup", "hung_teardown"]))) as [CaseResult, CaseResult];
    assert.equal(setup.error, "setup: exceeded 1s");
    assert.equal(setup.timedOut, false);
    assert.ok(setup.phaseSeconds!.setup >= 0.9 && setup.phaseSeconds!.run === 0, JSON.stringify(setup.phaseSeconds));
    assert.ok(!events().includes("hung_setup teardown"), "a setup that did not complete has no teardown (Agno D7)");
    assert.equal(teardown.error, "cleanup: teardown exceeded 1s");
    assert.ok(teardown.phaseSeconds!.teardown >= 0.9, JSON.stringify(teardown.phaseSeconds));
    assert.equal(teardown.attempts, 1);
  } finally {
    await pool.destroy();
  }
});

test("a teardown that spins synchronously gets its thread terminated past its bound and the grace", async () => {
  const pool = new CasePool({ suitePath: bounds.path, fingerprint: bounds.fingerprint, threads: 1, concurrency: 1, graceMs: 500, logLevel: "warn" });
  try {
    const [r] = await Promise.all(runOn(pool, bounds, ["spinning_teardown"]));
    assert.match(r!.error ?? "", /^cleanup: teardown exceeded 1s; worker: thread terminated (\d+\.\d)s after the teardown deadline: synchronous code ignored the bound$/);
    assert.ok(Number(/terminated (\d+\.\d)s/.exec(r!.error!)![1]) >= 0.5);
    assert.ok(r!.phaseSeconds!.teardown >= 1.5, JSON.stringify(r!.phaseSeconds));
  } finally {
    await pool.destroy();
  }
});

test("a setup spinning synchronously is blamed, not the thread-mate whose deadline came first; the thread-mate runs again and passes", async () => {
  const pool = new CasePool({ suitePath: bounds.path, fingerprint: bounds.fingerprint, threads: 1, concurrency: 2, graceMs: 500, logLevel: "warn" });
  try {
    // mate_a (timeout 1s) is in flight when spinning_setup (setup bound 2s) blocks the thread.
    const [mate, spinner] = await Promise.all(runOn(pool, bounds, ["mate_a", "spinning_setup"]));
    assert.match(spinner!.error ?? "", /^setup: exceeded 2s; worker: thread terminated (\d+\.\d)s after the setup deadline: synchronous code ignored the bound$/);
    assert.equal(spinner!.timedOut, false);
    assert.doesNotMatch(spinner!.error ?? "", /teardown not run/, "its setup never completed: no teardown was due");
    assert.ok(spinner!.phaseSeconds!.setup >= 2, JSON.stringify(spinner!.phaseSeconds));
    assert.equal(mate!.passed, true, mate!.error ?? "");
    assert.equal(mate!.attempts, 2, "the thread-mate ran again on a fresh thread");
    assert.equal(events().filter((e) => e === "start a").length, 2);
  } finally {
    await pool.destroy();
  }
});

test("a case that crashes its thread with an unhandled rejection fails alone; its thread-mates run again and pass", async () => {
  const pool = new CasePool({ suitePath: bounds.path, fingerprint: bounds.fingerprint, threads: 1, concurrency: 3, graceMs: 500, logLevel: "warn" });
  try {
    const [a, crashed, b] = await Promise.all(runOn(pool, bounds, ["mate_a", "crashes", "mate_b"]));
    assert.equal(crashed!.error, "worker: thread crashed: boom: nobody handles this rejection");
    for (const mate of [a!, b!]) {
      assert.equal(mate.passed, true, `${mate.name}: ${mate.error ?? ""}`);
      assert.equal(mate.attempts, 2, `${mate.name} ran again`);
    }
  } finally {
    await pool.destroy();
  }
});

test("the processes a case starts end with it: at its timeout, and when its thread is terminated", async () => {
  const pool = new CasePool({ suitePath: spawning.path, fingerprint: spawning.fingerprint, threads: 1, concurrency: 3, graceMs: 500, logLevel: "warn" });
  try {
    const results = await Promise.all(runOn(pool, spawning, ["spawns_and_waits", "spawns_and_blocks", "exec_promise"]));
    assert.match(results[1]!.error ?? "", /thread terminated/);
    const pids = readFileSync(join(dir, "pids.log"), "utf8").trim().split("\n").map(Number);
    assert.ok(pids.length >= 5, `pids: ${pids.join(", ")}`);
    // Still inside this process, before the pool is gone: nothing but the cases ended them.
    const until = Date.now() + 5_000;
    while (pids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(pids.filter(alive), [], "every process the cases started is gone");
  } finally {
    await pool.destroy();
  }
});
