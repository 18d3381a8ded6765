// CaseResult and SuiteResult (shared/result/result.ts): construction and defaults, when a case passes,
// the JSON report's keys and order (spec J, K), the pass threshold and pass@k.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult, SuiteResult, passAtK, type ScoreData } from "../../../index.ts";
import { CaseResultDataSchema } from "../../../shared/wire/result-data.ts";
import { expectationResult as result, thresholdSuite as suite } from "../../support/results.ts";

/** The statistics keys of a summary with no repeats, no judge score and no scorer (shared/result/run-statistics.ts). */
const NO_STATS = { pass_hat_k: null, case_pass_rate: null, judge_score_mean: null, judge_score_ci: null, score_value_mean: null, score_value_ci: null, adaptive_repeats: null };

describe("CaseResult construction and passed (87, J)", () => {
  test("a result has every field of the schema, in the schema's order, and no other", () => {
    // The constructor assigns each field by name (one hidden class, fields in the object): a field
    // added to the schema and not to the constructor would be missing from every result.
    const keys = Object.keys(CaseResultDataSchema.shape);
    assert.deepEqual(Object.keys(new CaseResult({ name: "r" })), keys);
    const data = new CaseResult({ name: "r", index: 3, worker: "w", attempts: 2 }).toData();
    assert.deepEqual(Object.keys(CaseResult.fromData(data)), keys);
    assert.deepEqual(CaseResult.fromData(data).toData(), data);
  });

  test("a result built from a name has Agno's defaults and no score (87, adapted)", () => {
    const r = new CaseResult({ name: "r", tags: ["smoke"] });
    assert.equal(r.name, "r");
    assert.deepEqual(r.tags, ["smoke"]);
    assert.equal(r.agentId, null);
    assert.equal(r.teamId, null);
    assert.equal(r.sessionId, "");
    assert.equal(r.durationSeconds, 0);
    assert.equal(r.judgePassed, null);
    assert.equal(r.judgeReason, null);
    assert.equal(r.judgeScore, null);
    assert.equal(r.reliabilityPassed, null);
    assert.equal(r.output, null);
    assert.deepEqual(r.toolsCalled, []);
    assert.equal(r.timedOut, false);
    assert.equal(r.skipped, false);
    assert.equal(r.error, null);
    assert.equal(r.response, null);
    assert.equal(r.score, null);
  });

  test("every given field binds to its own property (87)", () => {
    const response = { content: "Paris", status: "completed" };
    const r = new CaseResult({
      name: "n",
      tags: ["t"],
      agentId: "a",
      teamId: null,
      sessionId: "eval-n-0123abcd",
      durationSeconds: 1.5,
      judgePassed: true,
      judgeReason: "ok",
      judgeScore: 9,
      reliabilityPassed: true,
      output: "Paris",
      toolsCalled: ["search_web"],
      timedOut: false,
      skipped: false,
      error: null,
      response,
    });
    assert.equal(r.agentId, "a");
    assert.equal(r.sessionId, "eval-n-0123abcd");
    assert.equal(r.durationSeconds, 1.5);
    assert.equal(r.judgeReason, "ok");
    assert.equal(r.judgeScore, 9);
    assert.equal(r.output, "Paris");
    assert.deepEqual(r.toolsCalled, ["search_web"]);
    assert.equal(r.response, response);
    assert.equal(r.score, null);
    assert.equal(r.passed, true);
  });

  test("passed: an error fails; no verdict fails; every verdict must pass (J1-J2)", () => {
    assert.equal(new CaseResult({ name: "none" }).passed, false);
    assert.equal(new CaseResult({ name: "e", judgePassed: true, error: "agent: boom" }).passed, false);
    assert.equal(new CaseResult({ name: "j", judgePassed: true }).passed, true);
    assert.equal(new CaseResult({ name: "jr", judgePassed: true, reliabilityPassed: false }).passed, false);
    assert.equal(new CaseResult({ name: "s", score: { value: 0.2, passed: false } }).passed, false);
    assert.equal(new CaseResult({ name: "js", judgePassed: true, score: { value: 1, passed: true } }).passed, true);
    assert.equal(new CaseResult({ name: "skip", skipped: true, error: "skipped: suite aborted after cancelled run" }).passed, false);
  });

  test("addError joins parts with '; ' and ignores empty parts (L4)", () => {
    const r = new CaseResult({ name: "x" });
    r.addError("");
    assert.equal(r.error, null);
    r.addError("agent: boom mid-stream");
    r.addError("timeout: exceeded 1s");
    assert.equal(r.error, "agent: boom mid-stream; timeout: exceeded 1s");
  });
});

