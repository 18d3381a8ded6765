// The start order from history (`--order`) and `--estimate`, as real `evalfleet` processes: the
// first recorded run starts in declaration order, the next one longest first from the recorded
// durations, locally and across a worker on a private nats-server; the report stays in
// declaration order; `random:SEED` is replayable; a bad value exits 2; the estimate of a recorded
// run matches what the run recorded.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalfleet, exitOf, fixture, killLeftovers, outputOf, readJson, waitFor } from "./harness/processes.ts";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { orderCases } from "../coordinator/run/schedule-order.ts";
import { SCHEDULE_MS } from "../test/fixtures/schedule-suite.ts";

const SUITE = fixture("schedule-suite.ts");
const DECLARED = Object.keys(SCHEDULE_MS);
const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-schedule-${what}-`));
/** Longest first by the fixture's lengths (distinct, 50 ms apart at least). */
const LONGEST_FIRST = [...DECLARED].sort((a, b) => SCHEDULE_MS[b]! - SCHEDULE_MS[a]!);

/** The names of the newest recorded run of the suite, longest recorded duration first: what `--order history` must start from one run of history. */
async function recordedLongestFirst(db: string): Promise<string[]> {
  const store = await ResultsStore.open(db);
  try {
    const [run] = await store.listRuns({ suiteName: "schedule", limit: 1 });
    return (await store.caseRecords(run!.id)).sort((a, b) => b.durationSeconds - a.durationSeconds || a.index - b.index).map((c) => c.name);
  } finally {
    await store.close();
  }
}

after(killLeftovers);

/** The names in `starts.log` of `dir` (the order the agents started), then empties it. */
function startsOf(dir: string): string[] {
  const path = join(dir, "starts.log");
  const names = readFileSync(path, "utf8").trim().split("\n");
  rmSync(path);
  return names;
}

/** One case at a time, so the order the cases start in is the order they were handed out. */
async function runLocal(dir: string, extra: string[]) {
  const p = evalfleet(["run", SUITE, "--threads", "1", "--concurrency", "1", "--db", `sqlite:${join(dir, "r.db")}`, "--json-output", join(dir, "report.json"), ...extra], { EVALFLEET_TEST_DIR: dir });
  return exitOf(p, `evalfleet run ${extra.join(" ")}`, 90_000);
}

describe("--order on evalfleet run", () => {
  test("declared without history, longest first with it; the report in declaration order either way", async () => {
    const dir = tmp("local");
    const first = await runLocal(dir, []);
    assert.equal(first.code, 0, outputOf(first));
    assert.deepEqual(startsOf(dir), DECLARED, "no recorded durations yet: declaration order");
    assert.doesNotMatch(first.stdout, /^order:/m);
    const fromHistory = await recordedLongestFirst(`sqlite:${join(dir, "r.db")}`);
    assert.deepEqual(fromHistory, LONGEST_FIRST, "the recorded durations order as the fixture's lengths do");

    const second = await runLocal(dir, []);
    assert.equal(second.code, 0, outputOf(second));
    assert.deepEqual(startsOf(dir), fromHistory);
    assert.match(second.stdout, /^order: longest first from the recorded durations \(0 of 6 cases without history go by their timeout\)$/m);
    assert.deepEqual(readJson(join(dir, "report.json")).cases.map((c: { name: string }) => c.name), DECLARED);

    const declared = await runLocal(dir, ["--order", "declared"]);
    assert.equal(declared.code, 0, outputOf(declared));
    assert.deepEqual(startsOf(dir), DECLARED);

    const random = await runLocal(dir, ["--order", "random:11"]);
    assert.equal(random.code, 0, outputOf(random));
    const expected = orderCases(DECLARED.map((name, index) => ({ index, case: { name } })), { kind: "random", seed: 11 }, () => ({ seconds: 0, fromHistory: false })).map((c) => c.case.name);
    assert.deepEqual(startsOf(dir), expected, "the seed's order, as the pure function computes it");
    assert.match(random.stdout, /^order: random:11 /m);
    assert.deepEqual(readJson(join(dir, "report.json")).cases.map((c: { name: string }) => c.name), DECLARED);
  });

  test("a bad --order: exit 2, one line naming the flag and the value, nothing run", async () => {
    const dir = tmp("bad");
    const r = await exitOf(evalfleet(["run", SUITE, "--order", "shortest"], { EVALFLEET_TEST_DIR: dir }), "a bad --order", 60_000);
    assert.equal(r.code, 2, outputOf(r));
    assert.match(r.stderr, /--order must be declared, history or random\[:SEED\].*got 'shortest'/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.throws(() => readFileSync(join(dir, "starts.log")), "no case ran");
  });
});

describe("--estimate", () => {
  test("against a recorded run: its tokens and cost, its durations on the pool, nothing run", async () => {
    const dir = tmp("estimate");
    const db = `sqlite:${join(dir, "r.db")}`;
    const none = await exitOf(evalfleet(["run", SUITE, "--db", db, "--estimate", "--concurrency", "2"], { EVALFLEET_TEST_DIR: dir }), "estimate before any run", 60_000);
    assert.equal(none.code, 0, outputOf(none));
    assert.match(none.stdout, /^ {2}without history: 6 cases /m);
    assert.match(none.stdout, /^ {2}duration: 6m 00s \(360 s; 720 s of work\)$/m, "the 120 s timeout of each stands in, 3 per slot");

    const ran = await runLocal(dir, []);
    assert.equal(ran.code, 0, outputOf(ran));
    startsOf(dir);
    const store = await ResultsStore.open(db);
    const [run] = await store.listRuns({ suiteName: "schedule" });
    const records = await store.caseRecords(run!.id);
    await store.close();
    const tokens = records.reduce((n, c) => n + (c.totalTokens ?? 0), 0);
    const cost = records.reduce((n, c) => n + (c.costUsd ?? 0), 0);
    const seconds = Object.fromEntries(records.map((c) => [c.name, c.durationSeconds]));
    // Two slots, longest first: `long` on one, every other case on the other.
    const makespan = Math.max(seconds.long!, DECLARED.filter((n) => n !== "long").reduce((s, n) => s + seconds[n]!, 0));

    const est = await exitOf(evalfleet(["run", SUITE, "--db", db, "--estimate", "--concurrency", "2"], { EVALFLEET_TEST_DIR: dir }), "estimate", 60_000);
    assert.equal(est.code, 0, outputOf(est));
    assert.match(est.stdout, /^estimate: 6 cases on 2 slots \(--concurrency\), order history$/m);
    assert.match(est.stdout, new RegExp(`^ {2}tokens: +${tokens}$`, "m"));
    assert.match(est.stdout, new RegExp(`^ {2}cost: +\\$${cost.toFixed(4).replace(".", "\\.")}$`, "m"));
    assert.match(est.stdout, /^ {2}without history: 0 cases$/m);
    assert.match(est.stdout, new RegExp(`^ {2}duration: \\S+ \\(${Math.round(makespan * 10) / 10} s;`, "m"));
    assert.match(est.stdout, /^nothing was run$/m);
    assert.throws(() => readFileSync(join(dir, "starts.log")), "no case ran");
    // Adaptive repeats spend between MIN and MAX trials a case: the estimate gives both ends.
    const range = await exitOf(evalfleet(["run", SUITE, "--db", db, "--estimate", "--concurrency", "2", "--repeat", "2..4"], { EVALFLEET_TEST_DIR: dir }), "estimate of 2..4", 60_000);
    assert.equal(range.code, 0, outputOf(range));
    assert.match(range.stdout, /^estimate: 6 cases x 2\.\.4 runs \(adaptive\) on 2 slots \(--concurrency\), order history$/m);
    assert.match(range.stdout, new RegExp(`^ {2}tokens: +${Math.round(tokens * 2)} to ${Math.round(tokens * 4)}$`, "m"));
    const after = await ResultsStore.open(db);
    assert.equal((await after.listRuns({ suiteName: "schedule" })).length, 1, "an estimate records no run");
    await after.close();
  });
});

describe("--order on coordinator run (one worker, one slot)", () => {
  const nats = useNatsServer();

  test("the second recorded run is published longest first, coordinator status shows its ETA; the report in declaration order", async () => {
    const dir = tmp("dist");
    const db = `sqlite:${join(dir, "r.db")}`;
    for (const i of [1, 2]) {
      const want = i === 1 ? DECLARED : await recordedLongestFirst(db);
      const runId = `schedule-${i}`;
      // The second run is stretched 4x: long enough to ask for its status while it runs.
      const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir, SCHEDULE_SCALE: i === 1 ? "1" : "4" };
      const worker = evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "1"], env);
      const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", runId, "--db", db, "--json-output", join(dir, "report.json")], env);
      if (i === 2) {
        await waitFor(() => { try { return readFileSync(join(dir, "starts.log"), "utf8").split("\n").length >= 3; } catch { return false; } }, "two cases started", 60_000);
        const status = await exitOf(evalfleet(["coordinator", "status", runId], env), "coordinator status", 60_000);
        assert.equal(status.code, 0, outputOf(status));
        assert.match(status.stdout, /^eta (\d+s|\d+m \d\ds) \(from the recorded durations of the suite\)$/m, status.stdout);
      }
      const c = await exitOf(coordinator, `coordinator run ${i}`, 120_000);
      assert.equal(c.code, 0, outputOf(c));
      assert.equal((await exitOf(worker, "the worker", 60_000)).code, 0);
      assert.deepEqual(startsOf(dir), want, `run ${i}`);
      assert.deepEqual(readJson(join(dir, "report.json")).cases.map((x: { name: string }) => x.name), DECLARED);
    }
  });
});
