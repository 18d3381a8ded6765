// Options of the distributed commands not covered elsewhere: the whole-run --deadline, a standing
// worker's --exit-when-idle, and -v streaming the workers' run events to the coordinator.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, readJson, root, waitFor } from "./harness/processes.ts";

const server = useNatsServer();

describe("distributed options", () => {
  test("--deadline cancels the run when it passes: in-flight cases are torn down, the rest skipped, exit 3", async () => {
    // The deadline clock starts once the worker holds its cases, however long that takes on a busy
    // machine: a first coordinator publishes the run (with no deadline) and is killed once the
    // worker holds two cases; the coordinator that resumes the run has the deadline, and a resumed
    // run's deadline counts from the resume.
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-deadline-"));
    const report = join(dir, "report.json");
    const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const worker = evalfleet(["worker", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run", "deadline-1", "--concurrency", "2", "--log-level", "warn"], env);
    const first = evalfleet(["coordinator", "run", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run-id", "deadline-1"], env);
    await waitFor(() => markers(dir, "started").length === 2, () => `the worker to hold two cases:\n${worker.stderr}`, 120_000);
    first.child.kill("SIGKILL");
    await exitOf(first, "the first coordinator");
    const started = Date.now();
    const coordinator = evalfleet(["coordinator", "resume", "deadline-1", "--nats", server.url, "--deadline", "4", "--json-output", report], env);
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 3, c.stdout + c.stderr);
    assert.ok(Date.now() - started >= 4000, "not before the deadline");
    assert.match(c.stdout, /run incomplete: run cancelled: the run's deadline of 4s passed/);
    const cases = readJson(report).cases as Array<{ name: string; skipped: boolean; error: string | null }>;
    assert.equal(cases.length, 8);
    const inFlight = cases.filter((x) => !x.skipped);
    assert.equal(inFlight.length, 2, `the two cases the worker held: ${c.stdout}${c.stderr}${worker.stderr}`);
    for (const x of inFlight) assert.match(x.error!, /cancelled: suite cancelled while the case was running/);
    for (const x of cases.filter((y) => y.skipped)) assert.equal(x.error, "skipped: run cancelled (the run's deadline of 4s passed)");
    assert.equal(markers(dir, "teardown").length, 2, "the in-flight cases were torn down");
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0, "the run is over for the worker");
  });

  test("a standing worker with --exit-when-idle exits 0 once it has had nothing to do for that long", async () => {
    const started = Date.now();
    const worker = evalfleet(["worker", fixture("basic-suite.ts"), "--nats", server.url, "--exit-when-idle", "2", "--log-level", "info"]);
    const w = await exitOf(worker, "the idle worker", 60_000);
    assert.equal(w.code, 0, w.stderr);
    assert.ok(Date.now() - started >= 2000);
    assert.match(w.stderr, /idle for 2s/);
  });

  test("-v streams the workers' run events to the coordinator's console", async () => {
    const suite = join(root, "examples", "math-suite.ts");
    const worker = evalfleet(["worker", suite, "--nats", server.url, "--run", "verbose-1", "--log-level", "warn"]);
    const coordinator = evalfleet(["coordinator", "run", suite, "--nats", server.url, "--run-id", "verbose-1", "--name", "factorial_uses_calculator", "-v"]);
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    await waitFor(() => /↳ factorial_uses_calculator: tool_call_started factorial/.test(coordinator.stdout), "the streamed tool event", 5_000);
    assert.match(c.stdout, /↳ factorial_uses_calculator: run_started/);
    assert.match(c.stdout, /Response\n10! = 3628800/);
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0);
  });
});
