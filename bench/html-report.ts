/**
 * The HTML report of a 50,000-case run (coordinator/history/html/report.ts): how long rendering
 * takes, how large the file is, and how long until the page is interactive in headless Chromium
 * (from navigation to the first page of the table rendered and every control wired, the page's
 * `body[data-ready]`). Each case has an output of a few hundred characters and a transcript of a
 * few messages and a tool call (about 1.5 KB of JSON), one case in ten fails with a reason.
 * Prints one JSON line. Run: `node --import tsx bench/html-report.ts [--cases N]`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { renderHtmlReport } from "../coordinator/history/html/report.ts";
import type { RunRecord } from "../coordinator/history/store/run-record.ts";
import type { CaseRecord } from "../coordinator/history/store/case-record.ts";

const arg = process.argv.indexOf("--cases");
const N = arg > 0 ? Number(process.argv[arg + 1]) : 50_000;
const CHROMIUM = process.env.EVALFLEET_CHROMIUM ?? "/usr/bin/chromium";

const run: RunRecord = {
  id: "bench-run", kind: "suite", suiteName: "bench", suiteFingerprint: null, suitePath: "/evals/bench.ts", selection: { cases: [] }, config: {}, judgeModel: "judge",
  timeoutSeconds: 60, startedAt: "2026-12-01T00:00:00.000Z", finishedAt: "2026-12-01T01:00:00.000Z", status: "failed", total: N, passed: N - N / 10, failed: N / 10,
  skipped: 0, durationSeconds: 3600, summary: null, gitCommit: null, gitBranch: null, host: null,
};
const words = "the quick brown fox jumps over the lazy dog while the agent looks up the answer and explains it".split(" ");
const text = (i: number, n: number): string => Array.from({ length: n }, (_, k) => words[(i * 7 + k) % words.length]).join(" ");
const cases: CaseRecord[] = Array.from({ length: N }, (_, i) => {
  const failed = i % 10 === 3;
  return {
    runId: run.id, index: i, name: `case-${i}`, agentId: "agent", teamId: null, tags: [i % 3 ? "core" : "smoke"], sessionId: `eval-case-${i}`, durationSeconds: 1.234,
    judgePassed: !failed, judgeReason: failed ? `the answer misses step ${i % 17}` : "correct", judgeScore: null, reliabilityPassed: null, reliability: null,
    output: text(i, 60), toolsCalled: ["lookup"], timedOut: false, skipped: false, passed: !failed, error: null, scoreValue: null, scorePassed: null, scoreReason: null,
    scoreDetail: null, attempts: 1, worker: "w-1", inputTokens: 320, outputTokens: 80, totalTokens: 400, costUsd: 0.0004,
    report: { name: `case-${i}`, phase_seconds: { setup: 0.01, run: 1.1, checks: 0.12, teardown: 0.004 } } as unknown as CaseRecord["report"], recordedAt: run.finishedAt!,
  };
});
const transcript = (c: CaseRecord): unknown => ({
  messages: [
    { role: "system", content: text(c.index, 25) },
    { role: "user", content: text(c.index + 1, 20) },
    { role: "assistant", content: null, tool_calls: [{ id: `call_${c.index}`, name: "lookup", arguments: { q: text(c.index, 4) } }] },
    { role: "tool", tool_call_id: `call_${c.index}`, content: text(c.index + 2, 30) },
    { role: "assistant", content: c.output },
  ],
});

const t0 = performance.now();
const html = renderHtmlReport({ run, cases, history: [run], transcriptOf: transcript });
const renderSeconds = (performance.now() - t0) / 1000;
const dir = mkdtempSync(join(tmpdir(), "evalfleet-bench-html-"));
const file = join(dir, "report.html");
writeFileSync(file, html);
const out: Record<string, number | null> = { cases: N, html_bytes: Buffer.byteLength(html), html_render_s: renderSeconds, html_interactive_s: null, html_open_case_s: null };
if (existsSync(CHROMIUM)) {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
  try {
    const page = await browser.newPage();
    const start = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: "commit", timeout: 120_000 });
    await page.locator("body[data-ready]").waitFor({ timeout: 120_000 });
    out.html_interactive_s = (performance.now() - start) / 1000;
    // Opening the last case inflates its chunk.
    await page.fill("#filter", `case-${N - 1}`);
    const open = performance.now();
    await page.click(`tbody.case[data-name="case-${N - 1}"] button.toggle`);
    await page.locator(`tbody.case[data-name="case-${N - 1}"][data-ready]`).waitFor({ timeout: 60_000 });
    out.html_open_case_s = (performance.now() - open) / 1000;
  } finally {
    await browser.close();
  }
}
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(out));
