// The results store from the command line, as real `evalfleet` processes: --db on `run`, bad and
// unreachable stores (exit 2, one line, no password), --fail-on-regression, the default file next
// to the suite, PostgreSQL end to end (skipped, saying why, when no server answers). The history
// commands on a scripted history are in test/coordinator/history/commands.test.ts.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { closedPort, evalfleet, exitOf, fixture, killLeftovers, readJson, root, outputOf } from "./harness/processes.ts";
import { createTestDatabase, postgresUnavailable } from "../test/support/postgres.ts";

const HISTORY = fixture("history-suite.ts");
const BASIC = fixture("basic-suite.ts");
const pgSkip = await postgresUnavailable();
const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-store-cli-${what}-`));
const noStack = (text: string): void => assert.doesNotMatch(text, /\n\s+at /, "no stack trace");
const drops: Array<() => Promise<void>> = [];

after(async () => {
  await killLeftovers();
  for (const d of drops) await d().catch(() => undefined);
});

/** `evalfleet ...args` to the end, with a fixed branch and commit (not the checkout's). */
async function run(args: string[], env: Record<string, string> = {}) {
  const p = evalfleet(args, { EVALFLEET_GIT_BRANCH: "feature", EVALFLEET_GIT_COMMIT: "c0ffee", ...env });
  return exitOf(p, `evalfleet ${args.join(" ")}`, 60_000);
}

describe("evalfleet run --db", () => {
  test("records the run and says where; the recorded cases are the JSON report's", async () => {
    const dir = tmp("record");
    const db = `sqlite:${join(dir, "results.db")}`;
    const r = await run(["run", HISTORY, "--db", db, "--json-output", join(dir, "report.json"), "--threads", "2"]);
    assert.equal(r.code, 1, outputOf(r)); // `broken` always fails
    const report = readJson(join(dir, "report.json"));
    assert.match(r.stdout, new RegExp(`^results store: run ${report.summary.run_id} recorded in sqlite:${dir}/results.db \\(7 of 7 case results\\)$`, "m"));
    const store = await ResultsStore.open(db);
    const recorded = await store.caseRecords(report.summary.run_id);
    assert.deepEqual(recorded.map((c) => c.report), report.cases);
    const runRec = await store.findRun(report.summary.run_id);
    assert.deepEqual([runRec.status, runRec.gitBranch, runRec.gitCommit, runRec.config.mode], ["failed", "feature", "c0ffee", "threads"]);
    assert.deepEqual(runRec.summary, report.summary);
    await store.close();
  });

  test("a bad URL: exit 2, one line naming it (password redacted), nothing run", async () => {
    const dir = tmp("bad-url");
    const r = await run(["run", BASIC, "--db", "mysql://root:hunter2@db/evals"], { EVALFLEET_TEST_DIR: dir });
    assert.equal(r.code, 2, outputOf(r));
    assert.equal(r.stderr, "error: results store URL 'mysql://root:***@db/evals' has an unsupported scheme 'mysql': use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE\n");
    assert.equal(r.stdout, "");
    noStack(r.stderr);
    assert.equal(existsSync(join(dir, "runs.log")), false, "no case ran");
  });

  test("an unreachable PostgreSQL: exit 2 before any case runs, the password never printed", async () => {
    const dir = tmp("unreachable");
    const port = await closedPort();
    const r = await run(["run", BASIC, "--db", `postgres://evals:hunter2-secret@127.0.0.1:${port}/evals`, "--db-timeout", "3"], { EVALFLEET_TEST_DIR: dir });
    assert.equal(r.code, 2, outputOf(r));
    assert.equal(r.stderr, `error: results store postgres://evals:***@127.0.0.1:${port}/evals: cannot connect: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    assert.doesNotMatch(r.stdout + r.stderr, /hunter2/);
    assert.equal(existsSync(join(dir, "runs.log")), false, "no case ran");
  });

  test("--db sqlite: puts the store next to the suite, in .evalfleet/", async () => {
    // Inside the package, so the suite's `import "evalfleet"` resolves.
    const dir = join(root, "tmp", `store-default-${process.pid}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(join(dir, "suite.ts"), readFileSync(BASIC, "utf8"));
      const r = await run(["run", join(dir, "suite.ts"), "--db", "sqlite:", "--name", "alpha"]);
      assert.equal(r.code, 0, outputOf(r));
      assert.ok(existsSync(join(dir, ".evalfleet", "results.db")));
      assert.match(r.stdout, new RegExp(`recorded in sqlite:${dir}/.evalfleet/results.db \\(1 of 1 case result\\)`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL: run, runs and show against a real server", { skip: pgSkip ?? false }, async () => {
    const pg = await createTestDatabase();
    drops.push(pg.drop);
    const r = await run(["run", BASIC, "--db", pg.url, "--threads", "1"]);
    assert.equal(r.code, 1, outputOf(r));
    const id = /results store: run (\S+) recorded/.exec(r.stdout)![1]!;
    const runs = await run(["runs", "--db", pg.url, "--json"]);
    assert.equal(runs.code, 0, runs.stderr);
    assert.deepEqual(JSON.parse(runs.stdout).map((x: { id: string }) => x.id), [id]);
    const show = await run(["show", id.slice(0, 8), "--db", pg.url]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, new RegExp(`^run ${id} · suite basic · failed$`, "m"));
    assert.match(show.stdout, /│ gamma │ — +│ — +│ FAIL +│ FAIL +│/);
    assert.match(show.stdout, /^2\/3 passed, 1 failed in /m);
  });
});
