// Distributed mode keeps every bound, with real processes on a private nats-server: a setup or
// teardown that never settles is recorded at its bound (the case's own, or the run's
// --setup-timeout carried by the manifest); a setup spinning synchronously is blamed while its
// thread-mate runs again; --max-output-kb reaches the workers through the manifest.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-bounds-${what}-`));

describe("distributed mode keeps every bound (real processes)", () => {
  const nats = useNatsServer();

  test("hung and spinning hooks are recorded at their bounds; the spinner's thread-mate runs again and passes", async () => {
    const dir = tmp("hooks");
    const runId = "bounds-hooks-1";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir };
    const names = ["hung_setup", "hung_teardown", "mate_a", "spinning_setup", "suite_bound"].flatMap((n) => ["--name", n]);
    const c = evalfleet(["coordinator", "run", fixture("bounds-suite.ts"), "--run-id", runId, "--setup-timeout", "1.5", "--json-output", join(dir, "report.json"), ...names], env);
    // One thread, two cases at a time: mate_a and spinning_setup can share it.
    const w = evalfleet(["worker", fixture("bounds-suite.ts"), "--run", runId, "--threads", "1", "--concurrency", "2", "--grace", "0.5"], env);
    const r = await exitOf(c, "the coordinator", 180_000);
    assert.equal(r.code, 1, outputOf(r));
    assert.equal((await exitOf(w, "the worker", 60_000)).code, 0);
    const cases = Object.fromEntries(readJson(join(dir, "report.json")).cases.map((x: { name: string }) => [x.name, x]));
    assert.equal(cases.hung_setup.error, "setup: exceeded 1s");
    assert.equal(cases.hung_teardown.error, "cleanup: teardown exceeded 1s");
    // The case sets no bound: the run's --setup-timeout reached the worker through the manifest.
    assert.equal(cases.suite_bound.error, "setup: exceeded 1.5s");
    assert.match(cases.spinning_setup.error, /^setup: exceeded 2s; worker: thread terminated \d+\.\ds after the setup deadline: synchronous code ignored the bound$/);
    assert.equal(cases.mate_a.passed, true, cases.mate_a.error);
    assert.ok(cases.hung_setup.phase_seconds.setup >= 0.9, JSON.stringify(cases.hung_setup.phase_seconds));
  });

  test("--max-output-kb reaches the workers through the manifest", async () => {
    const dir = tmp("output");
    const runId = "bounds-output-1";
    const env = { NATS_URL: nats.url };
    const c = evalfleet(["coordinator", "run", fixture("huge-output-suite.ts"), "--run-id", runId, "--max-output-kb", "16", "--json-output", join(dir, "report.json")], env);
    const w = evalfleet(["worker", fixture("huge-output-suite.ts"), "--run", runId, "--threads", "1"], env);
    const r = await exitOf(c, "the coordinator", 180_000);
    assert.equal(r.code, 0, outputOf(r));
    assert.equal((await exitOf(w, "the worker", 60_000)).code, 0);
    const [x] = readJson(join(dir, "report.json")).cases;
    assert.ok(Buffer.byteLength(x.output) <= 16 * 1024, `kept ${Buffer.byteLength(x.output)} bytes`);
    assert.match(x.output, /\[evalfleet: output truncated: 52428800 bytes, kept the first \d+\]$/);
  });
});
