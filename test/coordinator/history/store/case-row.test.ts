// A case result as a `case_results` row (coordinator/history/store/case-row.ts): one value per
// column of CASE_COLUMNS, in that order, taken from the JSON report and the details it leaves out;
// the transcript goes to a row of its own. Pure: results in, values out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CASE_COLUMNS, caseRow, transcriptRow } from "../../../../coordinator/history/store/case-row.ts";
import { CaseResult } from "../../../../shared/result/result.ts";

const result = () =>
  new CaseResult({
    name: "refund",
    index: 3,
    tags: ["smoke"],
    agentId: "bot",
    sessionId: "s-1",
    durationSeconds: 1.5,
    output: "done",
    toolsCalled: ["lookup"],
    caseId: "tc-9",
    metadata: { exulu: { RBAC: null } },
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.001, judge: { inputTokens: 2, outputTokens: 1, totalTokens: 3, costUsd: null } },
  });

test("one value per column, in CASE_COLUMNS order, the report's values and what it leaves out", () => {
  const r = result();
  const row = caseRow("run-1", r, "2026-02-01T10:00:00.000Z");
  assert.equal(row.index, 3);
  assert.equal(row.values.length, CASE_COLUMNS.length);
  const byColumn = Object.fromEntries(CASE_COLUMNS.map((c, i) => [c, row.values[i]]));
  assert.equal(byColumn.run_id, "run-1");
  assert.equal(byColumn.case_index, 3);
  assert.equal(byColumn.name, "refund");
  assert.equal(byColumn.tags, '["smoke"]', "lists are JSON columns");
  assert.equal(byColumn.tools_called, '["lookup"]');
  assert.equal(byColumn.case_id, "tc-9");
  assert.equal(byColumn.metadata, '{"exulu":{"RBAC":null}}');
  assert.deepEqual([byColumn.input_tokens, byColumn.total_tokens, byColumn.cost_usd], [10, 15, 0.001]);
  assert.deepEqual([byColumn.judge_input_tokens, byColumn.judge_cost_usd], [2, null]);
  assert.equal(byColumn.recorded_at, "2026-02-01T10:00:00.000Z");
  assert.deepEqual(JSON.parse(byColumn.report as string), r.toJSON(), "the report entry verbatim");
  assert.equal(row.transcript, null, "no transcript on the result: none to write (a stored one is kept)");
});

test("a transcript becomes its own row: its JSON, its size in bytes, whether it was cut", () => {
  const r = result();
  assert.equal(transcriptRow(r), null);
  r.transcript = { v: 1, run: { content: "café" }, status: "completed", error: null, usage: null, cut: null };
  const t = transcriptRow(r)!;
  assert.equal(t.json, JSON.stringify(r.transcript));
  assert.equal(t.bytes, Buffer.byteLength(t.json, "utf8"), "bytes, not characters");
  assert.equal(t.cut, false);
});
