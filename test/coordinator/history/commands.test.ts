// `--fail-on-regression`, the history commands (`runs`, `show`, `compare`, `flaky`, `report`
// errors) and `cli(cases, { db })`, through the command line's own entry (`main`) in this process
// (cases inline), on real SQLite stores; the history on a scripted one. The same commands as child processes are in
// integration/store-cli.test.ts (PostgreSQL) and integration/html-report.test.ts.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, cli } from "../../../index.ts";
import { main } from "../../../coordinator/cli/program.ts";
import { ResultsStore } from "../../../coordinator/history/store/store.ts";
import type { RunStart } from "../../../coordinator/history/store/run-record.ts";
import { caseRow } from "../../../coordinator/history/store/case-row.ts";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import { MemoryStream, StubAgent } from "../../support/doubles.ts";
import { createTestDatabase, postgresUnavailable } from "../../support/postgres.ts";
import { fixture } from "../../support/paths.ts";

const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-history-cli-${what}-`));
const HISTORY = fixture("history-suite.ts");
const BASIC = fixture("basic-suite.ts");
const pgSkip = await postgresUnavailable();
const drops: Array<() => Promise<void>> = [];
after(async () => {
  for (const d of drops) await d().catch(() => undefined);
});

/** Where a scripted history is written: a SQLite file, or a PostgreSQL database of the test's own. */
const BACKENDS = [
  { name: "sqlite", skip: false as const, url: async (): Promise<string> => `sqlite:${join(tmp("scripted"), "history.db")}` },
  {
    name: "postgres",
    skip: pgSkip ?? (false as const),
    url: async (): Promise<string> => {
      const db = await createTestDatabase();
      drops.push(db.drop);
      return db.url;
    },
  },
];

/** `evalfleet ...args` in this process; its exit code and what it printed. */
async function run(args: string[], env: Record<string, string | undefined> = {}) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  // Records carry this branch and commit, not the checkout's.
  const vars: Record<string, string | undefined> = { EVALFLEET_GIT_BRANCH: "feature", EVALFLEET_GIT_COMMIT: "c0ffee", NO_COLOR: "1", ...env };
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    const code = await main(args, { stdout, stderr, handleSignals: false });
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe("evalfleet run --fail-on-regression", () => {
  test("--fail-on-regression without a store is a usage error", async () => {
    const r = await run(["run", BASIC, "--fail-on-regression"], { EVALFLEET_DB: undefined });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "error: --fail-on-regression needs a results store: pass --db URL or set EVALFLEET_DB\n");
  });

  test("--fail-on-regression: one flip is chance (exit 0); a case from 10/10 to 0/10 trials is a regression (exit 1), even with the pass threshold met", async () => {
    const dir = tmp("regression");
    const db = `sqlite:${join(dir, "results.db")}`;
    // Inline (--threads 0): five runs of the suite, each a process of its own.
    const gate = ["run", HISTORY, "--threads", "0", "--pass-threshold", "0.5", "--fail-on-regression"];
    // EVALFLEET_DB works as --db does.
    const first = await run(gate, { EVALFLEET_DB: db });
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /^regressions: no earlier recorded run of suite 'history' on branch feature to compare with$/m);
    const firstId = /results store: run (\S+) recorded/.exec(first.stdout)![1]!;

    // One case of seven flipping once is what chance does: reported, not failed.
    const second = await run(gate, { EVALFLEET_DB: db, EVALFLEET_TEST_FAIL: "flipper" });
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stdout, /^5\/7 passed, 2 failed/m);
    assert.match(second.stdout, new RegExp(`^regressions: none significant since run ${firstId} \\(.*\\) of suite 'history' on branch feature$`, "m"));
    assert.match(second.stdout, /^ {2}verdict: no significant change \(alpha 0\.05: 0\.025 for the pass rate, 0\.025 for the cases\)$/m);
    assert.match(second.stdout, /^ {2}pass rate 85\.7% -> 71\.4% over 7 cases: difference -14\.3% \[-?\d+\.\d%, \d+\.\d%\], p = 1 \(mcnemar exact\)$/m);
    assert.match(second.stdout, /^ {4}changed, not significant \(1\): flipper \(1\/1 -> 0\/1, p = 1\)$/m);

    // Ten trials a case: flipper from 10/10 (over the first run's trial too) to 0/10 is no chance.
    const repeated = [...gate, "--repeat", "10"];
    const tenOfTen = await run(repeated, { EVALFLEET_DB: db });
    assert.equal(tenOfTen.code, 0, tenOfTen.stdout + tenOfTen.stderr);
    const tenId = /results store: run (\S+) recorded/.exec(tenOfTen.stdout)![1]!;
    const none = await run(repeated, { EVALFLEET_DB: db, EVALFLEET_TEST_FAIL: "flipper" });
    assert.equal(none.code, 1, none.stdout + none.stderr);
    assert.match(none.stdout, new RegExp(`^regressions: significant since run ${tenId} \\(.*\\) of suite 'history' on branch feature: 1 case regressed; the gate fails the run$`, "m"));
    assert.match(none.stdout, /^ {4}regressed \(1\): flipper \(10\/10 \(11\/12 with history\) -> 0\/10, p = [\d.e-]+\)$/m);

    // The same failure with the gate off: the threshold alone decides.
    const ungated = await run(repeated.filter((x) => x !== "--fail-on-regression"), { EVALFLEET_DB: db, EVALFLEET_TEST_FAIL: "flipper" });
    assert.equal(ungated.code, 0, ungated.stdout);

    // Another branch has no history of its own yet.
    const other = await run(gate, { EVALFLEET_DB: db, EVALFLEET_TEST_FAIL: "flipper", EVALFLEET_GIT_BRANCH: "other" });
    assert.equal(other.code, 0, other.stdout);
    assert.match(other.stdout, /no earlier recorded run of suite 'history' on branch other/);

    // Fixed again: the baseline is the last run on the branch (which failed it), so nothing regressed.
    const third = await run(gate, { EVALFLEET_DB: db });
    assert.equal(third.code, 0, third.stdout);
    assert.match(third.stdout, /^regressions: none significant since run \S+ /m);
  });

});

describe("cli(cases, { db })", () => {
  test("a script's own store records its runs; --db on its command line wins", async () => {
    const dir = tmp("script");
    const io = () => ({ stdout: new MemoryStream(), stderr: new MemoryStream(), handleSignals: false });
    const cases = [new Case({ name: "only", agent: new StubAgent(), input: "x", scorer: { score: () => ({ value: 1, passed: true }) } })];
    const o1 = io();
    assert.equal(await cli(cases, { argv: [], db: `sqlite:${join(dir, "own.db")}`, ...o1 }), 0);
    assert.match(o1.stdout.text, /results store: run \S+ recorded in sqlite:.*own\.db \(1 of 1 case result\)/);
    const o2 = io();
    assert.equal(await cli(cases, { argv: ["--db", `sqlite:${join(dir, "flag.db")}`], db: `sqlite:${join(dir, "own.db")}`, ...o2 }), 0);
    assert.match(o2.stdout.text, /recorded in sqlite:.*flag\.db/);
    const own = await ResultsStore.open(`sqlite:${join(dir, "own.db")}`);
    assert.equal((await own.listRuns()).length, 1);
    await own.close();
  });
});

describe("history commands on a scripted history", () => {
  /** Four runs of suite `nightly` on main, one on another branch; outcomes as strings (P/F/S per case). */
  async function scripted(db: string): Promise<{ db: string; ids: string[] }> {
    const store = await ResultsStore.open(db);
    const plan: Array<[string, string, Record<string, [string, number | null]>]> = [
      ["r1", "main", { steady: ["P", 9], flappy: ["P", 8], breaks: ["P", null], fixed: ["F", null] }],
      ["r2", "main", { steady: ["P", 9], flappy: ["F", 4], breaks: ["P", null], fixed: ["F", null] }],
      ["r3", "main", { steady: ["P", 9], flappy: ["P", 8], breaks: ["P", null], fixed: ["F", null], added: ["P", null] }],
      ["r4", "main", { steady: ["P", 7], flappy: ["F", 5], breaks: ["F", null], fixed: ["P", null], added: ["S", null] }],
      ["x1", "other", { steady: ["F", 2] }],
    ];
    for (const [i, [id, branch, cases]] of plan.entries()) {
      const start: RunStart = {
        id,
        kind: "suite",
        suiteName: "nightly",
        suiteFingerprint: null,
        suitePath: null,
        selection: {},
        config: { mode: "threads" },
        judgeModel: "j",
        timeoutSeconds: 60,
        startedAt: `2026-11-2${i}T10:00:00.000Z`,
        gitCommit: `commit${i}`,
        gitBranch: branch,
        host: "h/1",
      };
      await store.beginRun(start);
      const results = Object.entries(cases).map(([name, [o, score]], index) => {
        const r = new CaseResult({ name, index, agentId: "a", sessionId: `eval-${name}-0000000${i}`, durationSeconds: 0.5 + index, attempts: 1, worker: "thread-1" });
        r.judgePassed = o === "S" ? null : o === "P";
        r.judgeReason = o === "P" ? "good" : "bad";
        r.judgeScore = score;
        r.skipped = o === "S";
        if (o === "S") r.error = "skipped: suite aborted after cancelled run";
        return r;
      });
      await store.writeCases(results.map((r) => caseRow(id, r, start.startedAt)));
      const suite = new SuiteResult(results, { runId: id, durationSeconds: 10 + i });
      await store.finishRun(id, { finishedAt: start.startedAt.replace("10:00", "10:01"), status: suite.status === "PASS" ? "passed" : "failed", total: suite.total, passed: suite.passed, failed: suite.failed, skipped: suite.skipped, durationSeconds: suite.durationSeconds, summary: suite.toJSON().summary as never });
    }
    await store.close();
    return { db, ids: plan.map((p) => p[0]) };
  }

  for (const backend of BACKENDS) test(`runs, show, compare, flaky (${backend.name})`, { skip: backend.skip }, async () => {
    const { db } = await scripted(await backend.url());

    const runs = await run(["runs", "--db", db, "--suite", "nightly", "--branch", "main", "--limit", "3"]);
    assert.equal(runs.code, 0, runs.stderr);
    const rows = runs.stdout.split("\n").filter((l) => /^│ (r|x)\d/.test(l));
    assert.deepEqual(rows.map((l) => l.split("│")[1]!.trim()), ["r4", "r3", "r2"], runs.stdout);
    assert.match(runs.stdout, /│ r4 +│ nightly │ 2026-11-23 10:00:00Z │ failed +│ 2\/5 +│ 13s +│ main +│ commit3 +│/);

    const show = await run(["show", "r4", "--db", db]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^run r4 · suite nightly · failed\nstarted 2026-11-23T10:00:00.000Z · finished 2026-11-23T10:01:00.000Z · branch main · commit commit3\n/);
    assert.match(show.stdout, /│ breaks +│ FAIL +│ — +│ — +│ FAIL +│ 2\.5s │/);
    assert.match(show.stdout, /│ added +│ — +│ — +│ — +│ SKIP +│ 4\.5s │/);
    assert.match(show.stdout, /^2\/5 passed, 3 failed \(1 skipped\) in 13s$/m);

    const compare = await run(["compare", "r3", "r4", "--db", db]);
    assert.equal(compare.code, 0, compare.stderr);
    assert.equal(
      compare.stdout,
      [
        "compare r3 (2026-11-22T10:00:00.000Z) -> r4 (2026-11-23T10:00:00.000Z) · suite nightly",
        "",
        "pass -> fail (2): flappy, breaks",
        "fail -> pass (1): fixed",
        "skipped in one run (1): added (pass -> skip)",
        "score changes (2):",
        "  steady: judge 9 -> 7",
        "  flappy: judge 8 -> 5",
        "unchanged: 1",
        "",
        "significance (history: 2 earlier runs of r3's branch in the per-case tests):",
        "verdict: no significant change (alpha 0.05: 0.025 for the pass rate, 0.025 for the cases)",
        "pass rate 75.0% -> 50.0% over 4 cases: difference -25.0% [-74.7%, 46.1%], p = 1 (mcnemar exact)",
        "mean score 8.5 -> 6 over 2 cases: difference -2.5 [-8.853, 3.853], p = 0.5 (sign-flip exact; reported, not gated)",
        "per case: Fisher exact, Holm step-down over the 1 of 4 compared cases that could be significant (Tarone)",
        "  changed, not significant (3): flappy (1/1 (2/3 with history) -> 0/1, p = 1), breaks (1/1 (3/3 with history) -> 0/1, p = 0.25), fixed (0/1 (0/3 with history) -> 1/1, p = 0.25)",
        "  not run: not compared (1): added",
        "  unchanged: 1",
        "",
      ].join("\n"),
    );
    const json = JSON.parse((await run(["compare", "r1", "r3", "--db", db, "--json"])).stdout);
    assert.deepEqual([json.regressions, json.fixes, json.onlyInB], [[], [], ["added"]]);
    // The significance keys: r3 against r4, with r1 and r2 as r3's history.
    const sig = JSON.parse((await run(["compare", "r3", "r4", "--db", db, "--json"])).stdout);
    assert.deepEqual([sig.verdict, sig.p_value, sig.difference, sig.method, sig.history_runs], ["no significant change", 1, -0.25, "mcnemar exact", ["r2", "r1"]]);
    assert.equal(sig.difference_ci.length, 2);
    assert.ok(sig.difference_ci[0] < -0.25 && sig.difference_ci[1] > 0, JSON.stringify(sig.difference_ci));
    assert.deepEqual(sig.cases.map((c: { name: string; verdict: string }) => [c.name, c.verdict]), [["flappy", "changed, not significant"], ["breaks", "changed, not significant"], ["fixed", "changed, not significant"], ["added", "not run: not compared"]]);
    assert.deepEqual(sig.cases[1].baseline, { passed: 3, trials: 3 });
    assert.deepEqual([sig.counts.unchanged, sig.counts.not_run, sig.per_case.correction], [1, 1, "tarone-holm"]);
    // A level that means nothing is refused, naming the flag.
    const zero = await run(["compare", "r3", "r4", "--db", db, "--regression-alpha", "0"]);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--regression-alpha must be a fraction strictly between 0 and 1 \(0\.05 for 5%\), got '0'/);

    const flaky = await run(["flaky", "--db", db, "--branch", "main", "--last", "4"]);
    assert.equal(flaky.code, 0, flaky.stderr);
    assert.match(flaky.stdout, /^Flakiness of suite 'nightly' over the last 4 runs \(branch main\)$/m);
    // Flaky is the interval of the pass rate clear of 5% and 95%: 2 of 4 is; one flip in four runs is not yet.
    assert.match(flaky.stdout, /│ flappy │ 4 +│ 2\/4 +│ 50% \[15%, 85%\] +│ 3 +│ FAIL │ ✓✗✓✗ +│/);
    assert.doesNotMatch(flaky.stdout, /│ (breaks|fixed|steady)/, "a case whose interval reaches 5% or 95% is not listed without --all");
    assert.match(flaky.stdout, /^1 of 5 cases flaky \(the 95% interval of the pass rate over the trials inside \(5%, 95%\)\)$/m);
    const wide = await run(["flaky", "--db", db, "--branch", "main", "--last", "4", "--all", "--confidence", "0.5"]);
    assert.match(wide.stdout, /│ breaks │ 4 +│ 3\/4 +│ 75% \[58%, 87%\] +│ 1 +│ FAIL │ ✓✓✓✗ +│/);
    assert.match(wide.stdout, /│ steady │ 4 +│ 4\/4 +│ 100% \[90%, 100%\] +│ 0 +│ PASS │ ✓✓✓✓ +│/);
    assert.match(wide.stdout, /^3 of 5 cases flaky \(the 50% interval/m, "a narrower interval calls the single flips flaky too");
    const all = JSON.parse((await run(["flaky", "--db", db, "--last", "2", "--json", "--all"])).stdout);
    // The newest suite is picked; the window is the last 2 runs of any branch: r4 and x1.
    assert.deepEqual(all.runs, ["r4", "x1"]);
    assert.deepEqual(all.cases.find((c: { name: string }) => c.name === "steady").outcomes, ["pass", "fail"]);
  });

  test("show keeps a run's data-driven verdicts and error kinds: the Expected column, the failed check's reason, the infrastructure errors", async () => {
    const db = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-show-")), "r.db")}`;
    const store = await ResultsStore.open(db);
    const startedAt = "2026-11-30T10:00:00.000Z";
    await store.beginRun({ id: "e1", kind: "suite", suiteName: "data", suiteFingerprint: null, suitePath: null, selection: {}, config: { mode: "threads" }, judgeModel: null, timeoutSeconds: 60, startedAt, gitCommit: null, gitBranch: null, host: "h/1" });
    const good = new CaseResult({ name: "good_row", index: 0, agentId: "a", durationSeconds: 0.1 });
    good.expectations = { expectedOutput: { method: "contains", passed: true, reason: 'the answer contains "42"' } };
    const bad = new CaseResult({ name: "bad_row", index: 1, agentId: "a", durationSeconds: 0.2 });
    bad.expectations = { expectedOutput: { method: "exact", passed: false, reason: 'the answer is not exactly "43"' } };
    const down = new CaseResult({ name: "down_row", index: 2, agentId: "a", durationSeconds: 0.3 });
    down.addError("agent: 503 Service Unavailable", "infra");
    const results = [good, bad, down];
    await store.writeCases(results.map((r) => caseRow("e1", r, startedAt)));
    const suite = new SuiteResult(results, { runId: "e1", durationSeconds: 1 });
    await store.finishRun("e1", { finishedAt: startedAt, status: "failed", total: 3, passed: suite.passed, failed: suite.failed, skipped: 0, durationSeconds: 1, summary: suite.toJSON().summary as never });
    await store.close();

    const show = await run(["show", "e1", "--db", db]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /│ Case +│ Judge +│ Reliability +│ Scorer +│ Expected +│ Status +│ Time +│/);
    assert.match(show.stdout, /│ bad_row +│ — +│ — +│ — +│ FAIL +│ FAIL +│ 0\.2s +│/);
    assert.match(show.stdout, /^ {2}bad_row: expected_output \(exact\): the answer is not exactly "43"$/m);
    assert.match(show.stdout, /^1\/3 passed, 2 failed, 1 infra error in 1s$/m);
  });

  test("errors: an unknown run, no store, a store that is not there", async () => {
    const { db } = await scripted(`sqlite:${join(tmp("errors"), "history.db")}`);
    const unknown = await run(["show", "nope", "--db", db]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: no run 'nope' in sqlite:\S+ \(evalfleet runs lists them\)\n$/);
    const none = await run(["runs"], { EVALFLEET_DB: undefined });
    assert.equal(none.code, 2);
    assert.equal(none.stderr, "error: no results store: pass --db URL (sqlite:PATH or postgres://...) or set EVALFLEET_DB\n");
    const noHtml = await run(["report", "--db", db]);
    assert.equal(noHtml.code, 2);
    assert.equal(noHtml.stderr, "error: report needs --html OUT.html (the one format it writes)\n");
  });
});
