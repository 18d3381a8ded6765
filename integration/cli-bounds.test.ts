// Every run ends, as a real `evalfleet` child process: an inline run blocked by synchronous code
// (even after SIGTERM), a suite whose loading never ends (run, list, worker), the processes cases
// start (gone once the run is over), and a 50 MB output in local mode (cut as distributed mode
// cuts it). Bounds are short; waits are generous (2 shared cores).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalfleet, fixture, outputOf, waitFor } from "./harness/processes.ts";

/** Whether `pid` is a live process (a zombie, dead and waiting to be reaped, is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("every run ends (child processes)", () => {
  test("--threads 0: a case blocking the main thread ends the process with exit 3 and one line, even after SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-inline-blocked-"));
    const report = join(dir, "report.json");
    const proc = evalfleet(["run", fixture("stuck-suite.ts"), "--threads", "0", "--grace", "0.5", "--name", "spins_forever", "--json-output", report], { EVALFLEET_TEST_DIR: dir });
    await waitFor(() => existsSync(join(dir, "events.log")) && readFileSync(join(dir, "events.log"), "utf8").includes("spin-start"), "the spinner to start", 60_000);
    // Blocked: the handler cannot run; the signal takes effect when the watchdog ends the process at the latest.
    proc.child.kill("SIGTERM");
    const killer = setTimeout(() => proc.child.kill("SIGKILL"), 60_000);
    const r = await proc.done;
    clearTimeout(killer);
    assert.equal(r.code, 3, outputOf(r));
    assert.match(r.stderr, /^evalfleet: case 'spins_forever' is blocking the main thread \(no heartbeat for \d+\.\ds\) past its run's timeout plus the grace \(0\.5s\): .*no report was written; exiting 3/m);
    assert.doesNotMatch(r.stderr, /Waiting for the debugger/);
    assert.equal(existsSync(report), false, "no report was written");
  });

  test("--threads 0: code a timed-out case left running that blocks the main thread after the report ends the process with the run's exit code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-inline-late-"));
    const report = join(dir, "report.json");
    const proc = evalfleet(["run", fixture("late-spinner-suite.ts"), "--threads", "0", "--grace", "0.5", "--json-output", report], { EVALFLEET_TEST_DIR: dir });
    const killer = setTimeout(() => proc.child.kill("SIGKILL"), 90_000);
    const r = await proc.done;
    clearTimeout(killer);
    assert.equal(r.code, 1, outputOf(r));
    assert.ok(readFileSync(join(dir, "events.log"), "utf8").includes("late-spin-start"), "the spin started after the case ended");
    assert.match(r.stdout, /^0\/1 passed, 1 failed/m);
    assert.match(
      r.stderr,
      /^evalfleet: the run is over, but code a case left running \('spins_late': timed out or cancelled while its agent ran\) is blocking the main thread \(no heartbeat for \d+\.\ds\) in --threads 0; exiting with the run's exit code/m,
    );
    assert.equal(JSON.parse(readFileSync(report, "utf8")).cases[0].timed_out, true, "the report was written before");
  });

  describe("a suite whose loading never ends: exit 2 with one line naming the file", () => {
    const unsettled = fixture("unsettled-suite.ts");
    const cases: Array<[string, string[], RegExp]> = [
      ["run: a top-level await that never settles", ["run", unsettled, "--load-timeout", "2"], /^error: .*unsettled-suite\.ts: did not finish loading within 2s \(--load-timeout\): a top-level await that never settles\?$/],
      ["list: the same", ["list", unsettled, "--load-timeout", "2"], /^error: .*unsettled-suite\.ts: did not finish loading within 2s \(--load-timeout\)/],
      ["worker: the same, before it connects anywhere", ["worker", unsettled, "--load-timeout", "2", "--nats", "nats://127.0.0.1:1"], /^error: .*unsettled-suite\.ts: did not finish loading within 2s \(--load-timeout\)/],
      // 10 s: the import chain itself has loaded long before on any machine, so the spin is what overruns.
      ["run: top-level code that blocks the main thread", ["run", fixture("spinning-import-suite.ts"), "--load-timeout", "10"], /^error: .*spinning-import-suite\.ts: did not finish loading within 10s \(--load-timeout\): its top-level code is blocking the main thread/],
    ];
    for (const [what, args, expected] of cases) {
      test(what, async () => {
        const proc = evalfleet(args);
        const killer = setTimeout(() => proc.child.kill("SIGKILL"), 60_000);
        const r = await proc.done;
        clearTimeout(killer);
        assert.equal(r.code, 2, outputOf(r));
        assert.match(r.stderr.trim(), expected);
        assert.equal(r.stderr.trim().split("\n").length, 1, `one line: ${r.stderr}`);
      });
    }
  });

  for (const [mode, args] of [
    ["on threads", ["--threads", "1", "--concurrency", "3"]],
    ["inline (--threads 0)", ["--threads", "0", "--name", "spawns_and_waits", "--name", "exec_promise"]],
  ] as const) {
    test(`${mode}: no process a case started is alive once the run is over`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-spawn-"));
      const r = await evalfleet(["run", fixture("spawn-suite.ts"), "--grace", "0.5", ...args], { EVALFLEET_TEST_DIR: dir }).done;
      assert.equal(r.code, 1, outputOf(r));
      const pids = readFileSync(join(dir, "pids.log"), "utf8").trim().split("\n").map(Number);
      assert.ok(pids.length >= 3, `pids: ${pids.join(", ")}`);
      await waitFor(() => !pids.some(alive), "the cases' processes to be gone", 5_000).catch(() => undefined);
      assert.deepEqual(pids.filter(alive), [], "every process the cases started is gone");
    });
  }

  for (const [mode, args] of [
    ["on threads", []],
    ["inline (--threads 0)", ["--threads", "0"]],
  ] as const) {
    test(`${mode}: a 50 MB output is cut to --max-output-kb (default 256) and marked; its check saw it whole`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-huge-"));
      const report = join(dir, "report.json");
      const r = await evalfleet(["run", fixture("huge-output-suite.ts"), "--json-output", report, ...args]).done;
      assert.equal(r.code, 0, outputOf(r));
      const [c] = JSON.parse(readFileSync(report, "utf8")).cases;
      assert.equal(c.passed, true, "the scorer saw all 50 MB");
      assert.ok(Buffer.byteLength(c.output) <= 256 * 1024, `kept ${Buffer.byteLength(c.output)} bytes`);
      assert.match(c.output, /\n\[evalfleet: output truncated: 52428800 bytes, kept the first \d+\]$/);
      assert.ok(statSync(report).size < 1024 * 1024, `the report is ${statSync(report).size} bytes`);
    });
  }

  test("--max-output-kb sets the bound", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-huge-"));
    const report = join(dir, "report.json");
    const r = await evalfleet(["run", fixture("huge-output-suite.ts"), "--max-output-kb", "16", "--json-output", report]).done;
    assert.equal(r.code, 0, outputOf(r));
    const [c] = JSON.parse(readFileSync(report, "utf8")).cases;
    assert.ok(Buffer.byteLength(c.output) <= 16 * 1024 && Buffer.byteLength(c.output) > 15 * 1024, `kept ${Buffer.byteLength(c.output)} bytes`);
  });
});
