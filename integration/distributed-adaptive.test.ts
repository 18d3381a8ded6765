// Adaptive repeats across the fleet (issue 28): `coordinator run --repeat MIN..MAX` publishes MIN
// trials of each case and, as a case's trials come in, its next batch, each trial its own
// delivery; a worker SIGKILLed mid-run loses nothing (its trials are delivered again). Every trial
// is reported once, in trial order, each case stops where the stopping rule says, and the summary
// counts what the run spent and saved. Real processes on a private nats-server; the cases are
// test/fixtures/coin-suite.ts (sure_* pass every trial, never_* fail every one, coin_* flip a coin).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { countByName, evalfleet, exitOf, fixture, markers, outputOf, readJson, waitFor, type Proc } from "./harness/processes.ts";
import { adaptiveMark } from "../shared/trials/adaptive-repeats.ts";

const COINS = fixture("coin-suite.ts");
const ALL = ["sure_0", "sure_1", "sure_2", "sure_3", "never_0", "never_1", "coin_0", "coin_1"];
const RULE = { min: 3, max: 12, passRate: 0.8, confidence: 0.75 };

interface TrialJSON {
  repeat: number;
  passed: boolean;
  worker: string | null;
  attempts: number;
}
interface CaseJSON {
  name: string;
  passed: boolean;
  decided: boolean | null;
  adaptive_stop: string | null;
  repeats: TrialJSON[];
}

