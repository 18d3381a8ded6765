// The adversarial pass over the viewer (`evalfleet serve --auth`, issue 32), as real processes over
// a real SQLite store: what a viewer token can and cannot do.
//
// - A token scoped to a suite reads that suite's runs and nothing of another's: every route of a
//   hidden run is 404 (it cannot tell hidden from missing), `flaky` of another suite and the token
//   listing 403, and a case's history never names a run of another suite, even for a case of the
//   same name there.
// - No token writes: every method but GET and HEAD is 405 on every route, and the store is as it was.
// - Revoking a token ends an event stream it had already opened (a `revoked` event, then the end),
//   and its next request is 401.
// - `?token=` on a path that a browser would read as another host (`//evil.example/`,
//   `/\evil.example/`) redirects on this origin; the cookie is HttpOnly and SameSite=Strict.
// - The token is in neither the server's output nor the database file (only its hash is stored).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalfleet, exitOf, killLeftovers, outputOf, waitFor, within, type Proc } from "./harness/processes.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";
import { caseRow } from "../coordinator/history/store/case-row.ts";
import { rawGet, viewerFetch, viewerRunStart as runStart } from "../test/support/viewer-fixtures.ts";
import { CaseResult } from "../shared/result/result.ts";

const result = (name: string, index: number, output: string, passed = true): CaseResult =>
  new CaseResult({ name, index, output, expectations: { expectedOutput: { method: "exact", passed, reason: passed ? "equal" : "differs" } } });

/** Two suites: alpha (one finished run, one running) and beta (one finished run), with a case named `shared` in both. */
async function seed(store: ResultsStore): Promise<void> {
  await store.beginRun(runStart("alpha-1", "alpha", "2026-01-01T10:00:00.000Z", 2));
  await store.writeCases([caseRow("alpha-1", result("shared", 0, "alpha says hi"), "2026-01-01T10:00:01.000Z"), caseRow("alpha-1", result("a-only", 1, "alpha two"), "2026-01-01T10:00:01.000Z")]);
  await store.finishRun("alpha-1", { finishedAt: "2026-01-01T10:01:00.000Z", status: "passed", total: 2, passed: 2, failed: 0, skipped: 0, durationSeconds: 60, summary: null });
  await store.beginRun(runStart("beta-1", "beta", "2026-01-02T10:00:00.000Z", 1));
  await store.writeCases([caseRow("beta-1", result("shared", 0, "beta's secret plan", false), "2026-01-02T10:00:01.000Z")]);
  await store.finishRun("beta-1", { finishedAt: "2026-01-02T10:01:00.000Z", status: "failed", total: 1, passed: 0, failed: 1, skipped: 0, durationSeconds: 60, summary: null });
  // Running now (a run whose start is long past without a heartbeat would read as abandoned).
  const now = new Date().toISOString();
  await store.beginRun(runStart("alpha-2", "alpha", now, 5));
  await store.writeCases([caseRow("alpha-2", result("shared", 0, "alpha again"), now)]);
}

