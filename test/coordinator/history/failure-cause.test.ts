// Why a recorded case failed (coordinator/history/failure-cause.ts): every check gives its reason; the error kind; the group key.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { errorKindOf, failureCause, type CauseInput } from "../../../coordinator/history/failure-cause.ts";

const ok: CauseInput = {
  passed: true, skipped: false, timedOut: false, error: null, judgePassed: null, judgeReason: null, judgeScore: null,
  reliabilityPassed: null, reliability: null, scorePassed: null, scoreValue: null, scoreReason: null, report: {} as CauseInput["report"],
};
const failed = { ...ok, passed: false };

describe("failureCause", () => {
  test("a passed case has none", () => assert.equal(failureCause(ok), null));

  test("every check's reason, in order, the first the main cause", () => {
    const c = failureCause({
      ...failed,
      error: "agent: Error: boom; cleanup: Error: gone",
      judgePassed: false,
      judgeReason: "wrong city",
      reliabilityPassed: false,
      reliability: { passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: ["search"] },
      scorePassed: false,
      scoreValue: 0.25,
      report: { expectations: { expected_output: { method: "exact", passed: false, reason: "expected 'Paris'" }, eval_functions: [{ name: "tone", value: 0, passed: false, reason: "rude" }] } } as unknown as CauseInput["report"],
    })!;
    assert.deepEqual(c.checks.map((k) => k.check), ["agent", "cleanup", "judge", "reliability", "scorer", "expected_output", "eval_function:tone"]);
    assert.equal(c.reason, "agent: Error: boom · cleanup: Error: gone · wrong city · reliability: missing tools: search · scorer: value 0.25 · expected_output: exact: expected 'Paris' · eval_function:tone: rude");
    assert.equal(c.kind, "agent");
    assert.equal(c.groupLabel, "agent · agent · agent: Error: boom");
  });

  test("the group key: kind, first check, first line with numbers as #", () => {
    const a = failureCause({ ...failed, scorePassed: false, scoreValue: 0, scoreReason: "off by 12\nmore" })!;
    const b = failureCause({ ...failed, scorePassed: false, scoreValue: 0, scoreReason: "off by 3.5\nother" })!;
    assert.equal(a.groupKey, b.groupKey);
    assert.equal(a.groupLabel, "check · scorer · off by #");
    assert.notEqual(a.groupKey, failureCause({ ...failed, judgePassed: false, judgeReason: "off by 12" })!.groupKey);
  });

  test("a recorded trajectory reason is the reliability check's reason; failures at another step group together", () => {
    const at = (step: number) =>
      failureCause({
        ...failed,
        reliabilityPassed: false,
        reliability: { passedToolCalls: [], failedToolCalls: [], additionalToolCalls: [], missingToolCalls: ['get_weather(city="London")'] },
        report: { reliability_reason: `expected get_weather(city="London"), got get_weather(city="Paris") at step ${step}` } as unknown as CauseInput["report"],
      })!;
    assert.equal(at(2).reason, 'reliability: expected get_weather(city="London"), got get_weather(city="Paris") at step 2');
    assert.equal(at(2).groupKey, at(5).groupKey);
    assert.equal(at(2).groupLabel, 'check · reliability · expected get_weather(city="London"), got get_weather(city="Paris") at step #');
  });

  test("repeats, skipped, and a failure no check explains", () => {
    assert.equal(failureCause({ ...failed, report: { repeats: [{ passed: true }, { passed: false }] } as unknown as CauseInput["report"] })!.reason, "repeats: passed 1 of 2 runs");
    assert.equal(failureCause({ ...ok, skipped: true, error: "skipped: cancelled" })!.reason, "skipped: cancelled");
    assert.equal(failureCause(failed)!.checks[0]!.check, "unknown");
  });
});

describe("errorKindOf", () => {
  test("the result's error_kind wins; else timeout, agent, check, or none", () => {
    assert.equal(errorKindOf({ ...failed, error: "agent: x", report: { error_kind: "infra" } as unknown as CauseInput["report"] }), "infra");
    assert.equal(errorKindOf({ ...failed, error: "judge: returned no result", errorKind: "infra" }), "infra");
    assert.equal(errorKindOf({ ...failed, timedOut: true, error: "timeout: x" }), "timeout");
    assert.equal(errorKindOf({ ...failed, error: "setup: x" }), "agent");
    assert.equal(errorKindOf({ ...failed, judgePassed: false }), "check");
    assert.equal(errorKindOf(ok), null);
    assert.equal(errorKindOf({ ...ok, skipped: true }), null);
  });
});
