// The viewer's JSON API (`evalfleet serve`) over real stores: a SQLite file, and a private
// PostgreSQL database (127.0.0.1:5432; skipped, saying why, when there is none). A real HTTP
// server on a free port, real requests. Filters, paging without duplicates or gaps, search,
// 400/404 errors, tokens and scopes, the event stream of a running run; search over inputs (their
// text recorded from the case) and a store of schema version 8 migrated to 9.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ResultsStore } from "../../coordinator/history/store/store.ts";
import { caseRow, inputText } from "../../coordinator/history/store/case-row.ts";
import { migrateDriver, openDriver } from "../../coordinator/history/store/open-driver.ts";
import { parseStoreUrl } from "../../coordinator/history/store/url.ts";
import { Case, runCases } from "../../index.ts";
import { rawGet, viewerFetch, viewerRunStart as runStart } from "../support/viewer-fixtures.ts";
import { createToken, revokeToken } from "../../coordinator/history/store/access-tokens.ts";
import { startViewer, type RunningViewer } from "../../coordinator/serve/server.ts";
import { CONTENT_SECURITY_POLICY } from "../../coordinator/serve/app.ts";
import { CaseResult } from "../../shared/result/result.ts";
import { createTestDatabase, postgresUnavailable } from "../support/postgres.ts";

const pgSkip = await postgresUnavailable();

/** Case i of the seeded run: every 10th fails, every 25th (from 3) errs, every 30th (from 7) is skipped; "needle" in every 17th output. */
function seededCase(i: number, prefix = "case"): CaseResult {
  const failed = i % 10 === 0;
  const errored = i % 25 === 3;
  const skipped = i % 30 === 7;
  return new CaseResult({
    name: `${prefix}-${String(i).padStart(3, "0")}`,
    index: i,
    tags: i % 2 === 0 ? ["even"] : ["odd"],
    durationSeconds: (i % 7) * 0.5,
    output: `answer number ${i}${i % 17 === 0 ? " with the needle in it" : ""}\nline two`,
    skipped,
    error: errored && !skipped ? "agent: boom" : null,
    errorKind: errored && !skipped ? "agent" : null,
    expectations: skipped ? undefined : { expectedOutput: { method: "exact", passed: !failed, reason: failed ? "differs from the expected answer" : "equal" } },
    metadata: { set: i < 60 ? "train" : "test" },
    transcript:
      i === 5
        ? { v: 1, run: { content: "final", messages: [{ role: "user", content: "what is 5?" }, { role: "assistant", content: "", toolCalls: [{ id: "t1", function: { name: "calc", arguments: '{"x":5}' } }] }], tools: [{ toolName: "calc", toolArgs: { x: 5 }, result: 5 }] }, status: "completed", error: null, usage: null, cut: null }
        : null,
  });
}

/** Case i's input: a conversation whose words are in no output, name or reason ("reykjavik" in every 13th). */
const seededInput = (i: number) => [
  { role: "system", content: "You are a support agent." },
  { role: "user", content: i % 13 === 0 ? `Where is my parcel to Reykjavik, order ${i}?` : `Where is my parcel, order ${i}?` },
];

const expectedStatus = (i: number): string => (i % 30 === 7 ? "skipped" : i % 25 === 3 ? "error" : i % 10 === 0 ? "failed" : "passed");


const N = 120;

async function seed(store: ResultsStore): Promise<void> {
  await store.beginRun(runStart("run-a", "alpha", "2026-01-01T10:00:00.000Z", N));
  await store.writeCases(Array.from({ length: N }, (_, i) => caseRow("run-a", seededCase(i), "2026-01-01T10:00:01.000Z", null, undefined, inputText(seededInput(i)))));
  const statuses = Array.from({ length: N }, (_, i) => expectedStatus(i));
  const count = (s: string) => statuses.filter((x) => x === s).length;
  await store.finishRun("run-a", { finishedAt: "2026-01-01T10:05:00.000Z", status: "failed", total: N, passed: count("passed"), failed: count("failed") + count("error"), skipped: count("skipped"), durationSeconds: 300, summary: { total: N } });
  await store.beginRun(runStart("run-c", "beta", "2026-01-02T10:00:00.000Z", 3));
  await store.writeCases([0, 1, 2].map((i) => caseRow("run-c", seededCase(i + 1, "beta"), "2026-01-02T10:00:01.000Z")));
  await store.finishRun("run-c", { finishedAt: "2026-01-02T10:01:00.000Z", status: "passed", total: 3, passed: 3, failed: 0, skipped: 0, durationSeconds: 60, summary: null });
  // A running run of alpha: 10 of 20 recorded so far.
  await store.beginRun(runStart("run-b", "alpha", "2026-01-03T10:00:00.000Z", 20));
  await store.writeCases(Array.from({ length: 10 }, (_, i) => caseRow("run-b", seededCase(i), "2026-01-03T10:00:01.000Z")));
}


