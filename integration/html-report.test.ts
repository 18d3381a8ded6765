// `evalfleet report --html` end to end: real runs recorded in a SQLite store, the report written by
// a real `evalfleet` process, then opened in headless Chromium (Debian's package, driven by
// playwright-core) with every network request refused: it must render, filter, open a case's
// details, run no recorded script, and look like a page in its screenshots.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { loadSuite, runSuiteLocal } from "../index.ts";
import { evalfleet, exitOf, fixture, outputOf } from "./harness/processes.ts";
import { createTestDatabase, postgresUnavailable } from "../test/support/postgres.ts";
import type { CaseRecord } from "../coordinator/history/store/case-record.ts";

const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";
// Transcripts are kept by the store of the iterate issue (case_transcripts); before it, that test says so.
const { ResultsStore } = await import("../coordinator/history/store/store.ts");
const storeKeepsTranscripts = typeof (ResultsStore.prototype as unknown as { transcripts?: unknown }).transcripts === "function";
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
  const runIds: string[] = [];
  let db: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "evalfleet-html-"));
    db = await backend.url(dir);
    const suite = await loadSuite(fixture("history-suite.ts"));
    process.env.EVALFLEET_GIT_BRANCH = "main";
    // Four recorded runs: the flipper flips, the numeric judge drifts.
    // The last run also fails `slow` by its scorer alone: its reason must reach the table.
    const script: Array<[string, string]> = [["", "8"], ["flipper", "6"], ["", "9"], ["flipper,slow", "5"]];
    for (const [fail, score] of script) {
      process.env.EVALFLEET_TEST_FAIL = fail;
      process.env.EVALFLEET_TEST_SCORE = score;
      const result = await runSuiteLocal(suite, { db, threads: 2, concurrency: 4 });
      runId = result.runId!;
      runIds.push(runId);
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
    assert.equal(await card("Passed"), "3"); // the last run: flipper, slow, the numeric judge (5 < 7) and broken fail
    assert.equal(await card("Failed"), "4");
    assert.equal(await card("Judge model"), "history-judge");
    // One point per run in both trends; the current run is marked.
    assert.equal(await page.locator("#chart-pass-rate circle").count(), 4);
    assert.equal(await page.locator("#chart-duration circle").count(), 4);
    assert.equal(await page.locator("#chart-pass-rate circle.current").count(), 1);
    assert.deepEqual(await page.locator("#chart-pass-rate circle title").allTextContents().then((t) => t.map((s) => s.split(" · ")[2])), ["6/7 passed", "4/7 passed", "6/7 passed", "3/7 passed"]);
    // The numeric judge scored 5 in this run.
    assert.equal(await page.locator("#chart-scores rect").count(), 10);
    assert.match((await page.locator("#chart-scores").textContent())!, /score 5: 1 case/);
    // The slowest case first.
    assert.match((await page.locator("#chart-slowest text").first().textContent())!, /^slow$/);
    assert.equal(await page.locator("tbody.case").count(), 7);
    assert.equal(await page.locator("#shown").textContent(), "Showing 7 of 7 cases");
    const row = page.locator('tbody.case[data-name="flipper"] tr.row');
    assert.deepEqual((await row.locator("td").allTextContents()).map((s) => s.trim()), ["1", "flipper", "FAIL", "names someone else \u00b7 scorer: wrong name", "check", "lookup", (await row.locator("td").nth(6).textContent())!.trim(), "1"]);
    // Whatever the check, the reason is in the table: the scorer alone, the reliability check, the numeric judge.
    const reason = async (name: string): Promise<string> => (await page.locator(`tbody.case[data-name="${name}"] td.reason`).textContent())!;
    assert.equal(await reason("slow"), "scorer: wrong name");
    assert.equal(await reason("broken"), 'reliability: expected missing_tool: never called (calls made: lookup); unexpected call lookup(q="broken") at step 1 (only the expected tools may run)');
    assert.equal(await reason("numeric_judge"), "scored by the script");
    assert.equal(await reason("stable"), "");
    // Failures grouped by cause, each group expandable; the re-run command for the failures.
    assert.equal(await page.locator("details.group").count(), 4);
    const scorerGroup = page.locator("details.group", { hasText: "check · scorer · wrong name" });
    await scorerGroup.locator("summary").click();
    await scorerGroup.locator("li").first().waitFor({ timeout: 10_000 }); // filled by the toggle event
    assert.deepEqual(await scorerGroup.locator("li").allTextContents(), ["slow"]);
    await scorerGroup.locator("button.show-group").click();
    assert.deepEqual(await page.locator("tbody.case").evaluateAll((els) => els.map((e) => e.getAttribute("data-name"))), ["slow"]);
    assert.equal(await page.locator("#rerun-command").textContent(), `evalfleet run ${fixture("history-suite.ts")} --rerun-failed ${runId}`);
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
    assert.deepEqual(await page.locator("tbody.case:visible").evaluateAll((els) => els.map((e) => e.getAttribute("data-name"))), ["flipper", "numeric_judge", "broken", "slow"]);
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
    // The details are inflated from their compressed chunk when the case opens.
    await page.locator('tbody.case[data-name="html_escape"][data-ready]').waitFor({ timeout: 10_000 });
    assert.match((await details.locator("pre.output").textContent())!, /^<script>window\.__pwned = 1<\/script> & "quoted" answer for html_escape$/);
    assert.match((await details.textContent())!, /Tokens \/ costin 111 · out 20 · total 131 · \$0\.0005/);
    // Its phase timeline and its JSON entry.
    assert.match((await details.locator(".phases .legend").textContent())!, /^setup [\d.]+m?s ?run [\d.]+m?s ?checks [\d.]+m?s ?teardown [\d.]+m?s$/);
    assert.ok((await details.locator(".timeline span").count()) >= 1);
    assert.equal(JSON.parse((await details.locator("pre.json").textContent())!).name, "html_escape");
    const opened = await page.screenshot({ fullPage: true });
    assert.ok((await distinctColours(page, opened)) > 40);

    // The team case's reliability details.
    await page.fill("#filter", "");
    await page.click('tbody.case[data-name="team_case"] button.toggle');
    await page.locator('tbody.case[data-name="team_case"][data-ready]').waitFor({ timeout: 10_000 });
    assert.match((await page.locator('tbody.case[data-name="team_case"] tr.details').textContent())!, /ReliabilityPASS · passed: multiply · missing: none/);
    // Its trajectory, step by step: the member's call met the expectation.
    const trajectory = page.locator('tbody.case[data-name="team_case"] .trajectory');
    assert.equal(await trajectory.locator(".reason").textContent(), "the expected call matched (2 tool calls)");
    assert.deepEqual(await trajectory.locator("li").evaluateAll((els) => els.map((e) => [e.className, e.getAttribute("data-step"), e.textContent])), [
      ["other", "1", "delegate_task_to_member \u00b7 ok \u00b7 other"],
      ["matched", "2", "multiply \u00b7 ok \u00b7 matched (expected call 1)"],
    ]);
    // A failed one marks its step and says why.
    await page.click('tbody.case[data-name="broken"] button.toggle');
    await page.locator('tbody.case[data-name="broken"][data-ready]').waitFor({ timeout: 10_000 });
    const broken = page.locator('tbody.case[data-name="broken"] .trajectory');
    assert.deepEqual(await broken.locator("li.failed").evaluateAll((els) => els.map((e) => e.getAttribute("data-step"))), ["1"]);
    assert.deepEqual(await broken.locator(".failure").allTextContents(), ["expected missing_tool: never called (calls made: lookup)", 'step 1: unexpected call lookup(q="broken") at step 1 (only the expected tools may run)']);
    await page.close();
  });

  test(
    "a case's stored transcript in its details: the tool calls with their arguments and results, the member's at depth 1",
    { skip: storeKeepsTranscripts ? false : "this results store keeps no transcripts yet (they come with the iterate issue's store)" },
    async () => {
      const { page } = await open();
      await page.click('tbody.case[data-name="team_case"] button.toggle');
      await page.locator('tbody.case[data-name="team_case"][data-ready]').waitFor({ timeout: 10_000 });
      const t = page.locator('tbody.case[data-name="team_case"] .transcript');
      assert.equal(await t.locator(".run > .tool > .role").textContent(), "tool delegate_task_to_member");
      assert.deepEqual(JSON.parse((await t.locator(".run > .tool pre.tool-args").textContent())!), { member_id: "history-member" });
      const member = t.locator(".run > .member");
      assert.match((await member.locator(":scope > .role").textContent())!, /^member 1 \(depth 1\)/);
      assert.deepEqual(JSON.parse((await member.locator(".tool pre.tool-args").textContent())!), { a: 6, b: 7 });
      assert.equal(await member.locator(".tool pre.tool-result").textContent(), "42");
      await page.close();
    },
  );

  test("evalfleet compare A B --html: side by side, flips first, the output diff of a flipped case", async () => {
    const out = join(dir, "out", "compare.html");
    const r = await exitOf(evalfleet(["compare", runIds[0]!, runIds[3]!, "--db", db, "--html", out]), "evalfleet compare --html", 60_000);
    assert.equal(r.code, 0, outputOf(r));
    assert.match(r.stdout, new RegExp(`compare html: ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(3 pass -> fail, 0 fail -> pass\\)\n$`));
    const context = await browser.newContext({ offline: true });
    const page = await context.newPage();
    await page.goto(pathToFileURL(out).href, { waitUntil: "load", timeout: 30_000 });
    assert.deepEqual(await page.locator("#regressions details.case").evaluateAll((els) => els.map((e) => e.getAttribute("data-name"))), ["flipper", "numeric_judge", "slow"]);
    const flipper = page.locator('details.case[data-name="flipper"]');
    assert.match((await flipper.locator("summary").textContent())!, /^flipperPASS.*FAIL.*names someone else/);
    await flipper.locator("summary").click();
    assert.equal(await flipper.locator(".diff .del").textContent(), "- answer for flipper");
    assert.equal(await flipper.locator(".diff .add").textContent(), "+ answer for someone else");
    assert.equal(await flipper.locator(".diff .add").isVisible(), true);
    await context.close();
  });
});

