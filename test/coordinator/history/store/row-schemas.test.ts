// Rows read back from the results store (coordinator/history/store/row-schemas.ts): validated,
// whichever database answered (SQLite's 0/1 booleans, PostgreSQL's numerics as strings), turned
// into records, and a row that does not fit names its table, its row and its field.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CASE_COLUMNS, caseRow } from "../../../../coordinator/history/store/case-row.ts";
import { CaseRowSchema, JudgeEvaluationRowSchema, RunRowSchema, parseRows } from "../../../../coordinator/history/store/row-schemas.ts";
import { CaseResult } from "../../../../shared/result/result.ts";

/** A written row as a database hands it back: booleans as SQLite's 0/1. */
function readBack(result: CaseResult): Record<string, unknown> {
  const { values } = caseRow("run-1", result, "2026-02-01T10:00:00.000Z");
  return Object.fromEntries(CASE_COLUMNS.map((c, i) => [c, typeof values[i] === "boolean" ? (values[i] ? 1 : 0) : values[i]]));
}

test("a case row round-trips to its record: booleans from 0/1, lists from JSON, the report verbatim", () => {
  const result = new CaseResult({ name: "a", index: 2, tags: ["x"], sessionId: "s", output: "o", judgePassed: true, caseId: "tc-1" });
  const [record] = parseRows(CaseRowSchema, [readBack(result)], "case_results");
  assert.equal(record!.runId, "run-1");
  assert.equal(record!.index, 2);
  assert.deepEqual(record!.tags, ["x"]);
  assert.equal(record!.judgePassed, true);
  assert.equal(record!.passed, result.passed);
  assert.equal(record!.reliability, null, "no reliability columns: the check did not run");
  assert.equal(record!.caseId, "tc-1");
  assert.equal(record!.judgeUsage, null);
  assert.deepEqual(record!.report, result.toJSON());
});

test("PostgreSQL's numerics as strings are numbers; a number that is not one is refused", () => {
  const row = { position: "3", input: "q", output: "a", criteria: "c", score: "7.5", reason: null, passed: true, failure: null };
  assert.deepEqual(parseRows(JudgeEvaluationRowSchema, [row], "judge_evaluations"), [{ ...row, position: 3, score: 7.5 }]);
  assert.throws(() => parseRows(JudgeEvaluationRowSchema, [row, { ...row, score: "seven" }], "judge_evaluations"), /^Error: judge_evaluations: row 2 is malformed: score: /);
});

test("a run row: an unknown status and a JSON column that is not JSON are named", () => {
  const run = {
    id: "r", kind: "suite", suite_name: "s", suite_fingerprint: null, suite_path: null, selection: "{}", config: '{"mode":"threads"}', judge_model: null,
    timeout_seconds: 30, started_at: "t0", finished_at: null, status: "running", total: null, passed: null, failed: null, skipped: null,
    duration_seconds: null, summary: null, git_commit: null, git_branch: null, host: null,
  };
  const [record] = parseRows(RunRowSchema, [run], "eval_runs");
  assert.deepEqual(record!.config, { mode: "threads" });
  assert.equal(record!.runName, null, "a column of a later schema version, absent from the SELECT: null");
  assert.throws(() => parseRows(RunRowSchema, [{ ...run, status: "exploded" }], "eval_runs"), /eval_runs: row 1 is malformed: status: /);
  assert.throws(() => parseRows(RunRowSchema, [{ ...run, config: "{not json" }], "eval_runs"), /eval_runs: row 1 is malformed: config: not the JSON expected/);
});