describe("adaptive repeats over the fleet (real processes)", () => {
  const nats = useNatsServer();

  test("--repeat 3..12 over three workers, one SIGKILLed mid-run: each case's batches planned as its trials arrive, every trial reported once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-adaptive-"));
    const runId = "adaptive-1";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir, EVALFLEET_CASE_MS: "400" };
    const report = join(dir, "report.json");
    const c = evalfleet(["coordinator", "run", COINS, "--run-id", runId, "--repeat", "3..12", "--case-pass-rate", "0.8", "--ack-wait", "2", "--json-output", report], env);
    const worker = (): Proc => evalfleet(["worker", COINS, "--run", runId, "--threads", "1", "--concurrency", "2"], env);
    const workers = [worker(), worker(), worker()];
    const startedBy = (p: Proc): number => markers(dir, "started").filter((m) => m.pid === p.pid).length;
    // Mid-run: every worker has run trials, and the run is not over (the sure cases need 6 each).
    await waitFor(() => workers.every((w) => startedBy(w) >= 2), "trials started on each of the three workers", 90_000);
    const [victim, ...survivors] = workers as [Proc, Proc, Proc];
    victim.child.kill("SIGKILL");
    assert.equal((await exitOf(victim, "the killed worker")).signal, "SIGKILL");

    const r = await exitOf(c, "the coordinator", 150_000);
    // The never_* cases fail: exit 1, not 3 (nothing was lost or left incomplete).
    assert.equal(r.code, 1, outputOf(r));
    for (const w of survivors) assert.equal((await exitOf(w, "a surviving worker")).code, 0);

    const json = readJson(report);
    const cases = json.cases as CaseJSON[];
    assert.deepEqual(cases.map((x) => x.name), ALL, "every case once, in declaration order");
    let spent = 0;
    let spread = 0;
    for (const x of cases) {
      const n = x.repeats.length;
      spent += n;
      assert.deepEqual(x.repeats.map((t) => t.repeat), Array.from({ length: n }, (_, i) => i + 1), `${x.name}: each trial once, in trial order`);
      assert.ok(n >= RULE.min && n <= RULE.max, `${x.name}: ${n} trials`);
      const passed = x.repeats.filter((t) => t.passed).length;
      assert.deepEqual({ decided: x.decided, stop: x.adaptive_stop }, (({ decided, stop }) => ({ decided, stop }))(adaptiveMark(passed, n, RULE)), `${x.name}: stopped where the rule says`);
      assert.equal(x.passed, passed / n >= 0.8 - 1e-12, `${x.name}: judged on its pass rate`);
      for (const t of x.repeats) assert.ok(t.attempts === 1 || t.attempts === 2, `${x.name} trial ${t.repeat}: ${t.attempts} attempts`);
      if (new Set(x.repeats.map((t) => t.worker)).size > 1) spread++;
    }
    for (const x of cases.filter((x) => x.name.startsWith("sure_"))) {
      assert.equal(x.repeats.length, 6, `${x.name}: 6 of 6 clear 0.8 at 75%, so it ran batches past MIN`);
      assert.equal(x.passed, true);
    }
    for (const x of cases.filter((x) => x.name.startsWith("never_"))) assert.equal(x.repeats.length, 3, `${x.name}: 0 of 3 clears 0.8`);
    assert.ok(spread >= 1, "the trials of at least one case ran on more than one worker");
    assert.deepEqual(json.summary.adaptive_repeats, { min: 3, max: 12, trials_spent: spent, trials_max: 8 * 12, trials_saved: 8 * 12 - spent, undecided_cases: cases.filter((x) => x.decided === false).length });
    // Each reported trial ran its agent once, more only where the killed worker held it.
    const started = countByName(markers(dir, "started"));
    const victimStarted = countByName(markers(dir, "started").filter((m) => m.pid === victim.pid));
    for (const x of cases) {
      const ran = started.get(x.name) ?? 0;
      assert.ok(ran >= x.repeats.length && ran <= x.repeats.length + (victimStarted.get(x.name) ?? 0), `${x.name}: ${ran} agent runs for ${x.repeats.length} trials`);
    }
  });

  test("coordinator resume keeps MAX, the stopping confidence, --case-pass-rate and --confidence; status counts the later trials", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-adaptive-resume-"));
    const runId = "adaptive-resume-1";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir, EVALFLEET_CASE_MS: "50" };
    const report = join(dir, "report.json");
    const status = async (): Promise<Record<string, number>> => {
      const r = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], env), "coordinator status");
      assert.equal(r.code, 0, outputOf(r));
      return JSON.parse(r.stdout);
    };
    // No worker yet: the first coordinator publishes MIN trials of each case, then dies.
    const first = evalfleet(["coordinator", "run", COINS, "--run-id", runId, "--repeat", "3..12", "--case-pass-rate", "0.8", "--confidence", "0.9"], env);
    await waitFor(async () => (await status().catch(() => ({ queued: 0 }))).queued === 24, "the 8 x 3 first trials queued", 60_000);
    first.child.kill("SIGKILL");
    await exitOf(first, "the killed coordinator");
    const before = await status();
    assert.deepEqual([before.trials, before.trialsMax, before.selected], [3, 12, 24]);

    const workers = [0, 1].map(() => evalfleet(["worker", COINS, "--run", runId, "--threads", "1", "--concurrency", "4"], env));
    const second = evalfleet(["coordinator", "resume", runId, "--json-output", report], env);
    const r = await exitOf(second, "the resumed coordinator", 120_000);
    assert.equal(r.code, 1, outputOf(r));
    for (const w of workers) assert.equal((await exitOf(w, "a worker")).code, 0);
    const json = readJson(report);
    assert.equal(json.summary.case_pass_rate, 0.8, "the run's rule, not the default 1");
    assert.equal(json.summary.confidence, 0.9, "the run's confidence, not the default 0.95");
    assert.equal(json.summary.adaptive_repeats.max, 12);
    for (const x of json.cases as CaseJSON[]) {
      if (x.name.startsWith("sure_")) {
        assert.equal(x.repeats.length, 6, `${x.name}: batches planned by the resumed coordinator, stopped at 0.75`);
        assert.equal(x.passed, true);
      }
      assert.equal(x.passed, x.repeats.filter((t) => t.passed).length / x.repeats.length >= 0.8 - 1e-12, `${x.name}: judged by 0.8`);
    }
    const after = await status();
    assert.equal(after.selected, json.summary.adaptive_repeats.trials_spent, "status counts every trial the run planned");
    assert.equal(after.done, after.selected);
  });
});
