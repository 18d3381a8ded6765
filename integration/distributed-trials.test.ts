// Trials spread over the fleet (issue 28): with --repeat N each trial of a case is its own
// delivery, so one case's trials run on several workers at once; results still fold into one case
// in declaration order, every trial reported exactly once, even with a worker SIGKILLed mid-run.
// Real processes on a private nats-server; the cases of test/fixtures/fleet-faults-suite.ts hold
// until the test releases them, so "mid-run" is a state the test waits for.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { countByName, evalfleet, exitOf, fixture, markers, outputOf, readJson, waitFor, type Proc } from "./harness/processes.ts";

const FAULTS = fixture("fleet-faults-suite.ts");
const ALL = Array.from({ length: 8 }, (_, i) => `case_${String(i).padStart(2, "0")}`);
const TRIALS = 3;

interface TrialJSON {
  repeat: number;
  passed: boolean;
  worker: string | null;
  attempts: number;
}

describe("trials spread over the fleet (real processes)", () => {
  const nats = useNatsServer();

  test("three workers, one SIGKILLed mid-run: every trial reported once, a case's trials on more than one worker", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-trials-"));
    const runId = "trials-1";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir };
    const c = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--repeat", String(TRIALS), "--ack-wait", "2", "--json-output", join(dir, "report.json")], env);
    const worker = (): Proc => evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "2"], { ...env, EVALFLEET_HOLD: "1" });
    const workers = [worker(), worker(), worker()];
    const startedBy = (p: Proc): string[] => markers(dir, "started").filter((m) => m.pid === p.pid).map((m) => m.name);
    // Every worker holds two trials: six in flight, the first cases' trials among them.
    await waitFor(() => workers.every((w) => startedBy(w).length === 2), "two trials in flight on each of the three workers", 60_000);
    const [victim, ...survivors] = workers as [Proc, Proc, Proc];
    const lost = startedBy(victim);

    victim.child.kill("SIGKILL");
    assert.equal((await exitOf(victim, "the killed worker")).signal, "SIGKILL");
    writeFileSync(join(dir, "release-all"), "");

    const r = await exitOf(c, "the coordinator", 120_000);
    assert.equal(r.code, 0, outputOf(r));
    for (const w of survivors) assert.equal((await exitOf(w, "a surviving worker")).code, 0);

    const report = readJson(join(dir, "report.json"));
    assert.deepEqual(report.cases.map((x: { name: string }) => x.name), ALL, "every case once, in declaration order");
    assert.equal(report.summary.repeat, TRIALS);
    const survivorLabels = new Set(survivors.map((w) => w.label));
    let spread = 0;
    let redelivered = 0;
    for (const x of report.cases as Array<{ name: string; passed: boolean; error: string | null; repeats: TrialJSON[] }>) {
      assert.equal(x.passed, true, `${x.name}: ${x.error}`);
      assert.deepEqual(x.repeats.map((t) => t.repeat), [1, 2, 3], `${x.name}: each trial once, in trial order`);
      for (const t of x.repeats) {
        assert.equal(t.passed, true, `${x.name} trial ${t.repeat}`);
        assert.ok(survivorLabels.has(t.worker ?? ""), `${x.name} trial ${t.repeat} reported by a surviving worker (${t.worker})`);
        if (t.attempts === 2) redelivered++;
        else assert.equal(t.attempts, 1, `${x.name} trial ${t.repeat}`);
      }
      if (new Set(x.repeats.map((t) => t.worker)).size > 1) spread++;
    }
    assert.equal(redelivered, lost.length, "the killed worker's trials, and only they, were delivered twice");
    assert.ok(spread >= 1, "the trials of at least one case ran on more than one worker");
    // Every trial's agent ran once, the killed worker's trials once more.
    const started = countByName(markers(dir, "started"));
    const lostByName = countByName(lost.map((name) => ({ name, pid: victim.pid })));
    for (const name of ALL) assert.equal(started.get(name), TRIALS + (lostByName.get(name) ?? 0), name);
    // Before the kill the first case's trials were on more than one worker at once.
    const firstCase = markers(dir, "started").filter((m) => m.name === ALL[0]);
    assert.ok(new Set(firstCase.map((m) => m.pid)).size > 1, `${ALL[0]}'s trials ran in more than one process`);
  });
});
