// The HTML history report (coordinator/history/html/report.ts): escaping, no fetches, the charts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import { renderHtmlReport } from "../../../../coordinator/history/html/report.ts";
import type { RunRecord } from "../../../../coordinator/history/store/run-record.ts";
import type { CaseRecord } from "../../../../coordinator/history/store/case-record.ts";

/** The page's data and every details chunk, decoded as the page script decodes them: what the file holds. */
function decoded(html: string): { data: { rows: unknown[][]; groups: Array<{ label: string; count: number }> }; details: Array<Record<string, any>>; text: string } {
  const data = JSON.parse(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!);
  const details: Array<Record<string, any>> = [];
  let text = html;
  for (const m of html.matchAll(/<script type="application\/octet-stream" id="chunk-\d+">([^<]*)<\/script>/g)) {
    const json = gunzipSync(Buffer.from(m[1]!, "base64")).toString("utf8");
    text += json;
    details.push(...JSON.parse(json));
  }
  return { data, details, text };
}

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

  test("no secret reaches the file: a store written before redaction, or by a process that knew other secrets, is redacted when rendered", async () => {
    const { registerSecret } = await import("../../../../shared/redaction/secrets.ts");
    const key = "html-key-Q7f2LmX9vT4wZ1bN8c";
    registerSecret(key);
    // The output is longer than the page shows (20,000 characters): the cut falls inside the key.
    const leaky = { ...record, name: `leaky ${key}`, output: `${"o".repeat(19_990)}${key}`, error: `agent: Error: ${key}`, judgeReason: `saw ${key}`, scoreReason: `scorer ${key}`, report: { output: key } as unknown as CaseRecord["report"] };
    const html = renderHtmlReport({ run: { ...run, suiteName: `suite ${key}` }, cases: [leaky], history: [run] });
    // The compressed details are read too: a secret there is in the file as much as in the text.
    const { text, details } = decoded(html);
    assert.equal(details.length, 1);
    for (let i = 0; i + 8 <= key.length; i++) assert.ok(!text.includes(key.slice(i, i + 8)), `a piece of the key: ${key.slice(i, i + 8)}`);
    assert.match(html, /\[REDACTED\]/);
    assert.match(details[0]!.record.error, /\[REDACTED\]/);
  });

  test("the table holds every failed case's reason whatever the check; failures grouped by cause, largest first; the re-run command", () => {
    const base = { ...record, judgePassed: null, judgeReason: null, judgeScore: null, error: null };
    const cases: CaseRecord[] = [
      { ...base, index: 0, name: "scored", scorePassed: false, scoreValue: 0.2, scoreReason: "too short: 3 words" },
      { ...base, index: 1, name: "scored2", scorePassed: false, scoreValue: 0.1, scoreReason: "too short: 5 words" },
      { ...base, index: 2, name: "tools", reliabilityPassed: false, reliability: { passedToolCalls: [], failedToolCalls: [], additionalToolCalls: ["add"], missingToolCalls: ["multiply"] } },
      { ...base, index: 3, name: "expected", report: { expectations: { expected_output: { method: "contains", passed: false, reason: "output does not contain 42" } } } as unknown as CaseRecord["report"] },
      { ...base, index: 4, name: "crashed", error: "agent: Error: boom", report: { error_kind: "infra" } as unknown as CaseRecord["report"] },
      { ...base, index: 5, name: "slowpoke", timedOut: true, error: "timeout: case exceeded 60s" },
      { ...base, index: 6, name: "fine", passed: true },
    ];
    const html = renderHtmlReport({ run: { ...run, suitePath: "/evals/my suite.ts" }, cases, history: [run] });
    const { data } = decoded(html);
    const reason = (name: string): unknown[] => data.rows.find((r) => r[2] === name)!;
    assert.deepEqual(reason("scored").slice(3, 6), ["fail", "scorer: too short: 3 words", "check"]);
    assert.deepEqual(reason("tools").slice(3, 6), ["fail", "reliability: missing tools: multiply; additional tools: add", "check"]);
    assert.deepEqual(reason("expected").slice(3, 6), ["fail", "expected_output: contains: output does not contain 42", "check"]);
    assert.deepEqual(reason("crashed").slice(3, 6), ["fail", "agent: Error: boom", "infra"]);
    assert.deepEqual(reason("slowpoke").slice(3, 6), ["fail", "timeout: case exceeded 60s", "timeout"]);
    assert.deepEqual(reason("fine").slice(3, 6), ["pass", "", ""]);
    // The two scorer failures differ only in a number: one cause, counted twice, first.
    assert.deepEqual(data.groups.map((g) => [g.count, g.label]), [
      [2, "check \u00b7 scorer \u00b7 too short: # words"],
      [1, "check \u00b7 reliability \u00b7 missing tools: multiply; additional tools: add"],
      [1, "check \u00b7 expected_output \u00b7 contains: output does not contain #"],
      [1, "infra \u00b7 agent \u00b7 agent: Error: boom"],
      [1, "timeout \u00b7 timeout \u00b7 timeout: case exceeded #s"],
    ]);
    assert.equal(reason("scored")[10], 0);
    assert.equal(reason("fine")[10], -1);
    assert.match(html, /<code id="rerun-command">evalfleet run &#39;\/evals\/my suite.ts&#39; --rerun-failed run-1<\/code>/);
    // A run with no failure has no failures section and no command.
    assert.doesNotMatch(renderHtmlReport({ run, cases: [cases[6]!], history: [run] }), /<code id="rerun-command"/);
  });

  test("trends: runs of another selection are marked and left off the line", () => {
    const same: RunRecord = { ...run, id: "run-0", startedAt: "2026-11-29T09:00:00.000Z", selection: { cases: ["x"] } };
    const tagged: RunRecord = { ...run, id: "run-t", startedAt: "2026-11-29T10:00:00.000Z", selection: { tag: ["smoke"], cases: ["y", "z"] } };
    const html = renderHtmlReport({ run, cases: [record], history: [same, tagged, run] });
    const rate = /id="chart-pass-rate"[\s\S]*?<\/svg>/.exec(html)![0];
    assert.match(rate, /last 3 runs \(1 of another selection, hollow, off the line\)/);
    assert.equal(rate.match(/<circle class="pt other"/g)?.length, 1);
    assert.match(rate, /run-t · [^<]* · different selection \(2 cases\)/);
    // The line joins the two runs of the same selection only: two points.
    assert.equal(/<path class="line" d="([^"]*)"/.exec(rate)![1]!.split(" ").length, 2);
  });

  test("the details: the case's JSON, phases, the transcript (redacted), all inside the compressed chunks", async () => {
    const { registerSecret } = await import("../../../../shared/redaction/secrets.ts");
    registerSecret("tr-key-Zq81nB6xV3mW0pLk");
    const cases = Array.from({ length: 150 }, (_, i) => ({ ...record, index: i, name: `case-${i}`, report: { name: `case-${i}`, phase_seconds: { setup: 0.1, run: 1, checks: 0.3, teardown: 0 } } as unknown as CaseRecord["report"] }));
    const html = renderHtmlReport({ run, cases, history: [run], transcriptOf: (c) => ({ messages: [{ role: "user", content: `hi ${c.name} tr-key-Zq81nB6xV3mW0pLk` }] }) });
    const { details, data } = decoded(html);
    assert.equal(data.rows.length, 150);
    assert.equal(details.length, 150, "every case's details, in row order, over several chunks");
    assert.equal(html.match(/id="chunk-/g)?.length, 3);
    assert.equal(details[149]!.json.name, "case-149");
    assert.deepEqual(details[7]!.json.phase_seconds, { setup: 0.1, run: 1, checks: 0.3, teardown: 0 });
    assert.equal(details[7]!.transcript.messages[0].content, "hi case-7 [REDACTED]");
    assert.match(html, /id="chart-phases"[\s\S]*run: 150s over 150 cases/);
  });
});