for (const backend of ["sqlite", "postgres"] as const) {
  describe(`viewer API on ${backend}`, { skip: backend === "postgres" ? pgSkip ?? false : false }, () => {
    let store: ResultsStore;
    let viewer: RunningViewer;
    let secured: RunningViewer;
    let drop: () => Promise<void> = async () => undefined;
    const get = (path: string, init: RequestInit = {}, base = viewer.url) => viewerFetch(`${base}${path}`, init);

    before(async () => {
      let url: string;
      if (backend === "sqlite") url = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-serve-")), "results.db")}`;
      else {
        const db = await createTestDatabase();
        url = db.url;
        drop = db.drop;
      }
      store = await ResultsStore.open(url);
      await seed(store);
      viewer = await startViewer({ store, host: "127.0.0.1", port: 0, auth: false });
      secured = await startViewer({ store, host: "127.0.0.1", port: 0, auth: true });
    });
    after(async () => {
      await viewer?.close();
      await secured?.close();
      await store?.close();
      await drop();
    });

    test("healthz, and the runs list newest first, paged by cursor without repeats", async () => {
      assert.equal((await get("/healthz")).status, 200);
      const all = await get("/api/runs");
      assert.equal(all.status, 200);
      assert.deepEqual(all.json.runs.map((r: any) => r.id), ["run-b", "run-c", "run-a"]);
      const a = all.json.runs.find((r: any) => r.id === "run-a");
      assert.deepEqual(
        { total: a.total, done: a.done, status: a.status, skipped: a.skipped },
        { total: N, done: N, status: "failed", skipped: Array.from({ length: N }, (_, i) => i).filter((i) => expectedStatus(i) === "skipped").length },
      );
      const b = all.json.runs.find((r: any) => r.id === "run-b");
      assert.deepEqual({ total: b.total, done: b.done, status: b.status }, { total: 20, done: 10, status: "running" });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`/api/runs?limit=1${cursor ? `&cursor=${cursor}` : ""}`);
        assert.equal(page.status, 200);
        seen.push(...page.json.runs.map((r: any) => r.id));
        cursor = page.json.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, ["run-b", "run-c", "run-a"]);
      assert.deepEqual((await get("/api/runs?suite=beta")).json.runs.map((r: any) => r.id), ["run-c"]);
      assert.deepEqual((await get("/api/runs?status=running")).json.runs.map((r: any) => r.id), ["run-b"]);
    });

    test("a run's cases by status, paged: every match once, in order, with the total of all matches", async () => {
      for (const status of ["failed", "error", "skipped", "passed"]) {
        const expected = Array.from({ length: N }, (_, i) => i).filter((i) => expectedStatus(i) === status);
        const seen: number[] = [];
        let cursor: string | null = null;
        do {
          const page = await get(`/api/runs/run-a/cases?status=${status}&limit=7${cursor ? `&cursor=${cursor}` : ""}`);
          assert.equal(page.status, 200, page.text);
          assert.equal(page.json.total, expected.length);
          for (const c of page.json.cases) assert.equal(c.status, status);
          seen.push(...page.json.cases.map((c: any) => c.index));
          cursor = page.json.next_cursor;
        } while (cursor);
        assert.deepEqual(seen, expected, status);
      }
    });

    test("sorted by duration, slowest first, ties by index: paging neither repeats nor skips", async () => {
      const expected = Array.from({ length: N }, (_, i) => i).sort((x, y) => (y % 7) - (x % 7) || x - y);
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await get(`/api/runs/run-a/cases?sort=-duration&limit=9${cursor ? `&cursor=${cursor}` : ""}`);
        assert.equal(page.status, 200, page.text);
        seen.push(...page.json.cases.map((c: any) => c.index));
        cursor = page.json.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, expected);
    });

    test("filters by tag, error kind and set; search across names, outputs and reasons", async () => {
      const even = await get("/api/runs/run-a/cases?tag=even&limit=500");
      assert.equal(even.json.total, N / 2);
      assert.ok(even.json.cases.every((c: any) => c.tags.includes("even")));
      const agent = await get("/api/runs/run-a/cases?error_kind=agent");
      assert.deepEqual(agent.json.cases.map((c: any) => c.index), Array.from({ length: N }, (_, i) => i).filter((i) => expectedStatus(i) === "error"));
      assert.equal((await get("/api/runs/run-a/cases?set=test")).json.total, N - 60);
      const needle = await get("/api/runs/run-a/cases?q=needle&limit=500");
      assert.deepEqual(needle.json.cases.map((c: any) => c.index), Array.from({ length: N }, (_, i) => i).filter((i) => i % 17 === 0));
      // A reason's words, a name's, and words together with a status filter.
      assert.equal((await get("/api/runs/run-a/cases?q=boom%20agent")).json.total, Array.from({ length: N }, (_, i) => i).filter((i) => expectedStatus(i) === "error").length);
      assert.deepEqual((await get("/api/runs/run-a/cases?q=case-042")).json.cases.map((c: any) => c.index), [42]);
      assert.equal((await get("/api/runs/run-a/cases?q=needle&status=failed")).json.total, [0, 17, 34, 51, 68, 85, 102, 119].filter((i) => expectedStatus(i) === "failed").length);
      // Search syntax of the database is not interpreted: quotes and operators are just text.
      const odd = await get(`/api/runs/run-a/cases?q=${encodeURIComponent('"needle"* ) ^')}`);
      assert.equal(odd.status, 200, odd.text);
      assert.equal(odd.json.total, needle.json.total);
    });

    test("one case in full: its report, transcript, history over runs and the diff against the baseline", async () => {
      const one = await get("/api/runs/run-b/cases/5");
      assert.equal(one.status, 200, one.text);
      assert.equal(one.json.case.name, "case-005");
      assert.equal(one.json.transcript.run.tools[0].toolName, "calc");
      assert.deepEqual(one.json.history.map((h: any) => h.run_id), ["run-b", "run-a"]);
      assert.equal(one.json.baseline.run_id, "run-a");
      assert.ok(one.json.baseline.diff.every((l: any) => l.op === " "));
      const run = await get("/api/runs/run-b");
      assert.equal(run.json.status, "running");
      assert.equal(run.json.progress.done, 10);
      assert.equal(run.json.progress.remaining, 10);
      assert.equal(run.json.progress.workers.length, 1);
      const causes = await get("/api/runs/run-a/causes");
      assert.ok(causes.json.causes.some((c: any) => c.error_kind === "agent" && c.count === Array.from({ length: N }, (_, i) => i).filter((i) => expectedStatus(i) === "error").length));
    });

    test("compare and flaky", async () => {
      const cmp = await get("/api/compare?a=run-a&b=run-c");
      assert.equal(cmp.status, 200);
      assert.equal(cmp.json.onlyInB.length, 3);
      const flaky = await get("/api/flaky?suite=alpha");
      assert.equal(flaky.status, 200);
      assert.deepEqual(flaky.json.runs, ["run-a"]);
      assert.equal((await get("/api/flaky?suite=nope")).status, 404);
    });

    test("bad parameters are 400 naming the parameter; unknown runs and cases 404; JSON errors", async () => {
      for (const [path, param] of [
        ["/api/runs/run-a/cases?limit=501", "limit"],
        ["/api/runs/run-a/cases?limit=abc", "limit"],
        ["/api/runs/run-a/cases?status=bogus", "status"],
        ["/api/runs/run-a/cases?cursor=not-a-cursor", "cursor"],
        ["/api/runs/run-a/cases?sort=evil", "sort"],
        ["/api/runs/run-a/cases?colour=red", "colour"],
        [`/api/runs/run-a/cases?q=${"x".repeat(201)}`, "q"],
        ["/api/runs?limit=0", "limit"],
        ["/api/runs/run-a/cases/-1", "index"],
        ["/api/compare?a=run-a", "b"],
      ] as const) {
        const r = await get(path);
        assert.equal(r.status, 400, path);
        assert.match(r.json.error, new RegExp(`parameter ${param}=`), path);
      }
      assert.equal((await get("/api/runs/nope")).status, 404);
      assert.equal((await get("/api/runs/nope/cases")).status, 404);
      const missing = await get("/api/runs/run-a/cases/9999");
      assert.equal(missing.status, 404);
      assert.match(missing.json.error, /case 9999/);
      assert.equal((await get("/api/nothing")).status, 404);
      assert.equal((await get("/api/runs", { method: "POST", body: "x" })).status, 405);
      assert.equal((await get(`/api/runs?suite=${"y".repeat(5000)}`)).status, 414);
    });

    test("pages are shells with a policy that allows no inline script", async () => {
      const page = await get("/runs/run-a");
      assert.equal(page.status, 200);
      assert.equal(page.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
      assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
      assert.doesNotMatch(page.text, /<script>(?!<\/script>)/);
      assert.match(page.text, /<script src="\/assets\/viewer.js" defer><\/script>/);
      const js = await get("/assets/viewer.js");
      assert.equal(js.status, 200);
      assert.match(js.headers.get("content-type") ?? "", /javascript/);
    });

    test("without --auth only a loopback Host header is answered (no DNS rebinding)", async () => {
      const port = new URL(viewer.url).port;
      assert.equal((await rawGet(viewer.url, "/api/runs", { host: `localhost:${port}` })).status, 200);
      const evil = await rawGet(viewer.url, "/api/runs", { host: `evil.example:${port}` });
      assert.equal(evil.status, 403);
      assert.match(JSON.parse(evil.body).error, /loopback/);
    });

    test("tokens: 401 without or with a bad or revoked one; a scoped token sees its suites only (others 404, flaky 403); admin lists tokens", async () => {
      const none = await get("/api/runs", {}, secured.url);
      assert.equal(none.status, 401);
      assert.match(none.json.error, /token/);
      assert.equal((await get("/healthz", {}, secured.url)).status, 200);
      assert.equal((await get("/api/runs", { headers: { authorization: "Bearer efv_wrong" } }, secured.url)).status, 401);
      const viewerToken = await createToken(store, { role: "viewer", suites: ["beta"] });
      const admin = await createToken(store, { role: "admin", suites: [] });
      const as = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
      const scoped = await get("/api/runs", as(viewerToken.token), secured.url);
      assert.equal(scoped.status, 200);
      assert.deepEqual(scoped.json.runs.map((r: any) => r.id), ["run-c"]);
      assert.equal((await get("/api/runs/run-a", as(viewerToken.token), secured.url)).status, 404);
      assert.equal((await get("/api/runs/run-a/cases/1", as(viewerToken.token), secured.url)).status, 404);
      assert.equal((await get("/api/compare?a=run-a&b=run-c", as(viewerToken.token), secured.url)).status, 404);
      assert.equal((await get("/api/events?run=run-b", as(viewerToken.token), secured.url)).status, 404);
      assert.equal((await get("/api/flaky?suite=alpha", as(viewerToken.token), secured.url)).status, 403);
      assert.equal((await get("/api/tokens", as(viewerToken.token), secured.url)).status, 403);
      const listed = await get("/api/tokens", as(admin.token), secured.url);
      assert.equal(listed.status, 200);
      assert.equal(listed.json.tokens.length, 2);
      assert.ok(!listed.text.includes(admin.token) && !listed.text.includes(viewerToken.token), "a token's secret is never listed");
      const stored = await store.sql.query("SELECT token_hash FROM access_tokens");
      assert.ok(stored.every((r) => !String(r.token_hash).includes(viewerToken.token.slice(4, 20))));
      assert.equal((await get("/api/runs", as(admin.token), secured.url)).json.runs.length, 3);
      // A browser: ?token= once becomes an HttpOnly cookie, and the address loses the token.
      const first = await get(`/runs/run-c?token=${viewerToken.token}`, {}, secured.url);
      assert.equal(first.status, 303);
      assert.equal(first.headers.get("location"), "/runs/run-c");
      const cookie = first.headers.get("set-cookie") ?? "";
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Strict/i);
      assert.equal((await get("/api/runs/run-c", { headers: { cookie: cookie.split(";")[0]! } }, secured.url)).status, 200);
      await revokeToken(store, viewerToken.record.id);
      assert.equal((await get("/api/runs", as(viewerToken.token), secured.url)).status, 401);
      assert.equal((await get("/api/runs/run-c", { headers: { cookie: cookie.split(";")[0]! } }, secured.url)).status, 401);
    });

    test("the event stream of a running run: each new result, then its end", async () => {
      const controller = new AbortController();
      const res = await fetch(`${viewer.url}/api/events?run=run-b`, { signal: controller.signal });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      const until = async (pattern: RegExp, ms: number) => {
        const deadline = Date.now() + ms;
        while (!pattern.test(text)) {
          if (Date.now() > deadline) throw new Error(`no ${pattern} within ${ms} ms; got ${text.slice(-500)}`);
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended without ${pattern}`);
          text += value;
        }
      };
      try {
        await until(/event: progress/, 10_000);
        const landed = Date.now();
        await store.writeCases([caseRow("run-b", seededCase(10), new Date().toISOString())]);
        await until(/"name":"case-010"/, 10_000);
        assert.ok(Date.now() - landed < 2_000, `a result reached the stream ${Date.now() - landed} ms after its write`);
        await store.finishRun("run-b", { finishedAt: new Date().toISOString(), status: "cancelled", total: 20, passed: 9, failed: 2, skipped: 0, durationSeconds: 1, summary: null });
        await until(/event: end/, 10_000);
      } finally {
        controller.abort();
      }
    });

    test("search covers inputs: a word only an input has, with a word of the output, and inputs recorded by a real run", async () => {
      const inInput = Array.from({ length: N }, (_, i) => i).filter((i) => i % 13 === 0);
      const reykjavik = await get("/api/runs/run-a/cases?q=reykjavik&limit=500");
      assert.equal(reykjavik.status, 200, reykjavik.text);
      assert.deepEqual(reykjavik.json.cases.map((c: any) => c.index), inInput);
      // Every word must appear, in any of the fields: the input's and the output's together.
      assert.deepEqual((await get("/api/runs/run-a/cases?q=Reykjavik%20needle")).json.cases.map((c: any) => c.index), inInput.filter((i) => i % 17 === 0));
      // A role name of the conversation is text of the input too; the number of the order only that case's.
      assert.deepEqual((await get("/api/runs/run-a/cases?q=parcel%20order%2077")).json.cases.map((c: any) => c.index), [77]);
      // A run recorded through runCases keeps each case's input (the recorder reads it from the case).
      const echo = { id: "echo", run: async () => ({ content: "done" }) };
      const suite = await runCases(
        [
          new Case({ name: "asks_zanzibar", agent: echo, input: "Book a flight to Zanzibar", expectedOutput: "done", outputScoring: "contains" }),
          new Case({ name: "asks_lima", agent: echo, input: [{ role: "user", content: "Book a flight to Lima" }], expectedOutput: "done", outputScoring: "contains" }),
        ],
        { db: store, suiteName: "inputs" },
      );
      const found = await get(`/api/runs/${suite.runId}/cases?q=zanzibar`);
      assert.deepEqual(found.json.cases.map((c: any) => c.name), ["asks_zanzibar"]);
      assert.deepEqual((await get(`/api/runs/${suite.runId}/cases?q=lima`)).json.cases.map((c: any) => c.name), ["asks_lima"]);
      const one = await get(`/api/runs/${suite.runId}/cases/1`);
      assert.equal(one.json.input, "user: Book a flight to Lima");
    });

    test("a store of schema version 8 is migrated: its rows are searchable as before, new rows by their input too", async () => {
      let url: string;
      let dropOld: () => Promise<void> = async () => undefined;
      if (backend === "sqlite") url = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-serve-v8-")), "results.db")}`;
      else {
        const db = await createTestDatabase();
        url = db.url;
        dropOld = db.drop;
      }
      try {
        const driver = await openDriver(parseStoreUrl(url), { timeoutMs: 10_000 });
        await migrateDriver(driver, 8);
        const bool = (b: boolean) => (backend === "sqlite" ? Number(b) : b);
        await driver.query("INSERT INTO eval_runs (id, kind, suite_name, selection, config, started_at, status) VALUES ('old', 'suite', 'legacy', '{}', '{}', '2026-01-01T00:00:00.000Z', 'running')");
        await driver.query(
          `INSERT INTO case_results (run_id, case_index, name, tags, session_id, duration_seconds, output, tools_called, timed_out, skipped, passed, attempts, report, recorded_at)
           VALUES ('old', 0, 'old_case', '[]', 's', 1, 'an old answer about kayaks', '[]', ?, ?, ?, 1, '{}', '2026-01-01T00:00:01.000Z')`,
          [bool(false), bool(false), bool(true)],
        );
        await driver.close();
        const migrated = await ResultsStore.open(url);
        const v = await startViewer({ store: migrated, host: "127.0.0.1", port: 0, auth: false });
        try {
          assert.deepEqual(migrated.schema, { from: 8, to: 9 });
          await migrated.writeCases([caseRow("old", new CaseResult({ name: "new_case", index: 1, output: "a new answer" }), "2026-01-01T00:00:02.000Z", null, undefined, "a question about kayaks")]);
          const res = await get("/api/runs/old/cases?q=kayaks", {}, v.url);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(res.json.cases.map((c: any) => c.name), ["old_case", "new_case"]);
        } finally {
          await v.close();
          await migrated.close();
        }
      } finally {
        await dropOld();
      }
    });
  });
}
