// A recorded run written out (coordinator/history/export.ts): as Exulu's eval_runs record plus one
// result per test case, checked against a zod schema of Exulu's type written from the seed; and as
// evalfleet's own JSON report. Pure: records in, plain data out.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { runComponentId, toExuluExport, toReportExport } from "../../../coordinator/history/export.ts";
import type { RunRecord } from "../../../coordinator/history/store/run-record.ts";
import { caseRow } from "../../../coordinator/history/store/case-row.ts";
import { CaseRowSchema } from "../../../coordinator/history/store/row-schemas.ts";
import { CaseResult } from "../../../shared/result/result.ts";
import { ExuluEvalRunSchema } from "../../support/exulu-types.ts";

const RUN: RunRecord = {
  id: "run-1",
  kind: "suite",
  suiteName: "support",
  suiteFingerprint: "f".repeat(64),
  suitePath: "/suites/support.ts",
  selection: { name: null, tag: null, set: ["es-11"], cases: ["refund", "stock"] },
  config: { mode: "threads", concurrency: 4 },
  judgeModel: "gpt-5-mini",
  timeoutSeconds: 30.5,
  startedAt: "2026-02-01T10:00:00.000Z",
  finishedAt: "2026-02-01T10:00:07.250Z",
  status: "passed",
  total: 2,
  passed: 2,
  failed: 0,
  skipped: 0,
  durationSeconds: 7.25,
  summary: { total: 2, passed: 2, failed: 0, status: "PASS", skipped: 0, run_id: "run-1", duration_seconds: 7.25, pass_rate: 1, pass_threshold: 0.9, repeat: 1, pass_at_k: null },
  gitCommit: "abc",
  gitBranch: "main",
  host: "ci/1",
  runName: null,
  description: null,
  agentId: null,
  teamId: null,
  evalFunctions: ["non_empty"],
  scoringMethod: null,
  passThreshold: null,
};

/** A case record as the store reads it back (through the real row mapping). */
function record(init: ConstructorParameters<typeof CaseResult>[0], recordedAt: string) {
  const row = caseRow("run-1", new CaseResult(init), recordedAt);
  const columns = ["run_id", "case_index", "name", "agent_id", "team_id", "tags", "session_id", "duration_seconds", "judge_passed", "judge_reason", "judge_score", "reliability_passed", "reliability_passed_calls", "reliability_failed_calls", "reliability_additional_calls", "reliability_missing_calls", "output", "tools_called", "timed_out", "skipped", "passed", "error", "score_value", "score_passed", "score_reason", "score_detail", "attempts", "worker", "report", "recorded_at", "input_tokens", "output_tokens", "total_tokens", "cost_usd", "case_id", "metadata", "error_kind", "judge_input_tokens", "judge_output_tokens", "judge_total_tokens", "judge_cost_usd", "checks_fingerprint", "input"];
  return CaseRowSchema.parse(Object.fromEntries(columns.map((c, i) => [c, typeof row.values[i] === "boolean" ? (row.values[i] ? 1 : 0) : row.values[i]])));
}

const CASES = [
  record(
    {
      name: "refund",
      index: 0,
      agentId: "support-agent",
      sessionId: "eval-refund-1",
      durationSeconds: 1.5,
      output: "lookup_order: delivered",
      toolsCalled: ["lookup_order"],
      reliabilityPassed: true,
      caseId: "tc-1",
      metadata: { exulu: { createdAt: "2026-01-12T09:30:00.000Z", RBAC: { type: "public" } } },
      expectations: { expectedOutput: { method: "contains", passed: true, reason: "contains it" }, evalFunctions: [{ name: "non_empty", value: 1, passed: true, reason: "passed with 1" }] },
    },
    "2026-02-01T10:00:02.000Z",
  ),
  record(
    {
      name: "stock",
      index: 1,
      agentId: "support-agent",
      sessionId: "eval-stock-1",
      durationSeconds: 2,
      output: "in stock",
      caseId: "tc-2",
      judgePassed: true,
      judgeReason: "fine",
      expectations: { expectedOutput: { method: "contains", passed: true, reason: "contains it" }, evalFunctions: [{ name: "cites", value: 0.9, passed: true, reason: "cites" }] },
    },
    "2026-02-01T10:00:05.000Z",
  ),
];