describe("CaseResult.passed (spec J)", () => {
  const score = (passed: boolean, value = passed ? 1 : 0): ScoreData => ({ value, passed, reason: null });

  test("an error fails the case whatever the verdicts", () => {
    const r = new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: true, score: score(true), error: "cleanup: OSError: could not delete" });
    assert.equal(r.passed, false);
  });

  test("no verdicts means not passed (skipped, timed out, never checked)", () => {
    assert.equal(new CaseResult({ name: "x" }).passed, false);
    assert.equal(new CaseResult({ name: "x", skipped: true, error: "skipped: suite aborted after cancelled run" }).passed, false);
    assert.equal(new CaseResult({ name: "x", timedOut: true, error: "timeout: exceeded 1s" }).passed, false);
  });

  test("every verdict true passes", () => {
    assert.equal(new CaseResult({ name: "x", judgePassed: true }).passed, true);
    assert.equal(new CaseResult({ name: "x", reliabilityPassed: true }).passed, true);
    assert.equal(new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: true, score: score(true) }).passed, true);
  });

  test("any verdict false fails", () => {
    assert.equal(new CaseResult({ name: "x", judgePassed: true, reliabilityPassed: false }).passed, false);
    assert.equal(new CaseResult({ name: "x", judgePassed: false, reliabilityPassed: true }).passed, false);
  });

  test("score.passed counts as a verdict", () => {
    assert.equal(new CaseResult({ name: "x", score: score(true) }).passed, true);
    assert.equal(new CaseResult({ name: "x", score: score(false, 0.2) }).passed, false);
    assert.equal(new CaseResult({ name: "x", judgePassed: true, score: score(false) }).passed, false);
  });

  test("addError joins parts with '; '", () => {
    const r = new CaseResult({ name: "x" });
    r.addError("agent: boom mid-stream");
    r.addError("");
    r.addError("timeout: exceeded 1s");
    assert.equal(r.error, "agent: boom mid-stream; timeout: exceeded 1s");
  });
});

