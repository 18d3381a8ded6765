// Pure logic of the results store and run history: store URLs and their redaction, compare,
// flakiness and regressions on scripted histories, usage from metrics, git from the CI's
// environment, the HTML report's escaping. No database here (see store.test.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseStoreUrl, redactUrl, DEFAULT_SQLITE_FILE } from "../coordinator/store/url.ts";
import { compareRuns } from "../coordinator/history/compare.ts";
import { flakiness, isFlaky } from "../coordinator/history/flaky.ts";
import { findRegressions } from "../coordinator/history/regression.ts";
import type { HistoryCase } from "../coordinator/history/outcome.ts";
import { usageFromMetrics } from "../shared/usage.ts";
import { gitFromEnvironment } from "../coordinator/store/git.ts";
import { runStatus, judgeModelName } from "../coordinator/store/record-run.ts";
import { numbered } from "../coordinator/store/postgres-driver.ts";
import { pendingMigrations, SCHEMA_VERSION, MIGRATIONS } from "../coordinator/store/schema.ts";
import { renderHtmlReport } from "../coordinator/report/html.ts";
import type { CaseRecord, RunRecord } from "../coordinator/store/records.ts";
import { CaseResult, SuiteResult } from "../shared/result.ts";

/** A scripted case: `P` passed, `F` failed, `S` skipped; scores optional. */
function c(name: string, outcome: "P" | "F" | "S", judgeScore: number | null = null, scoreValue: number | null = null): HistoryCase {
  return { name, passed: outcome === "P", skipped: outcome === "S", judgeScore, scoreValue, durationSeconds: 0.1 };
}

