// `evalfleet serve` in Chromium (playwright-core driving Debian's chromium), as real processes: a
// viewer over a SQLite store while real `evalfleet run` processes write to it. A live local run's
// progress appearing, filtering to failures (the filter in the URL), keyboard navigation to a case
// and its transcript, a hostile case name shown as text, a SIGKILL'd run keeping its results,
// tokens (401 without, a cookie from ?token=, 403 for what the role may not), and a distributed
// run on a private nats-server watched live.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { evalfleet, exitOf, fixture, killLeftovers, outputOf, waitFor, within, type Proc } from "./harness/processes.ts";
import { useNatsServer } from "./harness/use-nats-server.ts";

const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set EVALFLEET_CHROMIUM`;
const SUITE = fixture("viewer-suite.ts");
const HOSTILE_NAME = `<img src=x onerror="window.__xss=1">`;

/** Starts `evalfleet serve` on a free port; resolves with its URL once it listens. */
async function serve(db: string, extra: string[] = []): Promise<{ proc: Proc; url: string }> {
  const proc = evalfleet(["serve", "--db", db, "--port", "0", ...extra]);
  await waitFor(() => /listening on (http:\/\/\S+)/.test(proc.stdout) || proc.exited, () => `serve to listen: ${proc.stdout}${proc.stderr}`, 60_000);
  const url = /listening on (http:\/\/\S+)/.exec(proc.stdout)?.[1];
  assert.ok(url, `serve did not listen: ${proc.stdout}${proc.stderr}`);
  return { proc, url };
}

async function api(url: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, init);
  return res.ok ? res.json() : null;
}

describe("evalfleet serve in Chromium", { skip }, () => {
  const nats = useNatsServer();
  let browser: Browser;
  let dir: string;
  let db: string;
  let viewer: { proc: Proc; url: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "evalfleet-serve-viewer-"));
    db = `sqlite:${join(dir, "results.db")}`;
    // The store exists before the viewer opens it (a run creates it).
    const seed = await exitOf(evalfleet(["run", SUITE, "--db", db, "--run-id", "seed-run"], { EVALFLEET_TEST_CASES: "6", EVALFLEET_TEST_DELAY_MS: "1" }), "the seed run", 90_000);
    assert.equal(seed.code, 1, outputOf(seed));
    viewer = await serve(db);
    browser = await chromium.launch({ executablePath: CHROMIUM, timeout: 60_000, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  });
  after(async () => {
    await browser?.close();
    viewer?.proc.child.kill("SIGTERM");
    await killLeftovers();
  });

  /** A fresh page; it may load nothing but the viewer's origin (no CDN), and any page error is kept. */
  async function open(url: string): Promise<{ page: Page; errors: string[]; foreign: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    const origin = new URL(url).origin;
    await context.route("**/*", (route) => {
      if (route.request().url().startsWith(origin)) return route.continue();
      foreign.push(route.request().url());
      return route.abort();
    });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
    await page.goto(url, { waitUntil: "load", timeout: 30_000 });
    return { page, errors, foreign };
  }

  const doneOf = async (page: Page): Promise<number> => Number(((await page.locator("#done").textContent()) ?? "0").split("/")[0]!.trim());

  test("a live local run: its progress grows on the page while it runs; then filters, keys and a case's transcript", async () => {
    const run = evalfleet(["run", SUITE, "--db", db, "--run-id", "live-run", "--threads", "1", "--concurrency", "1"], { EVALFLEET_TEST_CASES: "24", EVALFLEET_TEST_DELAY_MS: "400" });
    await waitFor(async () => (await api(`${viewer.url}/api/runs/live-run`))?.status === "running" || run.exited, "the run to be recorded as running", 60_000);
    const { page, errors, foreign } = await open(`${viewer.url}/runs/live-run`);
    await page.locator("#cases-body tr").first().waitFor({ timeout: 30_000 }).catch(() => undefined);
    assert.equal(await page.locator("#live").isVisible(), true, "the page says the run is live");
    const first = await doneOf(page);
    // Without reloading: the count grows as results land.
    await waitFor(async () => (await doneOf(page)) > first + 2, () => `done to grow past ${first} on the page`, 30_000);
    await waitFor(async () => (await page.locator("#cases-body tr").count()) > Math.min(first, 50), "new rows in the case table", 30_000);
    const finished = await exitOf(run, "the live run", 120_000);
    assert.equal(finished.code, 1, outputOf(finished));
    await waitFor(async () => (await page.locator("#summary .s-failed").count()) > 0 && (await doneOf(page)) === 24, "the final status on the page", 30_000);
    assert.equal(await page.locator("#live").isVisible(), false);

    // Filter to failures: the table shows failures only and the URL carries the filter.
    await page.selectOption("#filters select[name=status]", "failed");
    await page.click("#filters button[type=submit]");
    await waitFor(async () => (await page.locator("#cases-total").textContent()) === "8 matching", "8 failures", 15_000);
    assert.match(page.url(), /\?status=failed$/);
    const statuses = await page.locator("#cases-body tr td:nth-child(3)").allTextContents();
    assert.deepEqual([...new Set(statuses)], ["failed"]);
    // A shared link opens the same view.
    const shared = await open(page.url());
    await waitFor(async () => (await shared.page.locator("#cases-total").textContent()) === "8 matching", "the shared view", 15_000);
    await shared.page.context().close();

    // Keyboard: j twice selects the second failure, Enter opens it.
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    const selectedIndex = await page.locator("#cases-body tr.selected").getAttribute("data-index");
    assert.equal(selectedIndex, "3");
    await Promise.all([page.waitForURL(/\/runs\/live-run\/cases\/3$/), page.keyboard.press("Enter")]);
    await page.locator("#transcript").waitFor({ timeout: 15_000 });
    assert.match((await page.locator("#transcript").textContent()) ?? "", /tool lookup[\s\S]*found 3/);
    assert.equal(await page.locator("#case-name").textContent(), "viewer_case_003");
    // j on a case page goes to the next failure.
    await Promise.all([page.waitForURL(/\/cases\/6$/), page.keyboard.press("j")]);
    assert.deepEqual(errors, []);
    assert.deepEqual(foreign, []);
    await page.context().close();
  });

  test("a hostile case name is shown as text, never run as markup", async () => {
    const { page, errors } = await open(`${viewer.url}/runs/seed-run?q=img`);
    await page.locator("#cases-body tr").first().waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#cases-body td.name").first().textContent(), HOSTILE_NAME);
    assert.equal(await page.locator("#cases-body img").count(), 0);
    await page.click("#cases-body td.name a");
    await page.locator("#case-name").waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#case-name").textContent(), HOSTILE_NAME);
    assert.equal(await page.locator("main img").count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss), undefined);
    assert.deepEqual(errors, []);
    await page.context().close();
  });

  test("a run killed with SIGKILL keeps the results it had; the viewer shows them", async () => {
    const run = evalfleet(["run", SUITE, "--db", db, "--run-id", "killed-run", "--threads", "1", "--concurrency", "1"], { EVALFLEET_TEST_CASES: "40", EVALFLEET_TEST_DELAY_MS: "300" });
    await waitFor(async () => ((await api(`${viewer.url}/api/runs/killed-run`))?.done ?? 0) >= 4 || run.exited, "4 results recorded", 60_000);
    run.child.kill("SIGKILL");
    await within(run.done, "the killed run to exit", 10_000);
    const kept = await api(`${viewer.url}/api/runs/killed-run`);
    assert.ok(kept.done >= 4 && kept.done < 40, `done ${kept.done}`);
    const { page } = await open(`${viewer.url}/runs/killed-run`);
    await page.locator("#cases-body tr").first().waitFor({ timeout: 15_000 });
    assert.equal(await page.locator("#cases-body tr").count(), Math.min(kept.done, 50));
    await page.context().close();
  });

  test("tokens: 401 without one; ?token= once becomes a cookie; a viewer token is refused the admin listing (403)", async () => {
    const make = async (role: string) => {
      const r = await exitOf(evalfleet(["token", "create", "--role", role, "--db", db]), "token create", 60_000);
      assert.equal(r.code, 0, outputOf(r));
      return r.stdout.trim().split("\n").at(-1)!;
    };
    const token = await make("viewer");
    assert.match(token, /^efv_/);
    const secured = await serve(db, ["--auth"]);
    try {
      const bare = await fetch(`${secured.url}/`);
      assert.equal(bare.status, 401);
      const { page, errors } = await open(`${secured.url}/?token=${token}`);
      assert.equal(new URL(page.url()).search, "", "the token left the address bar");
      await page.locator("#runs").waitFor({ timeout: 15_000 });
      assert.ok((await page.locator("#runs tbody tr").count()) >= 2);
      const cookies = await page.context().cookies();
      assert.equal(cookies.find((c) => c.name === "evalfleet_token")?.httpOnly, true);
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie), "", "scripts cannot read the token");
      assert.equal((await page.context().request.get(`${secured.url}/api/tokens`)).status(), 403);
      assert.deepEqual(errors, []);
      await page.context().close();
      const list = await exitOf(evalfleet(["token", "list", "--db", db]), "token list", 60_000);
      assert.equal(list.code, 0);
      assert.ok(!list.stdout.includes(token), "token list never prints a token");
    } finally {
      secured.proc.child.kill("SIGTERM");
      const stopped = await exitOf(secured.proc, "serve to stop on SIGTERM", 15_000);
      assert.equal(stopped.code, 0, outputOf(stopped));
    }
  });

  test("a distributed run watched live", async () => {
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_CASES: "24", EVALFLEET_TEST_DELAY_MS: "400" };
    const runId = "dist-live";
    const worker = evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "1"], env);
    const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", runId, "--db", db], env);
    await waitFor(async () => (await api(`${viewer.url}/api/runs/${runId}`))?.status === "running" || coordinator.exited, "the distributed run to be recorded", 90_000);
    const { page, errors } = await open(`${viewer.url}/runs/${runId}`);
    await page.locator("#done").waitFor({ timeout: 15_000 });
    const first = await doneOf(page);
    await waitFor(async () => (await doneOf(page)) > first + 2, "done to grow on the page", 60_000);
    assert.ok((await page.locator("#progress").textContent())?.includes("recorded"));
    const c = await exitOf(coordinator, "the coordinator", 120_000);
    assert.equal(c.code, 1, outputOf(c));
    await waitFor(async () => (await doneOf(page)) === 24, "every result on the page", 30_000);
    assert.deepEqual(errors, []);
    await page.context().close();
    await exitOf(worker, "the worker", 60_000);
  });
});