describe("SuiteResult (spec K)", () => {
  const pass = (name: string) => new CaseResult({ name, judgePassed: true });
  const fail = (name: string) => new CaseResult({ name, judgePassed: false });
  const skip = (name: string) => new CaseResult({ name, skipped: true, error: "skipped: suite aborted after cancelled run" });

  test("an empty suite is FAIL with zero totals", () => {
    const s = new SuiteResult([]);
    assert.equal(s.total, 0);
    assert.equal(s.passed, 0);
    assert.equal(s.failed, 0);
    assert.equal(s.status, "FAIL");
    assert.deepEqual(s.toJSON(), {
      // evalfleet's additive keys (issue 8) follow Agno's.
      summary: { total: 0, passed: 0, failed: 0, status: "FAIL", skipped: 0, run_id: null, duration_seconds: 0, pass_rate: 0, pass_threshold: null, repeat: 1, pass_at_k: null, infra_errors: 0, tokens: { agent: 0, judge: 0, total: 0 }, cost_usd: 0, cost_unknown_cases: 0, budget: null, ...NO_STATS, confidence: 0.95, pass_rate_ci: [0, 1], pass_rate_method: "wilson", trial_pass_rate: 0 },
      cases: [],
    });
    assert.equal(new SuiteResult().status, "FAIL");
  });

  test("PASS only when every case passed", () => {
    assert.equal(new SuiteResult([pass("a"), pass("b")]).status, "PASS");
    const mixed = new SuiteResult([pass("a"), fail("b"), skip("c")]);
    assert.equal(mixed.status, "FAIL");
    assert.equal(mixed.total, 3);
    assert.equal(mixed.passed, 1);
    assert.equal(mixed.failed, 2, "skipped cases count as failed");
    assert.equal(mixed.skipped, 1);
  });

  test("toJSON keys are in the exact contract order", () => {
    const r = new CaseResult({
      name: "capital",
      tags: ["smoke"],
      agentId: "geo-agent",
      sessionId: "eval-capital-0a1b2c3d",
      durationSeconds: 1.234,
      judgePassed: true,
      judgeReason: "mentions Paris",
      reliabilityPassed: true,
      output: "Paris",
      toolsCalled: ["search"],
      score: { value: 1, passed: true, reason: "stub ok", detail: { raw: 1 } },
      index: 4,
      attempts: 2,
      worker: "thread-1",
    });
    const json = new SuiteResult([r], { runId: "run-1", durationSeconds: 2.5 }).toJSON();
    assert.deepEqual(Object.keys(json), ["summary", "cases"]);
    assert.deepEqual(Object.keys(json.summary), ["total", "passed", "failed", "status", "skipped", "run_id", "duration_seconds", "pass_rate", "pass_threshold", "repeat", "pass_at_k", "infra_errors", "tokens", "cost_usd", "cost_unknown_cases", "budget", "confidence", "pass_rate_ci", "pass_rate_method", "trial_pass_rate", "pass_hat_k", "case_pass_rate", "judge_score_mean", "judge_score_ci", "score_value_mean", "score_value_ci", "adaptive_repeats"]);
    assert.deepEqual(json.summary, { total: 1, passed: 1, failed: 0, status: "PASS", skipped: 0, run_id: "run-1", duration_seconds: 2.5, pass_rate: 1, pass_threshold: null, repeat: 1, pass_at_k: null, infra_errors: 0, tokens: { agent: 0, judge: 0, total: 0 }, cost_usd: 0, cost_unknown_cases: 0, budget: null, ...NO_STATS, confidence: 0.95, pass_rate_ci: json.summary.pass_rate_ci, pass_rate_method: "wilson", trial_pass_rate: 1, score_value_mean: 1, score_value_ci: [0, 1] });
    // Wilson 1 of 1 at 95%: [0.2065, 1] (Newcombe 1998, method 3); one scorer value: its interval is the whole scale.
    assert.deepEqual(json.summary.pass_rate_ci.map((x) => Number(x.toFixed(4))), [0.2065, 1]);
    const agnoKeys = [
      "name", "agent_id", "team_id", "tags", "session_id", "duration_seconds",
      "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output",
      "tools_called", "timed_out", "skipped", "passed", "error",
      "score_value", "score_passed", "score_reason",
    ];
    assert.equal(agnoKeys.length, 19);
    assert.deepEqual(Object.keys(json.cases[0]!), [...agnoKeys, "index", "attempts", "worker", "expectations", "repeats", "pass_rate", "pass_at_k", "phase_seconds", "error_kind", "tokens", "cost_usd", "reliability_reason", "trajectory", "pass_rate_ci", "case_pass_rate", "decided", "adaptive_stop"]);
    assert.deepEqual(json.cases[0], {
      name: "capital",
      agent_id: "geo-agent",
      team_id: null,
      tags: ["smoke"],
      session_id: "eval-capital-0a1b2c3d",
      duration_seconds: 1.234,
      judge_passed: true,
      judge_reason: "mentions Paris",
      judge_score: null,
      reliability_passed: true,
      output: "Paris",
      tools_called: ["search"],
      timed_out: false,
      skipped: false,
      passed: true,
      error: null,
      score_value: 1,
      score_passed: true,
      score_reason: "stub ok",
      index: 4,
      attempts: 2,
      worker: "thread-1",
      expectations: null,
      repeats: null,
      pass_rate: null,
      pass_at_k: null,
      phase_seconds: null,
      error_kind: null,
      tokens: { agent: 0, judge: 0, total: 0 },
      cost_usd: 0,
      reliability_reason: null,
      trajectory: null,
      pass_rate_ci: null,
      case_pass_rate: null,
      decided: null,
      adaptive_stop: null,
    });
  });

  test("phase_seconds comes before error_kind, tokens and cost_usd, with the four phases in order; the reliability reason and trajectory follow", () => {
    const json = new CaseResult({ name: "x", phaseSeconds: { setup: 0.1, run: 1.5, checks: 0.2, teardown: 0.05 } }).toJSON();
    assert.deepEqual(Object.keys(json).slice(-10), ["phase_seconds", "error_kind", "tokens", "cost_usd", "reliability_reason", "trajectory", "pass_rate_ci", "case_pass_rate", "decided", "adaptive_stop"]);
    assert.deepEqual(json.phase_seconds, { setup: 0.1, run: 1.5, checks: 0.2, teardown: 0.05 });
    assert.deepEqual(Object.keys(json.phase_seconds!), ["setup", "run", "checks", "teardown"]);
  });

  test("score_* are null without a score; no response, detail or reliability keys", () => {
    const r = new CaseResult({
      name: "x",
      judgePassed: false,
      response: { content: "raw" },
      reliability: { passed: true, passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: [] },
    });
    const c = r.toJSON();
    assert.equal(c.score_value, null);
    assert.equal(c.score_passed, null);
    assert.equal(c.score_reason, null);
    for (const key of ["response", "detail", "reliability", "score"]) assert.ok(!(key in c), `no ${key} key`);
  });

  test("the report is JSON-serialisable even when the raw response is not", () => {
    const response: Record<string, unknown> = { content: "x", usage: 10n };
    response.self = response;
    const r = new CaseResult({ name: "x", judgePassed: true, response, tags: ["a"], toolsCalled: ["t"] });
    const suite = new SuiteResult([r]);
    const text = JSON.stringify(suite);
    assert.deepEqual(JSON.parse(text), suite.toJSON());
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r.toJSON());
  });

  test("tags and tools_called are emitted as fresh arrays", () => {
    const tags = Object.freeze(["a"]);
    const r = new CaseResult({ name: "x", tags, toolsCalled: tags });
    const c = r.toJSON();
    assert.ok(Array.isArray(c.tags) && c.tags !== tags);
    assert.ok(Array.isArray(c.tools_called) && c.tools_called !== tags);
  });
});

