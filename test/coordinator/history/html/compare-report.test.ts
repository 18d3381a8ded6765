// `compare --html` (coordinator/history/html/compare-report.ts): flips first, both sides, output diffs, escaped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { renderCompareHtml } from "../../../../coordinator/history/html/compare-report.ts";
import type { RunRecord } from "../../../../coordinator/history/store/run-record.ts";
import type { CaseRecord } from "../../../../coordinator/history/store/case-record.ts";

const run = (id: string): RunRecord => ({
  id, kind: "suite", suiteName: "nightly", suiteFingerprint: null, suitePath: null, selection: {}, config: {}, judgeModel: null, timeoutSeconds: 60,
  startedAt: "2026-11-30T09:00:00.000Z", finishedAt: null, status: "failed", total: 3, passed: 1, failed: 2, skipped: 0, durationSeconds: 1, summary: null, gitCommit: null, gitBranch: null, host: null,
});
const rec = (name: string, passed: boolean, output: string, extra: Partial<CaseRecord> = {}): CaseRecord => ({
  runId: "r", index: 0, name, agentId: null, teamId: null, tags: [], sessionId: "s", durationSeconds: 1, judgePassed: passed, judgeReason: passed ? "ok" : `bad <${name}>`, judgeScore: null,
  reliabilityPassed: null, reliability: null, output, toolsCalled: [], timedOut: false, skipped: false, passed, error: null, scoreValue: null, scorePassed: null, scoreReason: null,
  scoreDetail: null, attempts: 1, worker: null, inputTokens: null, outputTokens: null, totalTokens: null, costUsd: null, report: {} as CaseRecord["report"], recordedAt: "x", ...extra,
});

test("flips first (pass -> fail, then fail -> pass), each side's status and reason, the output diff; unchanged cases are counted", () => {
  const html = renderCompareHtml({
    a: run("run-a"),
    b: run("run-b"),
    casesA: [rec("steady", true, "same"), rec("fixed", false, "wrong"), rec("broke", true, "line 1\nParis\nline 3")],
    casesB: [rec("steady", true, "same"), rec("fixed", true, "right"), rec("broke", false, "line 1\n<b>Lyon</b>\nline 3")],
  });
  const order = [...html.matchAll(/<details class="case" data-name="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(order, ["broke", "fixed"]);
  assert.ok(html.indexOf('id="regressions"') < html.indexOf('id="fixes"'));
  assert.match(html, /<b id="n-regressions">1<\/b>/);
  assert.match(html, /<b id="n-unchanged">1<\/b>/);
  const broke = /<details class="case" data-name="broke">[\s\S]*?<\/details>/.exec(html)![0];
  assert.match(broke, /<span class="s-pass">PASS<\/span>[\s\S]*<span class="s-fail">FAIL<\/span> bad &lt;broke&gt;/);
  assert.match(broke, /<span class="same">  line 1<\/span><span class="del">- Paris<\/span><span class="add">\+ &lt;b&gt;Lyon&lt;\/b&gt;<\/span><span class="same">  line 3<\/span>/);
  assert.doesNotMatch(html, /<b>Lyon/);
  assert.doesNotMatch(html, /<script/i, "no script at all");
});

test("cases in one run only, and no change at all", () => {
  const html = renderCompareHtml({ a: run("a"), b: run("b"), casesA: [rec("old", true, "x")], casesB: [rec("new", true, "y")] });
  assert.match(html, /id="only-a"[\s\S]*data-name="old"[\s\S]*Not in run b/);
  assert.match(html, /id="only-b"[\s\S]*data-name="new"/);
  assert.match(renderCompareHtml({ a: run("a"), b: run("b"), casesA: [rec("s", true, "x")], casesB: [rec("s", true, "x")] }), /No case changed outcome or score/);
});
