// The pieces of a run record (coordinator/history/recording/record-run.ts): its status and the
// judge model's name.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { runStatus, judgeModelName } from "../../../../coordinator/history/recording/record-run.ts";
import { CaseResult, SuiteResult } from "../../../../shared/result/result.ts";

describe("run record pieces", () => {
  test("run status: cancelled, incomplete, passed, failed", () => {
    const pass = new SuiteResult([new CaseResult({ name: "a", reliabilityPassed: true })]);
    const fail = new SuiteResult([new CaseResult({ name: "a", reliabilityPassed: false })]);
    assert.equal(runStatus(pass, false), "passed");
    assert.equal(runStatus(fail, false), "failed");
    assert.equal(runStatus(pass, true), "incomplete");
    assert.equal(runStatus(new SuiteResult([], { cancelled: true }), true), "cancelled");
  });

  test("judge model name: the suite's judge, else the default judge only when it is configured", () => {
    assert.equal(judgeModelName({ id: "my-judge", judge: async () => ({}) }, {}), "my-judge");
    assert.equal(judgeModelName(null, { OPENAI_API_KEY: "sk-x" }), "gpt-5-mini");
    assert.equal(judgeModelName(null, { OPENAI_API_KEY: "sk-x", EVALFLEET_JUDGE_MODEL: "qwen2.5:14b" }), "qwen2.5:14b");
    assert.equal(judgeModelName(null, {}), null);
  });
});