describe("the pass threshold and repeats in the JSON report", () => {
  test("the summary keeps Agno's keys first and adds pass_rate, pass_threshold, repeat and pass_at_k", () => {
    const s = suite(3, 1, { passThreshold: 0.7, runId: "r", durationSeconds: 1.5 });
    const json = s.toJSON();
    assert.deepEqual(Object.keys(json.summary), ["total", "passed", "failed", "status", "skipped", "run_id", "duration_seconds", "pass_rate", "pass_threshold", "repeat", "pass_at_k", "infra_errors", "tokens", "cost_usd", "cost_unknown_cases", "budget", "confidence", "pass_rate_ci", "pass_rate_method", "trial_pass_rate", "pass_hat_k", "case_pass_rate", "judge_score_mean", "judge_score_ci", "score_value_mean", "score_value_ci", "adaptive_repeats"]);
    assert.deepEqual(json.summary, { total: 4, passed: 3, failed: 1, status: "FAIL", skipped: 0, run_id: "r", duration_seconds: 1.5, pass_rate: 0.75, pass_threshold: 0.7, repeat: 1, pass_at_k: null, infra_errors: 0, tokens: { agent: 0, judge: 0, total: 0 }, cost_usd: 0, cost_unknown_cases: 0, budget: null, ...NO_STATS, confidence: 0.95, pass_rate_ci: json.summary.pass_rate_ci, pass_rate_method: "wilson", trial_pass_rate: 0.75 });
    // Wilson 3 of 4 at 95%: [0.3006, 0.9544].
    assert.deepEqual(json.summary.pass_rate_ci.map((x) => Number(x.toFixed(4))), [0.3006, 0.9544]);
    assert.equal(s.thresholdMet, true);
    assert.equal(new SuiteResult([]).toJSON().summary.pass_rate, 0);
    assert.equal(new SuiteResult([result("a", true)]).toJSON().summary.pass_threshold, null);
  });

  test("a case's JSON keeps its keys and order, then expectations, repeats, pass_rate, pass_at_k (null without repeats) and phase_seconds", () => {
    const json = result("a", true).toJSON();
    const keys = Object.keys(json);
    assert.deepEqual(keys.slice(0, 19), ["name", "agent_id", "team_id", "tags", "session_id", "duration_seconds", "judge_passed", "judge_reason", "judge_score", "reliability_passed", "output", "tools_called", "timed_out", "skipped", "passed", "error", "score_value", "score_passed", "score_reason"]);
    assert.deepEqual(keys.slice(-14), ["expectations", "repeats", "pass_rate", "pass_at_k", "phase_seconds", "error_kind", "tokens", "cost_usd", "reliability_reason", "trajectory", "pass_rate_ci", "case_pass_rate", "decided", "adaptive_stop"]);
    assert.equal(json.repeats, null);
    assert.equal(json.pass_rate, null);
    assert.equal(json.pass_at_k, null);
    assert.equal(new CaseResult({ name: "plain" }).toJSON().expectations, null);
  });
});

describe("pass@k (pure)", () => {
  test("pass@k is the unbiased estimator 1 - C(n-c, k) / C(n, k)", () => {
    assert.equal(passAtK(3, 2, 1), 2 / 3);
    assert.equal(passAtK(3, 2, 2), 1);
    assert.ok(Math.abs(passAtK(5, 1, 2) - 0.4) < 1e-12);
    assert.equal(passAtK(4, 0, 4), 0);
    assert.equal(passAtK(10, 10, 1), 1);
  });
});
