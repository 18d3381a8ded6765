// Spec M1 in distributed mode (issue 19): a case whose agent run ends `cancelled` aborts the suite
// as a local run does. The worker sends the run's status with the result, the coordinator cancels
// the run, the case in flight on the other worker finishes or is cancelled within the cancel
// grace, and every case not started is `skipped: suite aborted after cancelled run`. Real
// nats-server, two real worker processes, a real coordinator.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, outputOf, readJson } from "./harness/processes.ts";

const M1 = fixture("m1-suite.ts");
const ABORTED = "skipped: suite aborted after cancelled run";
const IN_FLIGHT = "cancelled: suite cancelled while the case was running";

describe("a cancelled agent run aborts a distributed suite (spec M1)", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;
  before(() => {
    env = { NATS_URL: nats.url };
  });

  test("across two workers: the run stops, the case in flight elsewhere ends within the grace, the rest are skipped as Agno skips them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-m1-"));
    const runId = "m1-two-workers";
    const workers = [1, 2].map(() => evalfleet(["worker", M1, "--run", runId, "--threads", "1", "--concurrency", "1", "--log-level", "warn"], { ...env, EVALFLEET_TEST_DIR: dir }));
    const report = join(dir, "report.json");
    const coordinator = evalfleet(["coordinator", "run", M1, "--run-id", runId, "--cancel-grace", "10", "--json-output", report], { ...env, EVALFLEET_TEST_DIR: dir });
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 3, `skipped cases make the run incomplete, as locally: ${outputOf(c)}`);
    for (const w of workers) {
      const r = await exitOf(w, "a --run worker once its run is over");
      assert.equal(r.code, 0, r.stderr);
    }

    const json = readJson(report);
    const cases: Array<{ name: string; skipped: boolean; error: string | null; passed: boolean; worker: string | null }> = json.cases;
    assert.equal(cases.length, 22, "every selected case is accounted for");
    const byName = new Map(cases.map((x) => [x.name, x]));
    assert.equal(byName.get("interrupted")!.error, "agent: run cancelled");
    assert.equal(byName.get("interrupted")!.skipped, false);

    // The case in flight on the other worker finished or was cancelled within the grace; never skipped.
    const long = byName.get("long_0")!;
    assert.equal(long.skipped, false, JSON.stringify(long));
    assert.ok(long.passed || long.error === IN_FLIGHT, `long_0 finished or was cancelled in flight: ${JSON.stringify(long)}`);
    assert.notEqual(long.worker, byName.get("interrupted")!.worker, "long_0 ran on the other worker");

    // Every other case: skipped with Agno's reason and never started, or (taken just before the
    // cancel reached its worker) finished or cancelled in flight.
    const skipped = cases.filter((x) => x.skipped);
    const ran = new Set(markers(dir, "started").map((m) => m.name));
    for (const x of skipped) {
      assert.equal(x.error, ABORTED, `${x.name}: ${x.error}`);
      assert.ok(!ran.has(x.name), `${x.name} is skipped, so its agent never started`);
    }
    for (const x of cases.filter((x) => !x.skipped && x.name.startsWith("after_"))) {
      assert.ok(x.passed || x.error === IN_FLIGHT, `${x.name} was in flight: ${JSON.stringify(x)}`);
    }
    assert.ok(skipped.length >= 16, `the suite stopped: ${skipped.length} of 20 later cases skipped (${cases.map((x) => `${x.name}:${x.skipped ? "S" : x.passed ? "P" : "F"}`).join(" ")})`);
    assert.equal(json.summary.skipped, skipped.length);
    // The later cases would have kept both workers busy for 8 s more: the run stopped instead.
    assert.ok(markers(dir, "finished").filter((m) => m.name.startsWith("after_")).length <= 2, "at most one later case per worker ran to its end");
    assert.doesNotMatch(c.stdout, /run cancelled:/, "an abort after a cancelled run is not reported as a cancelled run");
  });
});
