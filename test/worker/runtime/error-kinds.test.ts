// The lifecycle records why each case failed (error_kind), and --retries runs an infra failure
// again (inline; the thread pool and distributed workers share shared/trials/infra-retry.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, ModelCallError, runCases, type Agent } from "../../../index.ts";
import { ScriptedJudge, StubAgent } from "../../support/doubles.ts";

function agentThrowing(errors: Error[]): Agent & { runs: number } {
  const agent = {
    id: "flaky",
    runs: 0,
    run: async () => {
      const err = errors[agent.runs++];
      if (err) throw err;
      return { content: "Paris", status: "completed" as const };
    },
  };
  return agent;
}

describe("error_kind from the lifecycle", () => {
  test("a provider's 429 under the agent is infra; the agent's own error is agent", async () => {
    const suite = await runCases([
      new Case({ name: "rate_limited", input: "q", agent: agentThrowing([new ModelCallError("429 Too Many Requests", { status: 429, attempts: 5 })]), criteria: "c", judgeModel: new ScriptedJudge() }),
      new Case({ name: "own_bug", input: "q", agent: agentThrowing([new TypeError("x is not a function")]), criteria: "c", judgeModel: new ScriptedJudge() }),
      new Case({ name: "bad_key", input: "q", agent: agentThrowing([new ModelCallError("401 Unauthorized", { status: 401 })]), criteria: "c", judgeModel: new ScriptedJudge() }),
    ]);
    assert.deepEqual(suite.toJSON().cases.map((c) => [c.name, c.error_kind]), [["rate_limited", "infra"], ["own_bug", "agent"], ["bad_key", "agent"]]);
    assert.equal(suite.toJSON().summary.infra_errors, 1);
  });

  test("a judge with no result is infra; a failed verdict is check; a timeout is timeout", async () => {
    const suite = await runCases(
      [
        new Case({ name: "judge_down", input: "q", agent: new StubAgent(), criteria: "c", judgeModel: new ScriptedJudge({ error: new ModelCallError("503", { status: 503 }) }) }),
        new Case({ name: "judged_wrong", input: "q", agent: new StubAgent(), criteria: "c", judgeModel: new ScriptedJudge({ answer: { passed: false, reason: "no" } }) }),
        new Case({ name: "slow", input: "q", agent: new StubAgent({ delay: 5000 }), criteria: "c", timeoutSeconds: 0.2, judgeModel: new ScriptedJudge() }),
        new Case({ name: "fine", input: "q", agent: new StubAgent(), criteria: "c", judgeModel: new ScriptedJudge() }),
      ],
      { concurrency: 4 },
    );
    assert.deepEqual(suite.toJSON().cases.map((c) => [c.name, c.error_kind]), [["judge_down", "infra"], ["judged_wrong", "check"], ["slow", "timeout"], ["fine", null]]);
  });
});

describe("--retries (inline)", () => {
  test("an infra failure is run again and passes; attempts counts both executions", async () => {
    const agent = agentThrowing([new ModelCallError("429", { status: 429 })]);
    const suite = await runCases([new Case({ name: "flaky", input: "q", agent, criteria: "c", judgeModel: new ScriptedJudge() })], { retries: 2 });
    const c = suite.toJSON().cases[0]!;
    assert.equal(c.passed, true);
    assert.equal(c.attempts, 2);
    assert.equal(c.error_kind, null);
    assert.equal(agent.runs, 2);
  });

  test("a failed check and an agent error are not retried", async () => {
    const judge = new ScriptedJudge({ answer: { passed: false, reason: "no" } });
    const own = agentThrowing([new TypeError("bug"), new TypeError("bug")]);
    const suite = await runCases(
      [
        new Case({ name: "wrong", input: "q", agent: new StubAgent(), criteria: "c", judgeModel: judge }),
        new Case({ name: "bug", input: "q", agent: own, criteria: "c", judgeModel: new ScriptedJudge() }),
      ],
      { retries: 3 },
    );
    assert.deepEqual(suite.toJSON().cases.map((c) => c.attempts), [1, 1]);
    assert.equal(judge.requests.length, 1);
    assert.equal(own.runs, 1);
  });

  test("without --retries an infra failure stands", async () => {
    const agent = agentThrowing([new ModelCallError("429", { status: 429 })]);
    const suite = await runCases([new Case({ name: "flaky", input: "q", agent, criteria: "c", judgeModel: new ScriptedJudge() })]);
    assert.equal(suite.toJSON().cases[0]!.error_kind, "infra");
    assert.equal(agent.runs, 1);
  });
});