describe("store URLs", () => {
  test("sqlite:PATH resolves against the working directory; absolute paths and sqlite:// stay", () => {
    assert.deepEqual(parseStoreUrl("sqlite:results.db", { cwd: "/w" }), { kind: "sqlite", path: "/w/results.db", display: "sqlite:/w/results.db" });
    assert.deepEqual(parseStoreUrl("sqlite:/var/evals.db", { cwd: "/w" }), { kind: "sqlite", path: "/var/evals.db", display: "sqlite:/var/evals.db" });
    assert.deepEqual(parseStoreUrl("sqlite:///var/evals.db"), { kind: "sqlite", path: "/var/evals.db", display: "sqlite:/var/evals.db" });
    assert.deepEqual(parseStoreUrl("sqlite::memory:"), { kind: "sqlite", path: ":memory:", display: "sqlite::memory:" });
  });

  test("sqlite: alone is the default file next to the suite, and needs a suite", () => {
    assert.deepEqual(parseStoreUrl("sqlite:", { cwd: "/w", suitePath: "evals/nightly.ts" }).kind, "sqlite");
    assert.equal((parseStoreUrl("sqlite", { cwd: "/w", suitePath: "evals/nightly.ts" }) as { path: string }).path, join("/w/evals", DEFAULT_SQLITE_FILE));
    assert.throws(() => parseStoreUrl("sqlite:"), { code: "STORE_URL_INVALID", message: "results store URL 'sqlite:' has no path, and there is no suite file to put the default one next to: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE" });
  });

  test("postgres URLs are kept whole for the driver and shown with the password redacted", () => {
    const t = parseStoreUrl("postgres://evals:s3cr%40t@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(t.kind, "postgres");
    assert.equal((t as { connectionString: string }).connectionString, "postgres://evals:s3cr%40t@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(t.display, "postgres://evals:***@db.internal:5433/evalfleet?sslmode=require");
    assert.equal(parseStoreUrl("postgresql://evals@localhost/e").display, "postgresql://evals@localhost/e");
  });

  test("bad URLs are refused with the URL (password redacted) and what would do", () => {
    assert.throws(() => parseStoreUrl("mysql://root:hunter2@db/evals"), {
      code: "STORE_URL_INVALID",
      message: "results store URL 'mysql://root:***@db/evals' has an unsupported scheme 'mysql': use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE",
    });
    assert.throws(() => parseStoreUrl("results.db"), { message: "results store URL 'results.db' has no scheme: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE (did you mean sqlite:results.db?)" });
    assert.throws(() => parseStoreUrl("   "), { message: "results store URL is empty: use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE" });
    assert.throws(() => parseStoreUrl("postgres://u:pw@:99999/x"), (err: Error) => {
      assert.doesNotMatch(err.message, /pw/);
      return true;
    });
  });

  test("redaction covers the userinfo password and password= parameters, nothing else", () => {
    assert.equal(redactUrl("postgres://u:p%40ss@h/db"), "postgres://u:***@h/db");
    assert.equal(redactUrl("postgres://h/db?user=u&password=hunter2&sslmode=require"), "postgres://h/db?user=u&password=***&sslmode=require");
    assert.equal(redactUrl("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
    assert.equal(redactUrl("sqlite:/tmp/a:b@c.db"), "sqlite:/tmp/a:b@c.db");
  });
});

describe("compare A B", () => {
  test("pass -> fail, fail -> pass, score changes, cases only on one side, skips apart", () => {
    const a = [c("steady", "P", 8), c("regressed", "P"), c("fixed", "F"), c("dropped", "P"), c("was_skipped", "S"), c("drifted", "P", 9, 1)];
    const b = [c("steady", "P", 8), c("regressed", "F"), c("fixed", "P"), c("added", "F"), c("was_skipped", "P"), c("drifted", "P", 7, 0.5)];
    const r = compareRuns(a, b);
    assert.deepEqual(r.regressions, ["regressed"]);
    assert.deepEqual(r.fixes, ["fixed"]);
    assert.deepEqual(r.skipChanges, [{ name: "was_skipped", from: "skip", to: "pass" }]);
    assert.deepEqual(r.scoreChanges, [{ name: "drifted", judge: { from: 9, to: 7 }, scorer: { from: 1, to: 0.5 } }]);
    assert.deepEqual(r.onlyInA, ["dropped"]);
    assert.deepEqual(r.onlyInB, ["added"]);
    assert.equal(r.unchanged, 2);
  });

  test("a score that appears or disappears is a change; identical runs change nothing", () => {
    const r = compareRuns([c("x", "P", null)], [c("x", "P", 6)]);
    assert.deepEqual(r.scoreChanges, [{ name: "x", judge: { from: null, to: 6 }, scorer: null }]);
    const same = compareRuns([c("x", "P", 6), c("y", "F")], [c("x", "P", 6), c("y", "F")]);
    assert.deepEqual([same.regressions, same.fixes, same.scoreChanges, same.onlyInA, same.onlyInB, same.unchanged], [[], [], [], [], [], 2]);
  });
});

describe("--fail-on-regression", () => {
  test("a case that passed in the baseline and fails now is a regression; new, skipped and still-failing cases are not", () => {
    const baseline = [c("ok", "P"), c("breaks", "P"), c("was_failing", "F"), c("skipped_now", "P")];
    const current = [c("ok", "P"), c("breaks", "F"), c("was_failing", "F"), c("skipped_now", "S"), c("new_and_failing", "F")];
    assert.deepEqual(findRegressions(baseline, current), ["breaks"]);
    assert.deepEqual(findRegressions([], current), []);
  });
});

describe("flaky", () => {
  const history = (rows: Record<string, string>) => {
    // Each string is one case's outcomes, oldest first; "." = not in that run.
    const n = Math.max(...Object.values(rows).map((s) => s.length));
    return Array.from({ length: n }, (_, i) => ({
      runId: `r${i}`,
      cases: Object.entries(rows)
        .filter(([, s]) => s[i] !== ".")
        .map(([name, s]) => c(name, s[i] as "P" | "F" | "S")),
    }));
  };

  test("pass rate and flips per case over the window, flakiest first", () => {
    const rows = flakiness(history({ steady: "PPPPP", broken: "FFFFF", flappy: "PFPFP", once: "PPPFP", late: "..PPF", skippy: "PSPSP" }));
    const by = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.deepEqual(rows.map((r) => r.name), ["flappy", "once", "late", "broken", "skippy", "steady"]);
    assert.deepEqual({ runs: by.flappy!.runs, passes: by.flappy!.passes, flips: by.flappy!.flips }, { runs: 5, passes: 3, flips: 4 });
    assert.equal(by.flappy!.passRate, 0.6);
    assert.equal(by.once!.flips, 2);
    assert.equal(by.broken!.flips, 0);
    assert.equal(by.broken!.passRate, 0);
    assert.deepEqual(by.late!.outcomes, [null, null, "pass", "pass", "fail"]);
    assert.equal(by.late!.last, "fail");
    // Skipped runs are not outcomes: pass, (skip), pass is no flip.
    assert.deepEqual({ runs: by.skippy!.runs, flips: by.skippy!.flips }, { runs: 3, flips: 0 });
    assert.deepEqual(rows.filter(isFlaky).map((r) => r.name), ["flappy", "once", "late"]);
  });

  test("an empty window has no cases", () => {
    assert.deepEqual(flakiness([]), []);
  });
});

describe("run record pieces", () => {
  test("usage from an agent's metrics: totals computed, junk ignored, nothing reported -> null", () => {
    assert.deepEqual(usageFromMetrics({ inputTokens: 10, outputTokens: 5, costUsd: 0.02 }), { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.02 });
    assert.deepEqual(usageFromMetrics({ totalTokens: 7 }), { inputTokens: null, outputTokens: null, totalTokens: 7, costUsd: null });
    assert.equal(usageFromMetrics({ inputTokens: "10" as never, requests: 3 }), null);
    assert.equal(usageFromMetrics({ inputTokens: -1 }), null);
    assert.equal(usageFromMetrics(null), null);
  });

  test("git commit and branch from the CI's environment; evalfleet's own variables win", () => {
    assert.deepEqual(gitFromEnvironment({ GITHUB_SHA: "abc", GITHUB_REF_NAME: "main" }), { commit: "abc", branch: "main" });
    assert.deepEqual(gitFromEnvironment({ GITHUB_SHA: "abc", GITHUB_HEAD_REF: "feature", GITHUB_REF_NAME: "12/merge" }), { commit: "abc", branch: "feature" });
    assert.deepEqual(gitFromEnvironment({ CI_COMMIT_SHA: "def", CI_COMMIT_REF_NAME: "dev" }), { commit: "def", branch: "dev" });
    assert.deepEqual(gitFromEnvironment({ GIT_COMMIT: "123", GIT_BRANCH: "origin/release" }), { commit: "123", branch: "release" });
    assert.deepEqual(gitFromEnvironment({ EVALFLEET_GIT_BRANCH: "nightly", GITHUB_REF_NAME: "main", GITHUB_SHA: "abc" }), { commit: "abc", branch: "nightly" });
    assert.deepEqual(gitFromEnvironment({}), { commit: null, branch: null });
  });

  test("run status: cancelled, incomplete, passed, failed", () => {
    const pass = new SuiteResult([new CaseResult({ name: "a", reliabilityPassed: true })]);
    const fail = new SuiteResult([new CaseResult({ name: "a", reliabilityPassed: false })]);
    assert.equal(runStatus(pass, false), "passed");
    assert.equal(runStatus(fail, false), "failed");
    assert.equal(runStatus(pass, true), "incomplete");
    assert.equal(runStatus(new SuiteResult([], { cancelled: true }), true), "cancelled");
  });

  test("judge model name: the suite's judge, else the default judge only when it is configured", () => {
    assert.equal(judgeModelName({ id: "my-judge", judge: async () => ({}) }, {}), "my-judge");
    assert.equal(judgeModelName(null, { OPENAI_API_KEY: "sk-x" }), "gpt-5-mini");
    assert.equal(judgeModelName(null, { OPENAI_API_KEY: "sk-x", EVALFLEET_JUDGE_MODEL: "qwen2.5:14b" }), "qwen2.5:14b");
    assert.equal(judgeModelName(null, {}), null);
  });

  test("schema: migrations are numbered from 1 without gaps; pending ones follow the current version", () => {
    assert.deepEqual(MIGRATIONS.map((m) => m.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    assert.deepEqual(pendingMigrations(0).map((m) => m.version), [1, 2]);
    assert.deepEqual(pendingMigrations(1).map((m) => m.version), [2]);
    assert.deepEqual(pendingMigrations(SCHEMA_VERSION), []);
    assert.equal(numbered("INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"), "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)");
  });
});

describe("HTML report (rendering)", () => {
  const run: RunRecord = {
    id: "run-1",
    kind: "suite",
    suiteName: "nightly <b>",
    suiteFingerprint: "f".repeat(64),
    suitePath: "/evals/nightly.ts",
    selection: { name: null, tag: ["smoke"], cases: ["x"] },
    config: { mode: "threads", concurrency: 4 },
    judgeModel: "judge-1",
    timeoutSeconds: 60,
    startedAt: "2026-11-30T09:00:00.000Z",
    finishedAt: "2026-11-30T09:01:00.000Z",
    status: "failed",
    total: 1,
    passed: 0,
    failed: 1,
    skipped: 0,
    durationSeconds: 60,
    summary: null,
    gitCommit: "0123456789abcdef",
    gitBranch: "main",
    host: "h/1",
  };
  const hostile = "<script>alert(1)</script>\"'&";
  const record = {
    runId: "run-1",
    index: 0,
    name: `x${hostile}`,
    agentId: "a",
    teamId: null,
    tags: ["smoke"],
    sessionId: "eval-x-00000000",
    durationSeconds: 1.5,
    judgePassed: false,
    judgeReason: hostile,
    judgeScore: 3,
    reliabilityPassed: null,
    reliability: null,
    output: hostile,
    toolsCalled: ["t<1>"],
    timedOut: false,
    skipped: false,
    passed: false,
    error: `judge: ${hostile}`,
    scoreValue: null,
    scorePassed: null,
    scoreReason: null,
    scoreDetail: null,
    attempts: 1,
    worker: "thread-1",
    inputTokens: 10,
    outputTokens: 2,
    totalTokens: 12,
    costUsd: 0.001,
    report: {} as CaseRecord["report"],
    recordedAt: "2026-11-30T09:01:00.000Z",
  } satisfies CaseRecord;

  test("every recorded string is escaped; nothing can be fetched (CSP, no URL)", () => {
    const html = renderHtmlReport({ run, cases: [record], history: [run], generatedAt: "2026-11-30T10:00:00.000Z" });
    assert.doesNotMatch(html, /<script>alert/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&#39;&amp;/);
    assert.match(html, /<title>nightly &lt;b&gt; · run run-1<\/title>/);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
    assert.doesNotMatch(html, /https?:\/\//, "no URL at all: nothing to fetch");
    // One <script> element only: the page's own.
    assert.equal(html.match(/<script>/g)?.length, 1);
  });

  test("the charts: pass rate and duration per run, judge score histogram, slowest cases", () => {
    const older: RunRecord = { ...run, id: "run-0", startedAt: "2026-11-29T09:00:00.000Z", passed: 1, total: 1, durationSeconds: 30 };
    const html = renderHtmlReport({ run, cases: [record], history: [older, run] });
    assert.match(html, /id="chart-pass-rate"[\s\S]*<title>run-0 · 2026-11-29T09:00:00.000Z · 1\/1 passed · 30s<\/title>/);
    assert.match(html, /id="chart-duration"/);
    assert.match(html, /<title>score 3: 1 case<\/title>/);
    assert.match(html, /id="chart-slowest"[\s\S]*1\.5s/);
  });
});
