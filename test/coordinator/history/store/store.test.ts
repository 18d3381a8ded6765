// The results store against real databases: SQLite files (better-sqlite3) and PostgreSQL (a
// private database per test on the server at 127.0.0.1:5432; skipped, saying why, when there is
// none). The same tests run on both: schema creation and migration, records that match the JSON
// report exactly, a failing or hung database that never fails or holds a case, AgentAsJudgeEval
// runs, and the refusals (bad URL, newer schema, run id taken).
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { AgentAsJudgeEval, Case, JudgeMode, runCases, runSuiteLocal, loadSuite, type Agent, type RunOutput } from "../../../../index.ts";
import { ResultsStore } from "../../../../coordinator/history/store/store.ts";
import { migrateDriver, openDriver } from "../../../../coordinator/history/store/open-driver.ts";
import { parseStoreUrl } from "../../../../coordinator/history/store/url.ts";
import { SCHEMA_VERSION } from "../../../../coordinator/history/store/schema.ts";
import type { CaseRecord } from "../../../../coordinator/history/store/case-record.ts";
import { caseRow } from "../../../../coordinator/history/store/case-row.ts";
import { CaseResult, type SuiteResult } from "../../../../shared/result/result.ts";
import { registerSecret } from "../../../../shared/redaction/secrets.ts";
import type { CaseResultJSON } from "../../../../shared/result/result-json.ts";
import { ScriptedJudge, sleep } from "../../../support/doubles.ts";
import { createTestDatabase, postgresUnavailable, type TestDatabase } from "../../../support/postgres.ts";
import { fixture } from "../../../support/paths.ts";

// Records carry the branch; the tests decide it instead of the checkout they run in.
process.env.EVALFLEET_GIT_BRANCH = "store-tests";
process.env.EVALFLEET_GIT_COMMIT = "0000000000000000000000000000000000000abc";

/** A fresh database of one kind, with a side door for the test (its own connection). */
interface Fresh {
  url: string;
  /** Runs SQL through the side door; returns rows. */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Holds a lock that blocks the store's writes to case_results until released. */
  lock(): Promise<() => Promise<void>>;
  cleanup(): Promise<void>;
}

interface Backend {
  name: "sqlite" | "postgres";
  /** Why this backend's tests are skipped, or false. */
  skip: string | false;
  fresh(): Promise<Fresh>;
}

const pgSkip = await postgresUnavailable();
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
});

const sqliteBackend: Backend = {
  name: "sqlite",
  skip: false,
  async fresh() {
    const path = join(mkdtempSync(join(tmpdir(), "evalfleet-store-")), "results.db");
    let side: Database.Database | null = null;
    const open = (): Database.Database => (side ??= new Database(path, { timeout: 5_000 }));
    const fresh: Fresh = {
      url: `sqlite:${path}`,
      async sql(text, params = []) {
        const stmt = open().prepare(text);
        if (stmt.reader) return stmt.all(...(params as unknown[])) as Record<string, unknown>[];
        stmt.run(...(params as unknown[]));
        return [];
      },
      async lock() {
        // A second connection's exclusive transaction: every write of the store waits (busy).
        const holder = new Database(path);
        holder.exec("BEGIN EXCLUSIVE");
        return async () => {
          holder.exec("COMMIT");
          holder.close();
        };
      },
      async cleanup() {
        side?.close();
      },
    };
    cleanups.push(fresh.cleanup);
    return fresh;
  },
};

const postgresBackend: Backend = {
  name: "postgres",
  skip: pgSkip ?? false,
  async fresh() {
    const db: TestDatabase = await createTestDatabase();
    const fresh: Fresh = {
      url: db.url,
      async sql(text, params = []) {
        let n = 0;
        return (await db.sql(text.replace(/\?/g, () => `$${++n}`), params)).rows;
      },
      async lock() {
        const client = await db.client();
        await client.query("BEGIN");
        await client.query("LOCK TABLE case_results IN ACCESS EXCLUSIVE MODE");
        return async () => {
          await client.query("COMMIT");
        };
      },
      cleanup: () => db.drop(),
    };
    cleanups.push(fresh.cleanup);
    return fresh;
  },
};

