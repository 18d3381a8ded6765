// Chaos soak, bounded in time: a run of EVALFLEET_SOAK_CASES cases (default 3,000) over three
// workers, one of which is SIGKILLed and restarted every EVALFLEET_SOAK_KILL_MS (default 1,000 ms),
// and a coordinator killed once and resumed. At the end: every case exactly once, in declaration
// order, attempts recorded, and the figures printed. docs/development.md documents a longer variant.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, waitFor, type Proc, outputOf } from "./harness/processes.ts";

after(killLeftovers);

const CASES = Number(process.env.EVALFLEET_SOAK_CASES ?? 3000);
const KILL_EVERY_MS = Number(process.env.EVALFLEET_SOAK_KILL_MS ?? 1000);
/** The victim runs 16 cases at once: two pulls and a bit, so that its first pull's cases are done. */
const VICTIM_RUNS_BEFORE_KILL = 40;

/** Lines the agents of one worker process wrote: how many cases it started. */
function ranBy(dir: string, pid: number): number {
  try {
    return readFileSync(join(dir, `runs.${pid}.log`), "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

function ranCases(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir).filter((f) => f.startsWith("runs."))) n += readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean).length;
  return n;
}

test(`chaos soak: ${CASES} cases, a worker killed every ${KILL_EVERY_MS} ms, the coordinator killed once and resumed`, async () => {
  const server = await startNatsServer();
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-soak-"));
  const report = join(dir, "report.json");
  const runId = "soak-1";
  const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_CASES: String(CASES), EVALFLEET_CASE_MS: "150" };
  const workerArgs = ["worker", fixture("steady-suite.ts"), "--nats", server.url, "--run", runId, "--concurrency", "16", "--log-level", "error"];
  const started = Date.now();
  let kills = 0;
  try {
    const steady = [evalfleet(workerArgs, env), evalfleet(workerArgs, env)];
    // The victim runs one thread, so that each replacement is up and taking cases quickly.
    const victimArgs = [...workerArgs, "--threads", "1"];
    let victim: Proc = evalfleet(victimArgs, env);
    const coordArgs = ["--nats", server.url, "--ack-wait", "2", "--max-attempts", "10", "--json-output", report, "--log-level", "error"];
    const first = evalfleet(["coordinator", "run", fixture("steady-suite.ts"), "--run-id", runId, ...coordArgs], env);
    let stop = false;
    const chaos = (async () => {
      while (!stop) {
        await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
        // Kill it only once it is working, so the kill lands on cases in flight, and only once it is
        // past its first pull: that pull takes the cases the last kill left, and killing the victim
        // on them every time would chain those cases to their last delivery (10 kills in a row on
        // the same cases is no longer chaos, it is a poison pill, which max-deliveries reports).
        const until = Date.now() + 20_000;
        while (!stop && ranBy(dir, victim.pid) < VICTIM_RUNS_BEFORE_KILL && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
        if (stop) break;
        victim.child.kill("SIGKILL");
        await victim.done;
        kills++;
        victim = evalfleet(victimArgs, env);
      }
    })();
    await waitFor(() => ranCases(dir) >= CASES * 0.3, "30% of the cases to have run", 120_000);
    first.child.kill("SIGKILL");
    await first.done;
    await waitFor(() => ranCases(dir) >= CASES * 0.5, "the workers to go on without a coordinator", 120_000);
    const resumed = evalfleet(["coordinator", "resume", runId, fixture("steady-suite.ts"), ...coordArgs], env);
    const r = await exitOf(resumed, "the resumed coordinator", 240_000);
    stop = true;
    await chaos;
    assert.ok(existsSync(report), `no report written; ${outputOf(r)}`);
    const payload = readJson(report) as { summary: { total: number; passed: number }; cases: Array<{ index: number; name: string; passed: boolean; attempts: number; error: string | null }> };
    assert.equal(payload.summary.total, CASES);
    assert.deepEqual(
      payload.cases.map((c) => c.index),
      Array.from({ length: CASES }, (_, i) => i),
      "declaration order, every case once",
    );
    assert.equal(new Set(payload.cases.map((c) => c.name)).size, CASES);
    const failed = payload.cases.filter((c) => !c.passed);
    assert.deepEqual(failed.slice(0, 5).map((c) => `${c.name}: ${c.error}`), [], `${failed.length} cases did not pass`);
    assert.equal(r.code, 0, outputOf(r));
    assert.ok(payload.cases.every((c) => c.attempts >= 1), "attempts recorded for every case");
    const redeliveries = payload.cases.reduce((n, c) => n + (c.attempts - 1), 0);
    assert.ok(kills >= 2, `the victim was killed ${kills} times`);
    assert.ok(redeliveries > 0, "the kills landed on cases in flight, which were redelivered");
    const wall = (Date.now() - started) / 1000;
    // The figures of the soak, for the log of the CI run.
    const attempts = Math.max(...payload.cases.map((c) => c.attempts));
    console.log(`soak: ${CASES} cases in ${wall.toFixed(1)}s wall, ${kills} worker kills, 1 coordinator kill, ${redeliveries} redeliveries (at most ${attempts} attempts for one case), ${ranCases(dir)} agent runs`);
    for (const w of steady) w.child.kill("SIGTERM");
    await Promise.all(steady.map((w) => exitOf(w, "a worker", 60_000)));
  } finally {
    await killLeftovers();
    await server.stop();
  }
});