describe("security: what a viewer token can and cannot do", () => {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-viewer-"));
  const dbFile = join(dir, "results.db");
  const db = `sqlite:${dbFile}`;
  let server: Proc;
  let base = "";
  const tokens: Record<string, { id: string; token: string }> = {};

  /** `evalfleet token create`: its id from the first line, the token from the last. */
  const create = async (args: string[]): Promise<{ id: string; token: string }> => {
    const r = await exitOf(evalfleet(["token", "create", ...args, "--db", db]), "token create", 60_000);
    assert.equal(r.code, 0, outputOf(r));
    const lines = r.stdout.trim().split("\n");
    const id = /token ([0-9a-f]+):/.exec(lines[0]!)?.[1];
    assert.ok(id, `token create names the token's id: ${r.stdout}`);
    return { id, token: lines.at(-1)! };
  };
  const get = (path: string, token: string, init: RequestInit = {}) =>
    viewerFetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });

  before(async () => {
    const store = await ResultsStore.open(db);
    await seed(store);
    await store.close();
    tokens.alpha = await create(["--role", "viewer", "--suite", "alpha"]);
    tokens.admin = await create(["--role", "admin"]);
    tokens.doomed = await create(["--role", "viewer", "--suite", "alpha"]);
    server = evalfleet(["serve", "--db", db, "--port", "0", "--auth"]);
    await waitFor(() => /listening on (http:\/\/\S+)/.test(server.stdout) || server.exited, () => `serve to listen: ${server.stdout}${server.stderr}`, 60_000);
    base = /listening on (http:\/\/\S+)/.exec(server.stdout)?.[1] ?? "";
    assert.ok(base, `serve did not listen: ${server.stdout}${server.stderr}`);
  });
  after(async () => {
    server?.child.kill("SIGTERM");
    await killLeftovers();
  });

  test("a token scoped to a suite sees that suite only: a hidden run is 404 on every route, another suite's flaky and the token list 403", async () => {
    const t = tokens.alpha!.token;
    const runs = await get("/api/runs", t);
    assert.equal(runs.status, 200);
    assert.deepEqual(runs.json.runs.map((r: { id: string }) => r.id), ["alpha-2", "alpha-1"], "only alpha's runs, newest first");
    for (const path of ["/api/runs/beta-1", "/api/runs/beta-1/cases", "/api/runs/beta-1/cases/0", "/api/runs/beta-1/cases?q=secret", "/api/compare?a=alpha-1&b=beta-1", "/api/compare?a=beta-1&b=alpha-1", "/api/events?run=beta-1"]) {
      const r = await get(path, t);
      assert.equal(r.status, 404, `${path}: ${r.text}`);
      assert.equal(typeof r.json?.error, "string", `${path} answers a JSON error`);
      assert.ok(!r.text.includes("secret plan"), `${path} shows nothing of the hidden run`);
      const missing = await get(path.replace(/beta-1/g, "no-such-run"), t);
      assert.equal(missing.status, 404, "a missing run looks the same");
    }
    assert.equal((await get("/api/flaky?suite=beta", t)).status, 403);
    assert.equal((await get("/api/flaky?suite=alpha", t)).status, 200);
    assert.equal((await get("/api/tokens", t)).status, 403, "a viewer token does not list tokens");
    // The same case name in another suite: its history names alpha's runs only.
    const shared = await get("/api/runs/alpha-1/cases/0", t);
    assert.equal(shared.status, 200, shared.text);
    assert.ok(!shared.text.includes("beta-1") && !shared.text.includes("secret plan"), `the case's history leaves beta out: ${shared.text.slice(0, 500)}`);
    // An admin token sees both, and lists the tokens without their secrets.
    assert.deepEqual((await get("/api/runs", tokens.admin!.token)).json.runs.map((r: { id: string }) => r.id), ["alpha-2", "beta-1", "alpha-1"]);
    const listed = await get("/api/tokens", tokens.admin!.token);
    assert.equal(listed.status, 200);
    assert.equal(listed.json.tokens.length, 3);
    for (const { token } of Object.values(tokens)) assert.ok(!listed.text.includes(token), "no token's secret in the listing");
  });

  test("no token writes: every method but GET and HEAD is 405 on every route, and the store is unchanged", async () => {
    for (const token of [tokens.alpha!.token, tokens.admin!.token]) {
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        for (const path of ["/api/runs", "/api/runs/alpha-1", "/api/runs/alpha-1/cases/0", "/api/tokens", "/"]) {
          const r = await get(path, token, { method, body: method === "DELETE" ? null : JSON.stringify({ status: "passed" }), headers: { "content-type": "application/json" } });
          assert.equal(r.status, 405, `${method} ${path}`);
        }
      }
    }
    const store = await ResultsStore.open(db);
    try {
      assert.deepEqual((await store.caseRecords("beta-1")).map((c) => c.passed), [false], "beta's case still failed");
      assert.equal((await store.findRun("alpha-2")).status, "running");
    } finally {
      await store.close();
    }
  });

  test("revoking a token ends the event stream it opened, and its next request is 401", async () => {
    const { id, token } = tokens.doomed!;
    const controller = new AbortController();
    const res = await fetch(`${base}/api/events?run=alpha-2`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    assert.equal(res.status, 200);
    let text = "";
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
    })();
    try {
      await waitFor(() => /event: progress/.test(text), () => `the stream's first progress event: ${text}`, 30_000);
      const revoked = await exitOf(evalfleet(["token", "revoke", id, "--db", db]), "token revoke", 60_000);
      assert.equal(revoked.code, 0, outputOf(revoked));
      await within(reading, `the stream to end after the revocation: ${text}`, 30_000);
      assert.match(text, /event: revoked\ndata: \{"error":"the token of this stream was revoked"\}/);
      assert.equal((await get("/api/runs/alpha-2", token)).status, 401);
    } finally {
      controller.abort();
    }
  });

  test("?token= on a path a browser reads as another host redirects on this origin, with an HttpOnly SameSite=Strict cookie", async () => {
    const t = tokens.alpha!.token;
    for (const path of [`//evil.example/?token=${t}`, `/\\evil.example/?token=${t}`, `///evil.example/runs?token=${t}&x=1`]) {
      const r = await rawGet(base, path);
      // Node's HTTP parser refuses a backslash in the request target (400); a browser sends it as `//`.
      if (path.startsWith("/\\") && r.status === 400) continue;
      assert.equal(r.status, 303, `${path}: ${r.body}`);
      const location = String(r.headers.location);
      assert.ok(location.startsWith("/") && !/^[/\\]{2}/.test(location), `${path} redirects to ${location}, on this origin`);
      assert.ok(!location.includes(t), "the token left the address");
      assert.equal(new URL(location, base).origin, new URL(base).origin);
      const cookie = String(r.headers["set-cookie"]);
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Strict/i);
    }
    const page = await rawGet(base, `/?token=${t}`);
    assert.equal(page.headers.location, "/");
  });

  test("no token is in the server's output or the database file", () => {
    const stored = [dbFile, `${dbFile}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1")).join("\n");
    for (const [who, { token }] of Object.entries(tokens)) {
      assert.match(token, /^efv_/);
      assert.ok(!server.stdout.includes(token) && !server.stderr.includes(token), `${who}'s token is not in the server's output`);
      assert.ok(!stored.includes(token), `${who}'s token is not in the database file`);
    }
  });
});