describe("a large report in headless Chromium: paging and search on 2,000 cases", { skip }, () => {
  let browser: Browser;
  let file: string;
  before(async () => {
    const { renderHtmlReport } = await import("../coordinator/history/html/report.ts");
    const run = { id: "big-run", kind: "suite" as const, suiteName: "big", suiteFingerprint: null, suitePath: "/evals/big.ts", selection: { cases: [] }, config: {}, judgeModel: null, timeoutSeconds: 60, startedAt: "2026-12-01T00:00:00.000Z", finishedAt: "2026-12-01T00:10:00.000Z", status: "failed" as const, total: 2000, passed: 1800, failed: 200, skipped: 0, durationSeconds: 600, summary: null, gitCommit: null, gitBranch: null, host: null };
    const cases: CaseRecord[] = Array.from({ length: 2000 }, (_, i) => {
      const failed = i % 10 === 3;
      return {
        runId: "big-run", index: i, name: `case-${String(i).padStart(4, "0")}`, agentId: "a", teamId: null, tags: [i % 2 ? "odd" : "even"], sessionId: `s-${i}`, durationSeconds: 0.5,
        judgePassed: null, judgeReason: null, judgeScore: null, reliabilityPassed: null, reliability: null, output: `answer ${i}`, toolsCalled: [], timedOut: false, skipped: false, passed: !failed,
        error: null, scoreValue: failed ? 0 : 1, scorePassed: !failed, scoreReason: failed ? `wrong answer for ${i}` : "ok", scoreDetail: null, attempts: 1, worker: "w",
        inputTokens: null, outputTokens: null, totalTokens: null, costUsd: null, report: { name: `case-${i}` } as never, recordedAt: "2026-12-01T00:10:00.000Z",
      };
    });
    // One case has a transcript as the store keeps it (shared/wire/transcript.ts): a team whose
    // member calls a tool, and whose member's member calls one that fails.
    const transcript = {
      v: 1,
      status: "completed",
      error: null,
      usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150, costUsd: null },
      cut: null,
      run: {
        agentId: "math-team",
        content: "10! = 3628800",
        messages: [
          { role: "user", content: "What is 10!?" },
          { role: "assistant", content: null, toolCalls: [{ id: "c1", function: { name: "delegate_task_to_member", arguments: '{"member_id":"calc"}' } }] },
          { role: "assistant", content: "10! = 3628800" },
        ],
        tools: [{ toolName: "delegate_task_to_member", toolArgs: { member_id: "calc" }, result: "done" }],
        memberResponses: [
          {
            agentId: "calc",
            content: "3628800",
            tools: [{ toolName: "factorial", toolArgs: { n: 10 }, result: "3628800" }],
            memberResponses: [{ agentId: "checker", content: "", tools: [{ toolName: "verify", toolArgs: { value: 3628800 }, toolCallError: "verify: service down" }] }],
          },
        ],
      },
    };
    cases[7] = { ...cases[7]!, judgePassed: true, judgeReason: "states 3628800", judgeScore: null };
    file = join(mkdtempSync(join(tmpdir(), "evalfleet-html-big-")), "big.html");
    writeFileSync(file, renderHtmlReport({ run, cases, history: [run], transcriptOf: (c) => (c.index === 7 ? transcript : null) }));
    browser = await chromium.launch({ executablePath: CHROMIUM, timeout: 60_000, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  });
  after(async () => {
    await browser?.close();
  });

  test("one page of rows at a time; next page; search and filters over every case", async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href, { waitUntil: "load", timeout: 30_000 });
    await page.locator("body[data-ready]").waitFor({ timeout: 30_000 });
    const names = (): Promise<Array<string | null>> => page.locator("tbody.case").evaluateAll((els) => els.map((e) => e.getAttribute("data-name")));
    assert.equal(await page.locator("tbody.case").count(), 100);
    assert.equal(await page.locator("#shown").textContent(), "Showing 2000 of 2000 cases");
    assert.equal(await page.locator("#page-info").textContent(), "Page 1 of 20 · cases 1-100");
    await page.click("#next");
    assert.equal((await names())[0], "case-0100");
    assert.equal(await page.locator("#page-info").textContent(), "Page 2 of 20 · cases 101-200");
    await page.selectOption("#page-size", "500");
    assert.equal(await page.locator("tbody.case").count(), 500);
    // Search reaches cases on every page, by name and by reason.
    await page.fill("#filter", "case-1999");
    assert.deepEqual(await names(), ["case-1999"]);
    await page.fill("#filter", "wrong answer for 1993");
    assert.deepEqual(await names(), ["case-1993"]);
    await page.fill("#filter", "");
    await page.selectOption("#status", "fail");
    assert.equal(await page.locator("#shown").textContent(), "Showing 200 of 2000 cases");
    await page.selectOption("#tag", "odd");
    assert.equal(await page.locator("#shown").textContent(), "Showing 200 of 2000 cases", "every failure is an odd index");
    await page.selectOption("#tag", "even");
    assert.equal(await page.locator("#shown").textContent(), "Showing 0 of 2000 cases");
    await page.selectOption("#tag", "all");
    await page.selectOption("#kind", "check");
    assert.equal(await page.locator("tbody.case").count(), 200);
    // The last case's details come from the last compressed chunk.
    await page.fill("#filter", "case-1993");
    await page.click('tbody.case[data-name="case-1993"] button.toggle');
    await page.locator('tbody.case[data-name="case-1993"][data-ready]').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('tbody.case[data-name="case-1993"] pre.output').textContent(), "answer 1993");
    await page.close();
  });

  test("a case's transcript: messages in order, each tool call with its arguments and result or error, members at every depth, the judge's verdict", async () => {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(file).href, { waitUntil: "load", timeout: 30_000 });
    await page.locator("body[data-ready]").waitFor({ timeout: 30_000 });
    await page.click('tbody.case[data-name="case-0007"] button.toggle');
    await page.locator('tbody.case[data-name="case-0007"][data-ready]').waitFor({ timeout: 10_000 });
    const t = page.locator('tbody.case[data-name="case-0007"] .transcript');
    assert.deepEqual(await t.locator(".run > .msg > .role").allTextContents(), ["user", "assistant", "assistant", "tool delegate_task_to_member", "final output"]);
    assert.match((await t.locator(".run > .msg .call").textContent())!, /→ delegate_task_to_member\(\{"member_id":"calc"\}\)/);
    // The member's tool call: its arguments and its result.
    const member = t.locator(".run > .member").first();
    assert.equal(await member.locator(":scope > .role").textContent(), "member 1 (depth 1) · calc");
    assert.deepEqual(JSON.parse((await member.locator(":scope > .tool pre.tool-args").textContent())!), { n: 10 });
    assert.equal(await member.locator(":scope > .tool pre.tool-result").textContent(), "3628800");
    // The member's member, whose tool failed.
    const deeper = member.locator(":scope > .member");
    assert.equal(await deeper.locator(":scope > .role").textContent(), "member 1 (depth 2) · checker");
    assert.equal(await deeper.locator(".tool.err pre.tool-error").textContent(), "verify: service down");
    assert.equal(await t.locator(".judge").textContent(), "judgePASS · states 3628800");
    assert.equal(await t.locator(":scope > .muted").first().textContent(), "status completed · 150 tokens");
    await page.close();
  });
});