describe("export --format exulu", () => {
  test("the eval_runs record has every field of Exulu's type, and validates against it", () => {
    const { eval_run: r, results } = toExuluExport(RUN, CASES);
    assert.deepEqual(Object.keys(r), ["id", "name", "description", "agent_id", "test_case_ids", "eval_functions", "config", "scoring_method", "pass_threshold", "timeout_in_seconds", "createdAt", "updatedAt", "RBAC"]);
    ExuluEvalRunSchema.parse(r);
    assert.equal(r.name, "support", "no --run-name: the suite's name (Exulu's name is required)");
    assert.equal(r.description, null);
    assert.equal(r.agent_id, "support-agent", "every case used it (an older record has no agent_id: read from the cases)");
    assert.deepEqual(r.test_case_ids, ["tc-1", "tc-2"]);
    assert.deepEqual(r.eval_functions, ["non_empty", "cites"], "the run's, then those the cases named");
    assert.equal(r.scoring_method, "contains", "the one method every expected-output check used");
    assert.equal(r.pass_threshold, 0.9, "from the summary when the record has none");
    assert.equal(r.timeout_in_seconds, 31, "whole seconds, rounded up");
    assert.deepEqual([r.createdAt, r.updatedAt, r.RBAC], ["2026-02-01T10:00:00.000Z", "2026-02-01T10:00:07.250Z", null]);
    assert.deepEqual((r.config as { selection: unknown }).selection, RUN.selection);
    assert.equal(results.length, 2);
    assert.deepEqual(
      results.map((x) => [x.id, x.eval_run_id, x.test_case_id, x.name, x.agent_id, x.passed, x.createdAt]),
      [
        ["run-1:0", "run-1", "tc-1", "refund", "support-agent", true, "2026-02-01T10:00:02.000Z"],
        ["run-1:1", "run-1", "tc-2", "stock", "support-agent", true, "2026-02-01T10:00:05.000Z"],
      ],
    );
    assert.deepEqual(results[0]!.metadata, { exulu: { createdAt: "2026-01-12T09:30:00.000Z", RBAC: { type: "public" } } });
    assert.deepEqual(results[0]!.eval_function_results, [{ name: "non_empty", value: 1, passed: true, reason: "passed with 1" }]);
    assert.deepEqual(results[1]!.checks.judge, { passed: true, score: null, reason: "fine" });
    assert.equal(results[1]!.checks.reliability, null);
  });

  test("the record's own fields win: name, description, agent, scoring method, threshold; a run still going is updated at its last case", () => {
    const { eval_run: r } = toExuluExport({ ...RUN, runName: "Nightly", description: "after the policy change", agentId: "bot", scoringMethod: "judge", passThreshold: 0.5, finishedAt: null, timeoutSeconds: null }, CASES);
    ExuluEvalRunSchema.parse(r);
    assert.deepEqual([r.name, r.description, r.agent_id, r.scoring_method, r.pass_threshold, r.timeout_in_seconds, r.updatedAt], ["Nightly", "after the policy change", "bot", "judge", 0.5, null, "2026-02-01T10:00:05.000Z"]);
  });

  test("cases of several agents: agent_id is null (Exulu's type refuses it, so the command warns)", () => {
    const mixed = [CASES[0]!, { ...CASES[1]!, agentId: "other-agent" }];
    assert.equal(runComponentId(RUN, mixed), null);
    const { eval_run: r } = toExuluExport(RUN, mixed);
    assert.equal(r.agent_id, null);
    assert.equal(ExuluEvalRunSchema.safeParse(r).success, false);
    assert.equal(runComponentId({ agentId: null, teamId: "crew" }, mixed), "crew");
  });
});

describe("export --format json", () => {
  test("the summary and the cases' report entries, as recorded", () => {
    const out = toReportExport(RUN, CASES);
    assert.deepEqual(out.summary, RUN.summary);
    assert.deepEqual(
      out.cases.map((c) => c.name),
      ["refund", "stock"],
    );
    assert.deepEqual(out.cases[0], CASES[0]!.report);
  });
});
