// Runs are isolated. Two suites with the same case names and indexes but different fingerprints
// (test/fixtures/security-isolation-{a,b}.ts) run at the same time on one broker, each with its own
// standing worker (no --run: it watches every run that appears) and its own coordinator. Each
// report holds exactly its own suite's cases and results, each worker ran only its own suite's
// cases (marker files, logs), each coordinator saw only its own worker, and both runs finish.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, readJson, type Proc } from "./harness/processes.ts";
import { NO_NATS_ENV } from "./harness/auth-runs.ts";

const SUITES = { a: fixture("security-isolation-a.ts"), b: fixture("security-isolation-b.ts") } as const;
const NAMES = Array.from({ length: 6 }, (_, i) => `case_${i}`);

describe("security: concurrent runs of different suites never see each other's cases or results", () => {
  const nats = useNatsServer();

  test("two suites, two standing workers, two coordinators at once on one broker", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-isolation-"));
    const env = { ...NO_NATS_ENV, NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir };
    const sides = (["a", "b"] as const).map((s) => ({ s, suite: SUITES[s], runId: `isolation-${s}-${process.pid}`, report: join(dir, `${s}.json`) }));
    const workers = new Map<string, Proc>(sides.map(({ s, suite }) => [s, evalfleet(["worker", suite, "--threads", "1", "--concurrency", "3", "--log-level", "info"], env)]));
    // No ordering needed: a standing worker's watch delivers the manifests that exist already too,
    // so each worker sees both runs, whenever it starts.
    const coordinators = sides.map(({ suite, runId, report }) =>
      evalfleet(["coordinator", "run", suite, "--run-id", runId, "--json-output", report, "--wait-for-workers", "60"], env),
    );
    const finished = await Promise.all(coordinators.map((c, i) => exitOf(c, `the coordinator of ${sides[i]!.runId}`, 90_000)));

    for (const [i, { s, runId, report }] of sides.entries()) {
      const c = finished[i]!;
      const other = s === "a" ? "b" : "a";
      const mine = workers.get(s)!;
      const theirs = workers.get(other)!;
      assert.equal(c.code, 0, `run ${runId} finishes and passes: ${c.stdout}${c.stderr}`);
      assert.match(c.stdout, /^6\/6 passed/m);
      // Only this suite's worker joined this run.
      assert.match(c.stdout, new RegExp(`worker ${mine.label} joined`));
      assert.doesNotMatch(c.stdout, new RegExp(`worker ${theirs.label}`), `the other suite's worker never took part in ${runId}`);
      // Exactly this suite's cases, in order, each with its own agent's answer, each from this suite's worker.
      const r = readJson(report);
      assert.equal(r.summary.run_id, runId);
      assert.deepEqual(
        r.cases.map((x: { index: number; name: string; agent_id: string; output: string; worker: string; passed: boolean }) => [x.index, x.name, x.agent_id, x.output, x.worker, x.passed]),
        NAMES.map((n, j) => [j, n, `agent-${s}`, `isolation-${s} ${n}`, mine.label, true]),
      );
      // The worker's log: it served only its own run.
      const served = mine.stderr.split("\n").filter((l) => l.includes('"msg":"serving run"'));
      assert.deepEqual(served.map((l) => JSON.parse(l).run), [runId], `${s}'s worker served only ${runId}`);
      assert.doesNotMatch(mine.stderr, new RegExp(`isolation-${other}-`), `${s}'s worker never names the other run`);
      assert.doesNotMatch(mine.stderr, /disposing of a bad case message|refusing the run/);
    }
    // Marker files: every case of each suite ran exactly once, in that suite's worker, and nowhere else.
    const markers = readdirSync(dir).filter((f) => f.startsWith("ran."));
    for (const { s } of sides) {
      const ofSuite = markers.filter((f) => f.startsWith(`ran.isolation-${s}.`)).map((f) => f.split("."));
      assert.deepEqual(ofSuite.map((p) => p[2]).sort(), NAMES, `each case of suite ${s} ran once`);
      assert.deepEqual([...new Set(ofSuite.map((p) => Number(p[3])))], [workers.get(s)!.pid], `suite ${s}'s cases ran only in its worker`);
    }
    assert.equal(markers.length, 12);

    // Standing workers stop cleanly.
    for (const [s, w] of workers) {
      w.child.kill("SIGTERM");
      assert.equal((await exitOf(w, `the standing worker of suite ${s}`, 30_000)).code, 0, w.stderr);
    }
  });
});
