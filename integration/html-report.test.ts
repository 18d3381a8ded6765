// `evalfleet report --html` end to end: real runs recorded in a SQLite store, the report written by
// a real `evalfleet` process, then opened in headless Chromium (Debian's package, driven by
// playwright-core) with every network request refused: it must render, filter, open a case's
// details, run no recorded script, and look like a page in its screenshots.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { loadSuite, runSuiteLocal } from "../index.ts";
import { evalfleet, exitOf, fixture, outputOf } from "./harness/processes.ts";
import { createTestDatabase, postgresUnavailable } from "../test/support/postgres.ts";

const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";
const skip = existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set EVALFLEET_CHROMIUM`;
const pgSkip = await postgresUnavailable();
const drops: Array<() => Promise<void>> = [];
after(async () => {
  for (const d of drops) await d().catch(() => undefined);
});

/** The store the runs are recorded in: a SQLite file, or a PostgreSQL database of the test's own. */
const BACKENDS = [
  { name: "sqlite", skip: false as const, url: async (dir: string): Promise<string> => `sqlite:${join(dir, "results.db")}` },
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

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  assert.equal(png.subarray(1, 4).toString("latin1"), "PNG", "a PNG file");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Distinct colours in a PNG, counted by the browser itself (no image library needed). */
async function distinctColours(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (b64) => {
    // Runs in the page (the DOM is there, not in this file's types).
    const w = globalThis as unknown as { Image: new () => any; document: any };
    const img = new w.Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = w.document.createElement("canvas");
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext("2d")!;
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, img.width, img.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < data.length; i += 4 * 7) seen.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    return seen.size;
  }, png.toString("base64"));
}

for (const backend of BACKENDS) describe(`evalfleet report --html in headless Chromium (${backend.name} store)`, { skip: skip || backend.skip }, () => {
  let browser: Browser;
  let dir: string;
  let html: string;
  let runId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "evalfleet-html-"));
    const db = await backend.url(dir);
    const suite = await loadSuite(fixture("history-suite.ts"));
    process.env.EVALFLEET_GIT_BRANCH = "main";
    // Four recorded runs: the flipper flips, the numeric judge drifts.
    const script: Array<[string, string]> = [["", "8"], ["flipper", "6"], ["", "9"], ["flipper", "5"]];
    for (const [fail, score] of script) {
      process.env.EVALFLEET_TEST_FAIL = fail;
      process.env.EVALFLEET_TEST_SCORE = score;
      const result = await runSuiteLocal(suite, { db, threads: 2, concurrency: 4 });
      runId = result.runId!;
    }
    html = join(dir, "out", "report.html");
    const r = await exitOf(evalfleet(["report", "--html", html, "--db", db]), "evalfleet report", 60_000);
    assert.equal(r.code, 0, outputOf(r));
    assert.equal(r.stdout, `html report: ${html} (run ${runId}, 7 cases, 4 runs in the trends)\n`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      timeout: 60_000,
      // Root in CI needs --no-sandbox; the rest keeps Chromium from reaching for a network it does not have.
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });
  after(async () => {
    await browser?.close();
  });

  /** Opens the report in a fresh page; every request other than the file itself is refused and listed. */
  async function open(): Promise<{ page: Page; refused: string[]; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, offline: true });
    const page = await context.newPage();
    const refused: string[] = [];
    const errors: string[] = [];
    const self = pathToFileURL(html).href;
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url === self) return route.continue();
      refused.push(url);
      return route.abort();
    });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
    await page.goto(self, { waitUntil: "load", timeout: 30_000 });
    return { page, refused, errors };
  }

  test("the page is self-contained: no request but the file, no error, no recorded script run", async () => {
    const text = readFileSync(html, "utf8");
    assert.doesNotMatch(text, /<(link|img|iframe)\b|\bsrc=|https?:\/\//i, "nothing external to load");
    const { page, refused, errors } = await open();
    assert.deepEqual(refused, []);
    assert.deepEqual(errors, []);
    assert.equal(await page.title(), `history · run ${runId}`);
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned), undefined, "the agent's <script> output is text");
    await page.close();
  });

  test("summary, charts over the last runs, the case table", async () => {
    const { page } = await open();
    const card = async (k: string): Promise<string> => (await page.locator(".card", { hasText: k }).locator(".v").textContent())!.trim();
    assert.equal(await card("Cases"), "7");
    assert.equal(await card("Passed"), "4"); // the last run: flipper, the numeric judge (5 < 7) and broken fail
    assert.equal(await card("Failed"), "3");
    assert.equal(await card("Judge model"), "history-judge");
    // One point per run in both trends; the current run is marked.
    assert.equal(await page.locator("#chart-pass-rate circle").count(), 4);
    assert.equal(await page.locator("#chart-duration circle").count(), 4);
    assert.equal(await page.locator("#chart-pass-rate circle.current").count(), 1);
    assert.deepEqual(await page.locator("#chart-pass-rate circle title").allTextContents().then((t) => t.map((s) => s.split(" · ")[2])), ["6/7 passed", "4/7 passed", "6/7 passed", "4/7 passed"]);
    // The numeric judge scored 5 in this run.
    assert.equal(await page.locator("#chart-scores rect").count(), 10);
    assert.match((await page.locator("#chart-scores").textContent())!, /score 5: 1 case/);
    // The slowest case first.
    assert.match((await page.locator("#chart-slowest text").first().textContent())!, /^slow$/);
    assert.equal(await page.locator("tbody.case").count(), 7);
    assert.equal(await page.locator("#shown").textContent(), "Showing 7 of 7 cases");
    const row = page.locator('tbody.case[data-name="flipper"] tr.row');
    assert.deepEqual((await row.locator("td").allTextContents()).map((s) => s.trim()), ["1", "flipper", "FAIL", "names someone else", "lookup", (await row.locator("td").nth(5).textContent())!.trim(), "1"]);
    await page.close();
  });

  test("the filter (text and status) and a case's details; screenshots show a page that changes", async () => {
    const { page } = await open();
    const before = await page.screenshot({ fullPage: true });
    const size = pngSize(before);
    assert.ok(size.width >= 1200 && size.height >= 900, `a full page, not an empty one: ${size.width}x${size.height}`);
    assert.ok((await distinctColours(page, before)) > 40, "text, charts and badges, not a blank page");

    await page.fill("#filter", "flip");
    assert.equal(await page.locator("tbody.case:visible").count(), 1);
    assert.equal(await page.locator("#shown").textContent(), "Showing 1 of 7 cases");
    await page.fill("#filter", "");
    await page.selectOption("#status", "fail");
    assert.deepEqual(await page.locator("tbody.case:visible").evaluateAll((els) => els.map((e) => e.getAttribute("data-name"))), ["flipper", "numeric_judge", "broken"]);
    const filtered = await page.screenshot({ fullPage: true });
    assert.ok(pngSize(filtered).height < size.height, `fewer rows, a shorter page: ${pngSize(filtered).height} < ${size.height}`);
    assert.ok(!filtered.equals(before));

    // Text and status together; then a tag.
    await page.fill("#filter", "broken");
    assert.equal(await page.locator("tbody.case:visible").count(), 1);
    await page.selectOption("#status", "pass");
    assert.equal(await page.locator("tbody.case:visible").count(), 0);
    assert.equal(await page.locator("#shown").textContent(), "Showing 0 of 7 cases");
    await page.selectOption("#status", "all");
    await page.fill("#filter", "web");
    assert.deepEqual(await page.locator("tbody.case:visible").evaluateAll((els) => els.map((e) => e.getAttribute("data-name"))), ["html_escape"]);

    // A case's details open on a click: the hostile output is shown as text.
    const details = page.locator('tbody.case[data-name="html_escape"] tr.details');
    assert.equal(await details.isVisible(), false);
    await page.click('tbody.case[data-name="html_escape"] button.toggle');
    assert.equal(await details.isVisible(), true);
    assert.match((await details.locator("pre.output").textContent())!, /^<script>window\.__pwned = 1<\/script> & "quoted" answer for html_escape$/);
    assert.match((await details.textContent())!, /Tokens \/ costin 111 · out 20 · total 131 · \$0\.0005/);
    const opened = await page.screenshot({ fullPage: true });
    assert.ok((await distinctColours(page, opened)) > 40);

    // The team case's reliability details.
    await page.fill("#filter", "");
    await page.click('tbody.case[data-name="team_case"] button.toggle');
    assert.match((await page.locator('tbody.case[data-name="team_case"] tr.details').textContent())!, /ReliabilityPASS · passed: multiply · missing: none/);
    await page.close();
  });
});