/** An agent whose output, tools and metrics follow its input (`<name>:<kind>`). */
const agent: Agent = {
  id: "store-agent",
  async run(input, { signal }): Promise<RunOutput> {
    const [name, kind] = String(input).split(":");
    if (kind === "slow") await sleep(5_000, signal);
    if (kind === "paused") return { content: "need approval", status: "paused" };
    return {
      content: kind === "wrong" ? "answer for someone else — «ünïcødé» 'quoted'" : `answer for ${name}`,
      tools: [{ toolName: "lookup", toolArgs: { q: name }, result: "42" }, ...(kind === "extra" ? [{ toolName: "surprise" }] : [])],
      metrics: { inputTokens: 120, outputTokens: 30, costUsd: 0.00125 },
    };
  },
};
const member: Agent = { id: "store-member", run: async () => ({ content: "42", tools: [{ toolName: "multiply", result: "42" }] }) };
const team: Agent = {
  id: "store-team",
  async run(input, ctx) {
    const out = (await member.run(input, ctx)) as RunOutput;
    return { content: out.content, tools: [{ toolName: "delegate_task_to_member" }], memberResponses: [out] };
  },
};
const names = {
  score(run: { content?: unknown }, expected: unknown) {
    const passed = String(run.content).endsWith(String(expected));
    return { value: passed ? 1 : 0.25, passed, reason: passed ? "right name" : "wrong name", detail: { expected, nested: { ok: passed } } };
  },
};

/** Every kind of outcome a case can have. */
function variedCases(): Case[] {
  const judge = new ScriptedJudge({ answer: { passed: true, reason: "names the case" } });
  const numeric = new ScriptedJudge({ answer: { score: 5, reason: "half right" } });
  return [
    new Case({ name: "all_checks_pass", agent, input: "all_checks_pass:ok", tags: ["smoke", "a"], criteria: "Names it.", judgeModel: judge, expectedToolCalls: ["lookup"], scorer: names, expected: "all_checks_pass" }),
    new Case({ name: "numeric_below_threshold", agent, input: "numeric_below_threshold:ok", criteria: "Names it.", judgeModel: numeric, judgeMode: JudgeMode.NUMERIC, judgeThreshold: 7 }),
    new Case({ name: "strict_reliability", agent, input: "strict_reliability:extra", expectedToolCalls: ["lookup", "missing"], allowAdditionalToolCalls: false }),
    new Case({ name: "wrong_answer", agent, input: "wrong_answer:wrong", scorer: names, expected: "wrong_answer" }),
    new Case({ name: "times_out", agent, input: "times_out:slow", timeoutSeconds: 0.2, scorer: names, expected: "x" }),
    new Case({ name: "setup_fails", agent, input: "setup_fails:ok", scorer: names, expected: "x", setup: () => { throw new Error("no fixture"); } }),
    new Case({ name: "team_member_tools", team, input: "team:ok", expectedToolCalls: ["multiply"] }),
    new Case({ name: "paused_run", agent, input: "paused_run:paused", scorer: names, expected: "x" }),
    new Case({ name: "hook_error_after_end", agent, input: "hook_error_after_end:ok", scorer: names, expected: "hook_error_after_end" }),
  ];
}

/** Asserts that the recorded cases are the report's, key for key, plus what the report leaves out. */
function assertRecordsMatch(records: readonly CaseRecord[], suite: SuiteResult): void {
  const report = suite.toJSON();
  assert.equal(records.length, report.cases.length);
  for (const [i, rec] of records.entries()) {
    const j: CaseResultJSON = report.cases[i]!;
    const r = suite.results[i]!;
    // The verbatim entry: every key, in order.
    assert.deepEqual(rec.report, j, `${j.name}: stored report entry`);
    assert.equal(JSON.stringify(rec.report), JSON.stringify(j), `${j.name}: same keys in the same order`);
    // The typed columns hold the same values.
    const typed = {
      name: rec.name,
      agent_id: rec.agentId,
      team_id: rec.teamId,
      tags: rec.tags,
      session_id: rec.sessionId,
      duration_seconds: rec.durationSeconds,
      judge_passed: rec.judgePassed,
      judge_reason: rec.judgeReason,
      judge_score: rec.judgeScore,
      reliability_passed: rec.reliabilityPassed,
      output: rec.output,
      tools_called: rec.toolsCalled,
      timed_out: rec.timedOut,
      skipped: rec.skipped,
      passed: rec.passed,
      error: rec.error,
      score_value: rec.scoreValue,
      score_passed: rec.scorePassed,
      score_reason: rec.scoreReason,
      index: rec.index,
      attempts: rec.attempts,
      worker: rec.worker,
    };
    const fromReport = Object.fromEntries(Object.keys(typed).map((k) => [k, (j as unknown as Record<string, unknown>)[k]]));
    assert.deepEqual(typed, fromReport, `${j.name}: typed columns`);
    // What the report leaves out.
    assert.deepEqual(
      rec.reliability,
      r.reliability ? { passedToolCalls: r.reliability.passedToolCalls, failedToolCalls: r.reliability.failedToolCalls, additionalToolCalls: r.reliability.additionalToolCalls, missingToolCalls: r.reliability.missingToolCalls } : null,
      `${j.name}: reliability details`,
    );
    assert.deepEqual(rec.scoreDetail, r.score?.detail ?? null, `${j.name}: scorer detail`);
    assert.deepEqual(
      { inputTokens: rec.inputTokens, outputTokens: rec.outputTokens, totalTokens: rec.totalTokens, costUsd: rec.costUsd },
      r.usage ? { ...r.usage } : { inputTokens: null, outputTokens: null, totalTokens: null, costUsd: null },
      `${j.name}: tokens and cost`,
    );
  }
}

