// Workers fail under a running run: a thread out of memory, a worker paused past its lease, an
// output of tens of megabytes. Real nats-server, real coordinator and worker processes.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { countByName, evalfleet, exitOf, fixture, markers, readJson, waitFor } from "./harness/processes.ts";
import { MAX_OUTPUT_BYTES } from "../shared/wire/fit-result.ts";

const server = useNatsServer();

describe("worker faults", () => {
  test("a thread that runs out of memory: the case is recorded with a clear error and the worker keeps serving", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-oom-"));
    const report = join(dir, "report.json");
    const worker = evalfleet(["worker", fixture("oom-suite.ts"), "--nats", server.url, "--concurrency", "1", "--threads", "1", "--thread-memory", "64", "--log-level", "warn"]);
    const coordinator = evalfleet(["coordinator", "run", fixture("oom-suite.ts"), "--nats", server.url, "--run-id", "oom-1", "--max-attempts", "2", "--json-output", report]);
    const c = await exitOf(coordinator, "the coordinator", 120_000);
    assert.equal(c.code, 1, c.stdout + c.stderr);
    const cases = readJson(report).cases as Array<{ name: string; passed: boolean; error: string | null; attempts: number; worker: string }>;
    assert.deepEqual(cases.map((x) => x.name), ["before", "hog", "after"]);
    const hog = cases[1]!;
    assert.match(hog.error!, /^worker: thread crashed: ran out of memory/);
    assert.equal(hog.attempts, 2, "handed back once, recorded on its last delivery");
    assert.equal(cases[0]!.passed, true);
    assert.equal(cases[2]!.passed, true);
    assert.equal(worker.exited, false, "the standing worker is still serving");
    assert.ok(cases.every((x) => x.worker === worker.label), "the one worker ran every case, before and after the crash");
    worker.child.kill("SIGTERM");
    await exitOf(worker, "the worker", 30_000);
  });

  test("a worker paused past its lease: the case is redelivered elsewhere, and its late duplicate result is ignored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sigstop-"));
    const report = join(dir, "report.json");
    const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const runId = "sigstop-1";
    const sleeper = evalfleet(["worker", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run", runId, "--concurrency", "8", "--log-level", "warn"], env);
    const coordinator = evalfleet(["coordinator", "run", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run-id", runId, "--ack-wait", "2", "--json-output", report], env);
    await waitFor(() => markers(dir, "started").filter((m) => m.pid === sleeper.pid).length === 8, "the first worker to hold all 8 cases");
    sleeper.child.kill("SIGSTOP");
    try {
      const rescuer = evalfleet(["worker", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run", runId, "--concurrency", "8", "--log-level", "warn"], env);
      await waitFor(() => markers(dir, "started").filter((m) => m.pid === rescuer.pid).length === 8, "the cases to be redelivered to the second worker", 60_000);
      writeFileSync(join(dir, "release-all"), "");
      const c = await exitOf(coordinator, "the coordinator", 60_000);
      assert.equal(c.code, 0, c.stdout + c.stderr);
      const cases = readJson(report).cases as Array<{ name: string; passed: boolean; worker: string; attempts: number }>;
      assert.equal(cases.length, 8);
      assert.ok(cases.every((x) => x.passed && x.worker === rescuer.label && x.attempts >= 2), JSON.stringify(cases));
      assert.equal((await exitOf(rescuer, "the second worker", 30_000)).code, 0);
    } finally {
      sleeper.child.kill("SIGCONT");
    }
    // Awake again: its cases see the release, finish, and publish results that lose to the rescuer's.
    const s = await exitOf(sleeper, "the woken worker", 60_000);
    assert.equal(s.code, 0, `the woken worker exits cleanly: ${s.stderr}`);
    assert.doesNotMatch(s.stderr, /could not publish a result/);
    const starts = countByName(markers(dir, "started"));
    assert.ok([...starts.values()].every((n) => n === 2), "each case ran on both workers, and the report still holds it once");
  });

  test("a case output of tens of megabytes is cut to the documented limit with a marker", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-big-"));
    const report = join(dir, "report.json");
    const worker = evalfleet(["worker", fixture("big-output-suite.ts"), "--nats", server.url, "--run", "big-1", "--log-level", "warn"]);
    const coordinator = evalfleet(["coordinator", "run", fixture("big-output-suite.ts"), "--nats", server.url, "--run-id", "big-1", "--json-output", report]);
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    const [huge, small] = readJson(report).cases as Array<{ name: string; output: string }>;
    assert.equal(small!.output, "short answer");
    assert.ok(Buffer.byteLength(huge!.output) <= MAX_OUTPUT_BYTES, `cut to the limit, got ${Buffer.byteLength(huge!.output)} bytes`);
    const marker = /\n\[evalfleet: output truncated: 20971520 bytes, kept the first (\d+)\]$/.exec(huge!.output);
    assert.ok(marker, `the output ends with the truncation marker: ...${huge!.output.slice(-120)}`);
    assert.equal(Number(marker[1]), huge!.output.length - marker[0].length, "the marker says how much was kept");
    assert.ok(/^x+$/.test(huge!.output.slice(0, Number(marker[1]))), "what is kept is the start of the output");
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0);
  });
});
