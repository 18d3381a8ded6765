// The console summary says why each case failed, one line each, without -v (coordinator/report/console.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import { printSummary } from "../../../coordinator/report/console.ts";

function summaryOf(results: CaseResult[]): string {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d) => (text += d));
  printSummary(out, new SuiteResult(results, { durationSeconds: 1 }));
  return text;
}

test("each failed case's first reason is printed in one line: its error, else the failed check's reason", () => {
  const text = summaryOf([
    new CaseResult({ name: "fine", score: { value: 1, passed: true, reason: "ok" } }),
    new CaseResult({ name: "graded_low", score: { value: 0.2, passed: false, reason: "answered 5, expected 4" } }),
    new CaseResult({ name: "judged", judgePassed: false, judgeReason: "does not name the capital" }),
    new CaseResult({ name: "tools", reliabilityPassed: false, reliability: { passed: false, passedToolCalls: [], failedToolCalls: ["delete"], additionalToolCalls: [], missingToolCalls: ["search"] } }),
    new CaseResult({ name: "broke", error: "agent: Error: first line\n  second line" }),
    new CaseResult({ name: "expected", expectations: { expectedOutput: { method: "exact", passed: false, reason: "got 'Lyon'" } } }),
  ]);
  const lines = text.split("\n");
  assert.ok(lines.includes("  graded_low: scorer: answered 5, expected 4"), text);
  assert.ok(lines.includes("  judged: judge: does not name the capital"), text);
  assert.ok(lines.includes("  tools: reliability: missing search; unexpected delete"), text);
  assert.ok(lines.includes("  broke: agent: Error: first line second line"), text);
  assert.ok(lines.includes("  expected: expected_output (exact): got 'Lyon'"), text);
  assert.ok(!lines.some((l) => l.startsWith("  fine:")), "a passing case has no reason line");
});

test("a failed trajectory check's reason is the case's line: which expectation failed and at which step", () => {
  const reason = 'expected get_weather(city="London"), got get_weather(city="Paris") at step 2';
  const text = summaryOf([
    new CaseResult({ name: "weather", reliabilityPassed: false, reliability: { passed: false, passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: ['get_weather(city="London")'], reason } }),
  ]);
  assert.ok(text.split("\n").includes(`  weather: reliability: ${reason}`), text);
});