for (const backend of [sqliteBackend, postgresBackend]) {
  describe(`results store on ${backend.name}`, { skip: backend.skip }, () => {
    test("a new database gets the whole schema, versioned; opening it again changes nothing", async () => {
      const db = await backend.fresh();
      const store = await ResultsStore.open(db.url);
      assert.deepEqual(store.schema, { from: 0, to: SCHEMA_VERSION });
      await store.close();
      const versions = await db.sql("SELECT version, description FROM evalfleet_schema ORDER BY version");
      assert.deepEqual(versions.map((v) => Number(v.version)), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      assert.equal(SCHEMA_VERSION, 9);
      const again = await ResultsStore.open(db.url);
      assert.deepEqual(again.schema, { from: SCHEMA_VERSION, to: SCHEMA_VERSION });
      assert.deepEqual(await again.listRuns(), []);
      await again.close();
    });

    test("two processes opening a new database at once migrate it once", async () => {
      const db = await backend.fresh();
      const stores = await Promise.all([ResultsStore.open(db.url), ResultsStore.open(db.url), ResultsStore.open(db.url)]);
      const migrated = stores.filter((s) => s.schema.from === 0);
      assert.equal(migrated.length, 1, "exactly one migrated");
      await Promise.all(stores.map((s) => s.close()));
      assert.deepEqual((await db.sql("SELECT version FROM evalfleet_schema ORDER BY version")).map((v) => Number(v.version)), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    test("a version 1 database is migrated to the current version, its records kept", async () => {
      const db = await backend.fresh();
      // Build a real version-1 database with the version-1 migration, and record a run in it.
      const driver = await openDriver(parseStoreUrl(db.url), { timeoutMs: 10_000 });
      assert.deepEqual(await migrateDriver(driver, 1), { from: 0, to: 1 });
      await driver.close();
      await db.sql(
        "INSERT INTO eval_runs (id, kind, suite_name, selection, config, started_at, finished_at, status, total, passed, failed, skipped, duration_seconds) VALUES ('old-run', 'suite', 'nightly', '{}', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:01:00.000Z', 'passed', 1, 1, 0, 0, 60)",
      );
      const report = { name: "old_case", passed: true };
      await db.sql(
        `INSERT INTO case_results (run_id, case_index, name, tags, session_id, duration_seconds, tools_called, timed_out, skipped, passed, attempts, report, recorded_at)
         VALUES ('old-run', 0, 'old_case', '[]', 'eval-old_case-00000000', 1.5, '["lookup"]', ?, ?, ?, 1, ?, '2026-01-01T00:01:00.000Z')`,
        backend.name === "sqlite" ? [0, 0, 1, JSON.stringify(report)] : [false, false, true, JSON.stringify(report)],
      );
      const store = await ResultsStore.open(db.url);
      assert.deepEqual(store.schema, { from: 1, to: SCHEMA_VERSION });
      const [old] = await store.caseRecords("old-run");
      assert.equal(old!.name, "old_case");
      assert.deepEqual(old!.toolsCalled, ["lookup"]);
      assert.equal(old!.passed, true);
      assert.equal(old!.inputTokens, null, "a column added by version 2 reads as null for old rows");
      assert.equal(old!.caseId, null, "a column added by version 3 reads as null for old rows");
      assert.equal(old!.metadata, null);
      assert.deepEqual((await store.listRuns()).map((r) => r.id), ["old-run"]);
      const [oldRun] = await store.listRuns();
      assert.deepEqual(
        [oldRun!.runName, oldRun!.description, oldRun!.agentId, oldRun!.teamId, oldRun!.evalFunctions, oldRun!.scoringMethod, oldRun!.passThreshold],
        [null, null, null, null, null, null, null],
        "version 3's run columns read as null for old runs",
      );
      // What version 2 added works on the migrated database.
      const suite = await runCases([new Case({ name: "after_migration", agent, input: "after_migration:ok", scorer: names, expected: "after_migration" })], { db: store, suiteName: "nightly" });
      const [rec] = await store.caseRecords(suite.runId!);
      assert.equal(rec!.totalTokens, 150);
      await store.close();
    });

    test("schema 3: a run's name, description, agent, evaluation functions, scoring method and threshold, and a case's id and metadata, read back as written", async () => {
      const db = await backend.fresh();
      const store = await ResultsStore.open(db.url);
      const start = {
        id: "exulu-run",
        kind: "suite" as const,
        suiteName: "support",
        suiteFingerprint: null,
        suitePath: null,
        selection: { cases: ["refund"] },
        config: { mode: "inline" },
        judgeModel: null,
        timeoutSeconds: 30,
        startedAt: "2026-02-01T10:00:00.000Z",
        gitCommit: null,
        gitBranch: null,
        host: null,
        runName: "Nightly refunds",
        description: "after the refund policy change",
        agentId: "support-bot",
        teamId: null,
        evalFunctions: ["tone", "cites_policy"],
        scoringMethod: "contains",
        passThreshold: 0.9,
      };
      await store.beginRun(start);
      const result = new CaseResult({ name: "refund", index: 0, caseId: "tc-17", metadata: { owner: "data-team", exulu: { createdAt: "2026-01-02T03:04:05.000Z", RBAC: { type: "public" } } } });
      await store.writeCases([caseRow("exulu-run", result, "2026-02-01T10:00:01.000Z")]);
      const [run] = await store.listRuns();
      assert.deepEqual(
        { runName: run!.runName, description: run!.description, agentId: run!.agentId, teamId: run!.teamId, evalFunctions: run!.evalFunctions, scoringMethod: run!.scoringMethod, passThreshold: run!.passThreshold },
        { runName: "Nightly refunds", description: "after the refund policy change", agentId: "support-bot", teamId: null, evalFunctions: ["tone", "cites_policy"], scoringMethod: "contains", passThreshold: 0.9 },
      );
      const [rec] = await store.caseRecords("exulu-run");
      assert.equal(rec!.caseId, "tc-17");
      assert.deepEqual(rec!.metadata, { owner: "data-team", exulu: { createdAt: "2026-01-02T03:04:05.000Z", RBAC: { type: "public" } } });
      await store.close();
    });

    test("schema 6: a case's full run output (transcript) round-trips: messages, tool calls with arguments, results and errors, members at every depth, status, usage; secrets removed; a cut one says so", async () => {
      const db = await backend.fresh();
      const store = await ResultsStore.open(db.url);
      const secret = "sk-transcript-secret-0123456789abcdef";
      registerSecret(secret);
      const output: RunOutput = {
        content: { answer: 42, note: `key ${secret}` },
        status: "completed",
        model: "scripted-1",
        agentId: "leader",
        tools: [
          { toolName: "lookup", toolArgs: { q: "refund policy", page: 2 }, result: { hits: ["a", "b"] } },
          { toolName: "charge", toolArgs: { amount: 5 }, result: null, toolCallError: "card declined" },
        ],
        messages: [
          { role: "user", content: "what is the refund policy?" },
          { role: "assistant", content: null, toolCalls: [{ id: "c1", function: { name: "lookup", arguments: '{"q":"refund policy"}' } }] },
          { role: "tool", content: [{ type: "text", text: "hits: a, b" }] },
        ],
        metrics: { inputTokens: 11, outputTokens: 7, totalTokens: 18, costUsd: 0.002 },
        knowledgeSources: ["policies"],
        memberResponses: [
          {
            agentId: "researcher",
            content: "found it",
            tools: [{ toolName: "search", toolArgs: { q: "x" }, result: "y" }],
            memberResponses: [{ agentId: "deep", content: "deepest", tools: [{ toolName: "grep", toolArgs: { p: "z" }, result: 3 }] }],
          },
        ],
      };
      const team: Agent = { id: "leader", run: async () => output };
      const cases = [new Case({ name: "transcribed", team, input: "q", scorer: { score: () => ({ value: 1, passed: true }) } })];
      const suite = await runCases(cases, { db: store, suiteName: "transcripts" });
      assert.equal(suite.results[0]!.transcript, null, "the coordinator lets go of the transcript once it is queued");
      const t = await store.transcript(suite.runId!, 0);
      assert.ok(t && !("unreadable" in t), "a transcript was stored");
      assert.equal(t.cut, null);
      assert.equal(t.status, "completed");
      assert.deepEqual(t.usage, { inputTokens: 11, outputTokens: 7, totalTokens: 18, costUsd: 0.002 });
      assert.deepEqual(t.run!.content, { answer: 42, note: "key [REDACTED]" }, "secrets are removed before the store sees them");
      assert.deepEqual(t.run!.tools, output.tools);
      assert.deepEqual(t.run!.messages, output.messages);
      assert.equal(t.run!.memberResponses![0]!.memberResponses![0]!.tools![0]!.toolName, "grep", "members at depth 2");
      assert.deepEqual(t.run!.memberResponses![0]!.memberResponses![0]!.tools![0]!.toolArgs, { p: "z" });
      assert.deepEqual(t.run!.knowledgeSources, ["policies"]);
      assert.equal(t.run!.model, "scripted-1");
      const all = await store.transcripts(suite.runId!);
      assert.deepEqual([...all.keys()], [0]);
      // The raw column holds no secret either.
      const raw = await db.sql("SELECT transcript, bytes, cut FROM case_transcripts WHERE run_id = ?", [suite.runId!]);
      assert.equal(String(raw[0]!.transcript).includes(secret), false);
      assert.equal(Number(raw[0]!.bytes), Buffer.byteLength(String(raw[0]!.transcript)));
      assert.equal(Boolean(raw[0]!.cut), false);

      // A bound smaller than the output: cut, marked with the original size, still parseable.
      const big: Agent = { id: "big", run: async () => ({ content: "x".repeat(50_000), messages: Array.from({ length: 200 }, (_, i) => ({ role: "user", content: `m${i} ${"y".repeat(300)}` })) }) };
      const cut = await runCases([new Case({ name: "big", agent: big, input: "q", scorer: { score: () => ({ value: 1, passed: true }) } })], { db: store, suiteName: "transcripts", maxTranscriptBytes: 8 * 1024 });
      const ct = await store.transcript(cut.runId!, 0);
      assert.ok(ct && !("unreadable" in ct));
      assert.ok(ct.cut, "the cut is marked");
      assert.ok(ct.cut.originalBytes > 50_000, `original size kept (${ct.cut.originalBytes})`);
      assert.equal(ct.cut.maxBytes, 8 * 1024);
      const rawCut = await db.sql("SELECT bytes, cut FROM case_transcripts WHERE run_id = ?", [cut.runId!]);
      assert.ok(Number(rawCut[0]!.bytes) <= 8 * 1024, `within the bound (${String(rawCut[0]!.bytes)})`);
      assert.equal(Boolean(rawCut[0]!.cut), true);
      assert.match(String(ct.run!.content), /\[evalfleet: cut, 50000 characters\]$/);

      // Without a store nothing is captured; with maxTranscriptBytes 0 none is kept.
      const none = await runCases(cases, { db: store, suiteName: "transcripts", maxTranscriptBytes: 0 });
      assert.equal(await store.transcript(none.runId!, 0), null);
      await store.close();
    });

    test("a database written by a newer evalfleet is refused, saying so", async () => {
      const db = await backend.fresh();
      await (await ResultsStore.open(db.url)).close();
      await db.sql("INSERT INTO evalfleet_schema (version, description, applied_at) VALUES (99, 'from the future', '2030-01-01T00:00:00.000Z')");
      await assert.rejects(ResultsStore.open(db.url), (err: Error & { code?: string }) => {
        assert.equal(err.code, "STORE_SCHEMA");
        assert.match(err.message, new RegExp(`^results store \\S+: the database has schema version 99, newer than this evalfleet understands \\(${SCHEMA_VERSION}\\): upgrade evalfleet$`));
        return true;
      });
    });

    test("a database holding someone else's eval_runs table is refused and left as it was", async () => {
      const db = await backend.fresh();
      await db.sql("CREATE TABLE eval_runs (id INTEGER, name TEXT)");
      await assert.rejects(ResultsStore.open(db.url), (err: Error & { code?: string }) => {
        assert.equal(err.code, "STORE_SCHEMA");
        assert.match(err.message, /cannot create the schema: .*eval_runs.* already exists; the database holds tables evalfleet did not create/);
        return true;
      });
      // The migration is one transaction: nothing of it stayed.
      const leftovers = backend.name === "sqlite"
        ? await db.sql("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('case_results', 'evalfleet_schema')")
        : await db.sql("SELECT table_name AS name FROM information_schema.tables WHERE table_name IN ('case_results', 'evalfleet_schema')");
      assert.deepEqual(leftovers.filter((r) => r.name === "case_results"), []);
    });

    test("runCases with db: every case result matches the JSON report exactly, and the run its summary", async () => {
      const db = await backend.fresh();
      const warnings: string[] = [];
      const suite = await runCases(variedCases(), {
        db: db.url,
        suiteName: "varied",
        concurrency: 3,
        onWarning: (w) => void warnings.push(w),
        // A hook error is appended after the case ended (and was queued): the record must get it too.
        onCaseEnd: (c) => {
          if (c.name === "hook_error_after_end") throw new Error("reporter broke");
        },
      });
      assert.deepEqual(warnings, []);
      assert.match(suite.results[8]!.error!, /^hook: onCaseEnd Error: reporter broke$/);
      assert.ok(suite.results.some((r) => r.timedOut) && suite.results.some((r) => r.passed) && suite.results.some((r) => r.teamId));
      const store = await ResultsStore.open(db.url);
      const [run] = await store.listRuns();
      assert.equal(run!.id, suite.runId);
      assert.deepEqual(
        { kind: run!.kind, suiteName: run!.suiteName, status: run!.status, total: run!.total, passed: run!.passed, failed: run!.failed, skipped: run!.skipped, durationSeconds: run!.durationSeconds },
        { kind: "suite", suiteName: "varied", status: "failed", total: 9, passed: suite.passed, failed: suite.failed, skipped: 0, durationSeconds: suite.durationSeconds },
      );
      assert.deepEqual(run!.summary, suite.toJSON().summary);
      assert.deepEqual(run!.selection, { name: null, tag: null, set: null, cases: variedCases().map((c) => c.name) });
      assert.deepEqual(run!.config, { mode: "inline", concurrency: 3 });
      assert.deepEqual([run!.gitBranch, run!.gitCommit, run!.timeoutSeconds, run!.judgeModel], ["store-tests", "0000000000000000000000000000000000000abc", 120, null]);
      assert.ok(run!.finishedAt! >= run!.startedAt);
      assert.match(run!.host!, /\/\d+$/);
      assertRecordsMatch(await store.caseRecords(run!.id), suite);
      await store.close();
    });

    test("runSuiteLocal with db: the coordinator records what the worker threads ran, tokens included", async () => {
      const db = await backend.fresh();
      const loaded = await loadSuite(fixture("history-suite.ts"));
      const suite = await runSuiteLocal(loaded, { db: db.url, threads: 2, concurrency: 4, tag: ["smoke", "web"] });
      assert.equal(suite.total, 3);
      const store = await ResultsStore.open(db.url);
      const run = await store.findRun(suite.runId!);
      assert.deepEqual([run.suiteName, run.suitePath, run.suiteFingerprint, run.judgeModel], ["history", loaded.path, loaded.fingerprint, "history-judge"]);
      assert.deepEqual(run.selection, { name: null, tag: ["smoke", "web"], set: null, cases: ["stable", "flipper", "html_escape"] });
      assert.equal(run.config.mode, "threads");
      const records = await store.caseRecords(run.id);
      assertRecordsMatch(records, suite);
      assert.deepEqual(records.map((r) => r.inputTokens), [106, 107, 111]);
      assert.ok(records.every((r) => r.worker !== null && r.worker !== "local"), "run on worker threads");
      await store.close();
    });

    test("a database that fails mid-run fails no case: one warning, the rest counted, the run still recorded", async () => {
      const db = await backend.fresh();
      await (await ResultsStore.open(db.url)).close();
      const breaker: Agent = {
        id: "breaker",
        async run(input) {
          // Someone drops the table under the running suite.
          if (input === "c0") await db.sql("ALTER TABLE case_results RENAME TO case_results_gone");
          return { content: `ok ${String(input)}`, tools: [{ toolName: "lookup" }] };
        },
      };
      const cases = Array.from({ length: 6 }, (_, i) => new Case({ name: `c${i}`, agent: breaker, input: `c${i}`, expectedToolCalls: ["lookup"] }));
      const warnings: string[] = [];
      const suite = await runCases(cases, { db: db.url, concurrency: 1, onWarning: (w) => void warnings.push(w) });
      assert.equal(suite.status, "PASS", "the database never fails a case");
      assert.ok(suite.results.every((r) => r.error === null));
      const failed = warnings.filter((w) => w.includes("could not record case results"));
      assert.equal(failed.length, 1, `one warning for all the failed writes: ${warnings.join(" | ")}`);
      assert.match(failed[0]!, /case_results/);
      assert.ok(warnings.some((w) => new RegExp(`6 of 6 case results of run ${suite.runId} not recorded \\(first error: `).test(w)), warnings.join(" | "));
      await db.sql("ALTER TABLE case_results_gone RENAME TO case_results");
      const store = await ResultsStore.open(db.url);
      const run = await store.findRun(suite.runId!);
      assert.deepEqual([run.status, run.total, run.passed], ["passed", 6, 6], "the run's own record did not depend on the case writes");
      await store.close();
    });

    test("a hung write holds no case past its timeout: the run ends within the store's bound", async () => {
      const db = await backend.fresh();
      await (await ResultsStore.open(db.url)).close();
      let release: (() => Promise<void>) | null = null;
      const locker: Agent = {
        id: "locker",
        async run(input, { signal }) {
          if (input === "h0") release = await db.lock();
          await sleep(300, signal);
          return { content: "ok", tools: [{ toolName: "lookup" }] };
        },
      };
      const cases = Array.from({ length: 4 }, (_, i) => new Case({ name: `h${i}`, agent: locker, input: `h${i}`, expectedToolCalls: ["lookup"], timeoutSeconds: 2 }));
      const warnings: string[] = [];
      let lastCaseEnded = 0;
      let suite: SuiteResult;
      try {
        suite = await runCases(cases, { db: db.url, dbTimeout: 1, concurrency: 1, onWarning: (w) => void warnings.push(w), onCaseEnd: () => void (lastCaseEnded = performance.now()) });
      } finally {
        await (release as (() => Promise<void>) | null)?.();
      }
      const afterCases = (performance.now() - lastCaseEnded) / 1000;
      assert.equal(suite.status, "PASS");
      for (const r of suite.results) {
        assert.equal(r.timedOut, false);
        assert.ok(r.durationSeconds < 1, `${r.name} took ${r.durationSeconds}s: a case never waits for the database`);
      }
      // After the last case: the final flush and the run's record (1 s each at most), closing the store (1 s), and slack.
      assert.ok(afterCases < 3 + 2, `the run ended ${afterCases.toFixed(2)}s after its last case`);
      assert.ok(warnings.some((w) => /not recorded/.test(w)), warnings.join(" | "));
      const store = await ResultsStore.open(db.url);
      const run = await store.findRun(suite.runId!);
      if (backend.name === "postgres") assert.equal(run.status, "passed", "only case_results was locked");
      else {
        // A SQLite lock covers the whole file: the end of the run could not be written either, and it says so.
        assert.equal(run.status, "running");
        assert.ok(warnings.some((w) => w.includes(`could not record the end of run ${suite.runId}`)), warnings.join(" | "));
      }
      await store.close();
    });

    test("a run id already recorded is refused before any case runs (RUN_EXISTS)", async () => {
      const db = await backend.fresh();
      await runCases([new Case({ name: "a", agent, input: "a:ok", scorer: names, expected: "a" })], { db: db.url, runId: "nightly-1" });
      let runs = 0;
      const counting: Agent = { id: "counting", run: async () => (runs++, { content: "x" }) };
      await assert.rejects(runCases([new Case({ name: "a", agent: counting, input: "a", scorer: names, expected: "x" })], { db: db.url, runId: "nightly-1" }), (err: Error & { code?: string }) => {
        assert.equal(err.code, "RUN_EXISTS");
        assert.match(err.message, /^run 'nightly-1' is already recorded in \S+: pick another run id$/);
        return true;
      });
      assert.equal(runs, 0);
    });

    test("AgentAsJudgeEval with db: each run() is one recorded run, its evaluations in batch order", async () => {
      const db = await backend.fresh();
      let calls = 0;
      const judge = {
        id: "capital-judge",
        async judge(request: { user: string }) {
          calls++;
          if (request.user.includes("garbage")) return "no verdict here";
          return { score: request.user.includes("Paris") ? 9 : 3, reason: request.user.includes("Paris") ? "names Paris" : "names another city" };
        },
      };
      const evaluation = new AgentAsJudgeEval({ name: "capitals", criteria: "Names Paris.", scoringStrategy: "numeric", threshold: 7, model: judge, db: db.url, additionalGuidelines: ["Be strict."] });
      const result = await evaluation.run({ cases: [{ input: "q1", output: "Paris." }, { input: "q2", output: "Lyon." }, { input: "q3", output: "garbage" }] });
      const single = await evaluation.run({ input: "q4", output: "It is Paris." });
      await evaluation.close();
      assert.equal(calls, 4);
      const store = await ResultsStore.open(db.url);
      const runs = await store.listRuns({ kind: "agent_as_judge" });
      assert.deepEqual(runs.map((r) => r.id).sort(), [result.runId, single.runId].sort());
      const run = await store.findRun(result.runId);
      assert.deepEqual(
        { suiteName: run.suiteName, judgeModel: run.judgeModel, status: run.status, total: run.total, passed: run.passed, failed: run.failed, skipped: run.skipped, timeoutSeconds: run.timeoutSeconds },
        { suiteName: "capitals", judgeModel: "capital-judge", status: "failed", total: 3, passed: 1, failed: 2, skipped: 1, timeoutSeconds: 120 },
      );
      assert.deepEqual(run.config, { criteria: "Names Paris.", scoring_strategy: "numeric", threshold: 7, additional_guidelines: ["Be strict."] });
      assert.equal(run.summary!.pass_rate, result.passRate);
      assert.equal(run.summary!.avg_score, result.avgScore);
      const evaluations = await store.judgeEvaluations(run.id);
      assert.deepEqual(
        evaluations.map((e) => [e.position, e.input, e.output, e.score, e.passed, e.reason, e.failure === null]),
        [
          [0, "q1", "Paris.", 9, true, "names Paris", true],
          [1, "q2", "Lyon.", 3, false, "names another city", true],
          [2, "q3", "garbage", null, null, null, false],
        ],
      );
      assert.equal(evaluations[2]!.criteria, "Names Paris.");
      assert.deepEqual((await store.judgeEvaluations(single.runId)).map((e) => e.passed), [true]);
      await store.close();
    });

    test("AgentAsJudgeEval: a failed write is a warning and the result still comes back", async () => {
      const db = await backend.fresh();
      await (await ResultsStore.open(db.url)).close();
      await db.sql("DROP TABLE judge_evaluations");
      const warned: string[] = [];
      const logger = { warn: (_: unknown, m: string) => void warned.push(m), info: () => undefined, debug: () => undefined, error: () => undefined };
      const evaluation = new AgentAsJudgeEval({ criteria: "c", model: new ScriptedJudge(), db: db.url, logger: logger as never });
      const result = await evaluation.run({ input: "q", output: "a" });
      await evaluation.close();
      assert.equal(result.passRate, 100);
      assert.equal(warned.length, 1);
      assert.match(warned[0]!, new RegExp(`^could not record AgentAsJudgeEval run ${result.runId}: .*judge_evaluations`));
    });
  });
}

describe("stores that cannot be used are refused before anything runs", () => {
  test("SQLite: a path that cannot be created, a file that is not a database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-bad-"));
    writeFileSync(join(dir, "plain-file"), "x");
    writeFileSync(join(dir, "garbage.db"), "this is not a database file, not even close ".repeat(50));
    let runs = 0;
    const counting: Agent = { id: "counting", run: async () => (runs++, { content: "x" }) };
    const c = new Case({ name: "a", agent: counting, input: "a", scorer: names, expected: "x" });
    await assert.rejects(runCases([c], { db: `sqlite:${join(dir, "plain-file", "results.db")}` }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "STORE_UNAVAILABLE");
      assert.match(err.message, new RegExp(`^results store sqlite:${dir}/plain-file/results.db: cannot open: `));
      return true;
    });
    await assert.rejects(runCases([c], { db: `sqlite:${join(dir, "garbage.db")}` }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "STORE_UNAVAILABLE");
      assert.match(err.message, /cannot open: file is not a database/);
      return true;
    });
    const judgeCalls: string[] = [];
    const evaluation = new AgentAsJudgeEval({ criteria: "c", model: { id: "j", judge: async (r) => (judgeCalls.push(r.user), { passed: true, reason: "ok" }) }, db: `sqlite:${join(dir, "garbage.db")}` });
    await assert.rejects(evaluation.run({ input: "q", output: "a" }), { code: "STORE_UNAVAILABLE" });
    assert.equal(runs, 0);
    assert.deepEqual(judgeCalls, [], "no judge call before the store is open");
  });

  test("PostgreSQL: a closed port or a missing database, the password never shown", { skip: pgSkip ?? false }, async () => {
    const closed = "postgres://evals:hunter2-secret@127.0.0.1:1/evals";
    const c = new Case({ name: "a", agent, input: "a:ok", scorer: names, expected: "a" });
    await assert.rejects(runCases([c], { db: closed, dbTimeout: 3 }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "STORE_UNAVAILABLE");
      assert.match(err.message, /^results store postgres:\/\/evals:\*\*\*@127\.0\.0\.1:1\/evals: cannot connect: .*ECONNREFUSED/);
      assert.doesNotMatch(err.message, /hunter2/);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
    const missing = new URL(process.env.EVALFLEET_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
    missing.pathname = "/evalfleet_no_such_database_here";
    missing.password = "hunter2-secret";
    await assert.rejects(runCases([c], { db: missing.toString() }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "STORE_UNAVAILABLE");
      assert.match(err.message, /cannot connect: database "evalfleet_no_such_database_here" does not exist/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
  });
});
