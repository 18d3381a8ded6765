// AgentAsJudgeEval standalone (seed 003) and as a post-hook (withPostHooks): parameters, results
// and statistics, printing, saving, callbacks, custom judges; real HTTP through the scripted server
// where a model is involved.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AgentAsJudgeEval,
  AgentAsJudgeResult,
  Case,
  ConfigError,
  createLogger,
  openAIAgent,
  openAIJudge,
  ResultsStore,
  runCases,
  withPostHooks,
  type AgentAsJudgeEvaluation,
  type JudgeModel,
  type JudgeRequest,
  type RunEvent,
} from "../../../index.ts";
import { MemoryStream, ScriptedJudge, StubAgent, latch } from "../../support/doubles.ts";
import { useScriptedOpenAI } from "../../support/openai-server.ts";

const server = useScriptedOpenAI();
beforeEach(() => {
  server.requests.length = 0;
  server.handle(() => ({ status: 500, errorMessage: "no reply scripted" }));
});

const httpJudge = () => openAIJudge({ model: "judge-model", baseURL: server.url, apiKey: "sk-aaj-0123456789", baseDelayMs: 5 });

/** Scores the output by the number it contains ("score:8" -> 8), over HTTP. */
function scoreByOutput() {
  server.handle((req) => {
    const score = Number(/score:(\d+)/.exec(req.messages[1]?.content as string)?.[1] ?? 5);
    return { content: JSON.stringify({ score, reason: `scored ${score}` }) };
  });
}

describe("AgentAsJudgeEval.run", () => {
  test("one pair, binary: the result has Agno's fields; score statistics are null", async () => {
    server.reply({ content: '{"passed": true, "reason": "It names Paris."}' });
    const evaluation = new AgentAsJudgeEval({ criteria: "Names Paris as the capital.", model: httpJudge(), name: "capital" });
    const result = await evaluation.run({ input: "What is the capital of France?", output: "Paris." });
    assert.ok(result instanceof AgentAsJudgeResult);
    assert.match(result.runId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(result.results, [{ input: "What is the capital of France?", output: "Paris.", criteria: "Names Paris as the capital.", score: null, reason: "It names Paris.", passed: true }]);
    assert.equal(result.passRate, 100);
    assert.equal(result.avgScore, null);
    assert.equal(result.minScore, null);
    assert.equal(result.maxScore, null);
    assert.equal(result.stdDevScore, null);
    assert.deepEqual(result.failures, []);
    assert.deepEqual(result.usage, { inputTokens: 11, outputTokens: 7, totalTokens: 18 });
    const user = String(server.requests[0]!.messages[1]!.content);
    assert.match(user, /^<input>\nWhat is the capital of France\?\n<\/input>\n\nThe output appears between the two delimiters tagged with nonce [0-9a-f]{32}\./);
  });

  test("a numeric batch: order kept (even in parallel), threshold applied, statistics as Agno computes them", async () => {
    scoreByOutput();
    const evaluation = new AgentAsJudgeEval({ criteria: "Good answer.", scoringStrategy: "numeric", threshold: 7, model: httpJudge(), concurrency: 3 });
    const result = await evaluation.run({
      cases: [
        { input: "a", output: "score:9" },
        { input: "b", output: "score:6" },
        { input: "c", output: "score:7" },
      ],
    });
    assert.deepEqual(result.results.map((r) => [r.input, r.score, r.passed]), [
      ["a", 9, true],
      ["b", 6, false],
      ["c", 7, true],
    ]);
    assert.ok(Math.abs(result.passRate - 200 / 3) < 1e-9);
    assert.ok(Math.abs(result.avgScore! - 22 / 3) < 1e-9);
    assert.equal(result.minScore, 6);
    assert.equal(result.maxScore, 9);
    // Sample standard deviation (Python's statistics.stdev).
    assert.ok(Math.abs(result.stdDevScore! - Math.sqrt(7 / 3)) < 1e-9, String(result.stdDevScore));
    const one = await evaluation.run({ input: "d", output: "score:8" });
    assert.equal(one.stdDevScore, 0, "one score: a deviation of 0");
    assert.equal(one.avgScore, 8);
  });

  test("an evaluation without a verdict is left out of the results and listed in failures", async () => {
    server.reply({ content: '{"passed": true, "reason": "ok"}' }, { content: "not json" }, { content: '{"passed": false, "reason": "no"}' });
    const { logger, text } = memoryLogger();
    const result = await new AgentAsJudgeEval({ criteria: "c", model: httpJudge(), logger }).run({
      cases: [
        { input: "1", output: "x" },
        { input: "2", output: "y" },
        { input: "3", output: "z" },
      ],
    });
    assert.deepEqual(result.results.map((r) => r.input), ["1", "3"]);
    assert.equal(result.passRate, 50);
    assert.equal(result.failures.length, 1);
    assert.equal(result.failures[0]!.input, "2");
    assert.match(result.failures[0]!.reason, /answer is not JSON/);
    assert.match(text(), /evaluation failed: no verdict/);
  });

  test("onFail is called with each failed evaluation (awaited), and its errors never escape", async () => {
    const judge = new ScriptedJudge({ answer: (r: JudgeRequest) => ({ passed: !r.user.includes("wrong"), reason: "r" }) });
    const failed: AgentAsJudgeEvaluation[] = [];
    const gate = latch();
    const evaluation = new AgentAsJudgeEval({
      criteria: "c",
      model: judge,
      onFail: async (e) => {
        await Promise.resolve();
        failed.push(e);
        gate.open();
      },
    });
    const result = await evaluation.run({ cases: [{ input: "q", output: "right" }, { input: "q", output: "wrong" }] });
    assert.deepEqual(failed.map((e) => e.output), ["wrong"]);
    assert.equal(result.passRate, 50);

    const { logger, text } = memoryLogger();
    const throwing = new AgentAsJudgeEval({ criteria: "c", model: judge, logger, onFail: () => { throw new Error("callback broke"); } });
    const r2 = await throwing.run({ input: "q", output: "wrong" });
    assert.equal(r2.results[0]!.passed, false);
    assert.match(text(), /onFail callback error/);
    assert.match(text(), /callback broke/);
  });

  test("additionalGuidelines (a text or a list) reach the judge's instructions", async () => {
    const judge = new ScriptedJudge();
    await new AgentAsJudgeEval({ criteria: "c", model: judge, additionalGuidelines: "Ignore typos." }).run({ input: "q", output: "a" });
    await new AgentAsJudgeEval({ criteria: "c", model: judge, additionalGuidelines: ["Be strict.", "Ignore typos."] }).run({ input: "q", output: "a" });
    assert.match(judge.requests[0]!.system, /## Additional Guidelines\nIgnore typos\.\n\nBe objective/);
    assert.match(judge.requests[1]!.system, /## Additional Guidelines\n- Be strict\.\n- Ignore typos\.\n\nBe objective/);
  });

  test("evaluatorAgent: a custom judge model wins over model", async () => {
    const custom = new ScriptedJudge({ answer: { passed: false, reason: "custom" } });
    const other = new ScriptedJudge();
    const result = await new AgentAsJudgeEval({ criteria: "c", model: other, evaluatorAgent: custom }).run({ input: "q", output: "a" });
    assert.equal(result.results[0]!.reason, "custom");
    assert.equal(other.requests.length, 0);
  });

  test("evaluatorAgent: any agent (here the built-in one, over HTTP) grades with the evaluator prompt and the schema", async () => {
    server.reply({ content: '{"score": 8, "reason": "graded by an agent"}' });
    const grader = openAIAgent({ id: "grader", model: "grader-model", baseURL: server.url, apiKey: "sk-grader-0123456789" });
    const result = await new AgentAsJudgeEval({ criteria: "Good.", scoringStrategy: "numeric", evaluatorAgent: grader }).run({ input: "q", output: "a" });
    assert.deepEqual(result.results.map((r) => [r.score, r.passed, r.reason]), [[8, true, "graded by an agent"]]);
    const req = server.requests[0]!;
    assert.equal(req.body?.model, "grader-model");
    assert.match(String(req.messages[0]!.content), /^You are an expert evaluator\.[\s\S]*## Scoring \(1-10\)[\s\S]*Answer with only a JSON object/);
    assert.match(String(req.messages[1]!.content), /^<input>\nq\n<\/input>/);
  });

  test("runMetrics receives the judge's token usage", async () => {
    server.reply({ content: '{"passed": true, "reason": "ok"}', usage: { prompt_tokens: 40, completion_tokens: 2 } });
    const metrics = { inputTokens: 100, outputTokens: 10, totalTokens: 110 };
    await new AgentAsJudgeEval({ criteria: "c", model: httpJudge() }).run({ input: "q", output: "a", runMetrics: metrics });
    assert.deepEqual(metrics, { inputTokens: 140, outputTokens: 12, totalTokens: 152 });
  });

  test("no judge model anywhere: a clear error, not a crash", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      await assert.rejects(new AgentAsJudgeEval({ criteria: "c" }).run({ input: "q", output: "a" }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.code, "CONFIG_MISSING");
        assert.equal(e.message, "AgentAsJudgeEval: no judge model configured: set OPENAI_API_KEY or pass model");
        return true;
      });
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe("AgentAsJudgeEval: printing and saving", () => {
  test("nothing is printed unless asked", async () => {
    const out = new MemoryStream();
    await new AgentAsJudgeEval({ criteria: "c", model: new ScriptedJudge(), output: out }).run({ input: "q", output: "a" });
    assert.equal(out.text, "");
  });

  test("printSummary and printResults render tables to the chosen stream", async () => {
    const out = new MemoryStream();
    const judge = new ScriptedJudge({ answer: (r: JudgeRequest) => ({ score: Number(/score:(\d+)/.exec(r.user)?.[1]), reason: "because" }) });
    const evaluation = new AgentAsJudgeEval({ criteria: "c", scoringStrategy: "numeric", model: judge, output: out, printSummary: true });
    await evaluation.run({ cases: [{ input: "first input", output: "score:9" }, { input: "second", output: "score:5" }], printResults: true });
    const text = out.text;
    assert.match(text, /Agent As Judge Evaluation\n/);
    assert.match(text, /│ Input +│ first input +│/);
    assert.match(text, /│ Score +│ 9\/10 +│/);
    assert.match(text, /│ Status +│ PASSED +│/);
    assert.match(text, /│ Status +│ FAILED +│/);
    assert.match(text, /│ Reason +│ because +│/);
    assert.match(text, /Agent As Judge Evaluation Summary\n/);
    assert.match(text, /│ Number of Evaluations +│ 2 +│/);
    assert.match(text, /│ Pass Rate +│ 50\.0% +│/);
    assert.match(text, /│ Average Score +│ 7\.00\/10 +│/);
    assert.match(text, /│ Min Score +│ 5\.00\/10 +│/);
    assert.match(text, /│ Max Score +│ 9\.00\/10 +│/);
    assert.match(text, /│ Std Deviation +│ 2\.83 +│/);
    assert.ok(text.indexOf("Summary") > text.indexOf("first input"), "results first, then the summary, as Agno prints them");
  });

  test("a model output cannot restyle the terminal: control characters are replaced", async () => {
    const out = new MemoryStream();
    await new AgentAsJudgeEval({ criteria: "c", model: new ScriptedJudge(), output: out, printResults: true }).run({ input: "q", output: "\u001b[2Jwiped" });
    assert.ok(!out.text.includes("\u001b[2J"));
    assert.match(out.text, /\?\[2Jwiped/);
  });

  test("filePathToSaveResults: {name} and {run_id} are filled, folders created, Agno's JSON written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-aaj-"));
    const evaluation = new AgentAsJudgeEval({ criteria: "c", name: "nightly", model: new ScriptedJudge(), filePathToSaveResults: join(dir, "evals", "{name}-{run_id}.json") });
    const result = await evaluation.run({ input: "q", output: "a" });
    const path = join(dir, "evals", `nightly-${result.runId}.json`);
    const text = readFileSync(path, "utf8");
    assert.match(text, /^\{\n {4}"run_id": /, "indented by 4, as Agno writes it");
    assert.deepEqual(JSON.parse(text), {
      run_id: result.runId,
      results: [{ input: "q", output: "a", criteria: "c", score: null, reason: "meets the criteria", passed: true }],
      avg_score: null,
      min_score: null,
      max_score: null,
      std_dev_score: null,
      pass_rate: 100,
    });
  });

  test("a file that cannot be written is a warning, not a failed run", async () => {
    const { logger, text } = memoryLogger();
    // A regular file where a folder should be: the write fails with ENOTDIR.
    const blocker = join(mkdtempSync(join(tmpdir(), "evalfleet-aaj-")), "a-file");
    writeFileSync(blocker, "");
    const result = await new AgentAsJudgeEval({ criteria: "c", model: new ScriptedJudge(), filePathToSaveResults: join(blocker, "x.json"), logger }).run({ input: "q", output: "a" });
    assert.equal(result.results.length, 1);
    assert.match(text(), /failed to save result to file/);
  });
});

describe("AgentAsJudgeEval: parameters are validated", () => {
  const refused = (options: Record<string, unknown>, message: RegExp | string): void => {
    assert.throws(() => new AgentAsJudgeEval(options as never), (e: unknown) => {
      assert.ok(e instanceof ConfigError, String(e));
      if (typeof message === "string") assert.equal(e.message, message);
      else assert.match(e.message, message);
      return true;
    });
  };

  test("threshold 1-10 in numeric mode, with Agno's message; binary mode does not read it", () => {
    refused({ scoringStrategy: "numeric", threshold: 0 }, "AgentAsJudgeEval: threshold must be between 1 and 10, got 0");
    refused({ scoringStrategy: "numeric", threshold: 11 }, "AgentAsJudgeEval: threshold must be between 1 and 10, got 11");
    refused({ threshold: "7" }, "AgentAsJudgeEval: threshold must be a number from 1 to 10, got '7'");
    assert.doesNotThrow(() => new AgentAsJudgeEval({ scoringStrategy: "numeric", threshold: 1 }));
    assert.doesNotThrow(() => new AgentAsJudgeEval({ scoringStrategy: "numeric", threshold: 10 }));
    assert.doesNotThrow(() => new AgentAsJudgeEval({ threshold: 42 }));
  });

  test("every other parameter", () => {
    refused({ scoringStrategy: "likert" }, `AgentAsJudgeEval: scoringStrategy must be "binary" or "numeric", got 'likert'`);
    refused({ criteria: 5 }, "AgentAsJudgeEval: criteria must be a string, got 5");
    refused({ additionalGuidelines: [1] }, "AgentAsJudgeEval: additionalGuidelines must be a string or a list of strings, got [1]");
    refused({ onFail: "log" }, "AgentAsJudgeEval: onFail must be a function, got 'log'");
    refused({ model: "gpt-5-mini" }, "AgentAsJudgeEval: model must be a judge model (an object with judge()), got 'gpt-5-mini'");
    refused({ evaluatorAgent: {} }, /^AgentAsJudgeEval: evaluatorAgent must be a judge model \(judge\(\)\) or an agent \(run\(\)\)/);
    refused({ printSummary: "yes" }, "AgentAsJudgeEval: printSummary must be a boolean, got 'yes'");
    refused({ filePathToSaveResults: "" }, "AgentAsJudgeEval: filePathToSaveResults must be a non-empty string, got ''");
    refused({ scoring_strategy: "numeric" }, "AgentAsJudgeEval: unknown option 'scoring_strategy' (did you mean scoringStrategy?)");
    refused({ db: {} }, "AgentAsJudgeEval: db must be a store URL (sqlite:PATH, postgres://...) or a ResultsStore, got {}");
    assert.throws(() => new AgentAsJudgeEval({ db: "mysql://u:hunter2@db/evals" }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "STORE_URL_INVALID");
      assert.equal(err.message, "results store URL 'mysql://u:***@db/evals' has an unsupported scheme 'mysql': use sqlite:PATH or postgres://USER@HOST:PORT/DATABASE");
      return true;
    });
    refused({ dbTimeout: 0 }, "AgentAsJudgeEval: dbTimeout must be a number of seconds > 0, got 0");
    assert.doesNotThrow(() => new AgentAsJudgeEval({ telemetry: true, runInBackground: true, name: "n", printResults: false }));
  });

  test("run() arguments: a pair or a batch, not both, not neither", async () => {
    const e = new AgentAsJudgeEval({ criteria: "c", model: new ScriptedJudge() });
    await assert.rejects(e.run({ input: "q", output: "a", cases: [] }), /provide either \(input, output\) OR cases, not both/);
    await assert.rejects(e.run({}), /must provide either \(input, output\) OR cases/);
    await assert.rejects(e.run({ input: "q" }), /both input and output are required for a single evaluation/);
    await assert.rejects(e.run({ cases: [{ input: "q" } as never] }), /cases\[0\] needs both input and output/);
    await assert.rejects(e.run({ input: 5 as never, output: "a" }), /input must be a string or a list of \{role, content\} messages, got 5/);
  });
});

describe("withPostHooks: AgentAsJudgeEval grading live runs", () => {
  test("inline: each completed run is graded before the run ends; the run's output is untouched", async () => {
    server.handle((req) => ({ content: JSON.stringify({ passed: !String(req.messages[1]!.content).includes("Lyon"), reason: "checked" }) }));
    const failed: string[] = [];
    const evaluator = new AgentAsJudgeEval({ criteria: "Names Paris.", model: httpJudge(), onFail: (e) => void failed.push(e.output) });
    const events: RunEvent[] = [];
    const paris = withPostHooks(new StubAgent({ id: "geo", events: [{ type: "thinking" }], output: { content: "Paris" } }), [evaluator]);
    const lyon = withPostHooks(new StubAgent({ id: "geo", output: { content: "Lyon" } }), [evaluator]);
    assert.equal(paris.id, "geo");
    const suite = await runCases(
      [
        new Case({ name: "paris", agent: paris, input: "Capital of France?", scorer: { score: () => ({ value: 1, passed: true }) } }),
        new Case({ name: "lyon", agent: lyon, input: "Capital of France?", scorer: { score: () => ({ value: 1, passed: true }) } }),
      ],
      { onRunEvent: (_c, e) => void events.push(e) },
    );
    assert.deepEqual(suite.results.map((r) => [r.output, r.passed, r.error]), [
      ["Paris", true, null],
      ["Lyon", true, null],
    ]);
    assert.deepEqual(evaluator.hookResults.map((r) => [r.results[0]!.input, r.results[0]!.output, r.results[0]!.passed]), [
      ["Capital of France?", "Paris", true],
      ["Capital of France?", "Lyon", false],
    ]);
    assert.deepEqual(failed, ["Lyon"]);
    assert.deepEqual(events.map((e) => e.type), ["thinking"], "the agent's events pass through");
  });

  test("in the background: the run returns before the grading ends; waitForBackgroundHooks settles it", async () => {
    const release = latch();
    const asked = latch();
    const slowJudge: JudgeModel = {
      id: "slow",
      async judge() {
        asked.open();
        await release.promise;
        return { passed: true, reason: "later" };
      },
    };
    const evaluator = new AgentAsJudgeEval({ criteria: "c", model: slowJudge, runInBackground: true });
    const agent = withPostHooks(new StubAgent({ id: "bg", output: { content: "answer" } }), [evaluator]);
    const suite = await runCases([new Case({ name: "bg", agent, input: "q", scorer: { score: () => ({ value: 1, passed: true }) } })]);
    assert.equal(suite.results[0]!.passed, true);
    await asked.promise;
    assert.equal(evaluator.hookResults.length, 0, "the case finished while the judge was still thinking");
    release.open();
    await agent.waitForBackgroundHooks();
    assert.equal(evaluator.hookResults.length, 1);
    assert.equal(evaluator.hookResults[0]!.results[0]!.reason, "later");
  });

  test("a failing hook never fails the run (it is streamed as post_hook_error); failed runs are not graded", async () => {
    const events: RunEvent[] = [];
    const seen: string[] = [];
    const agent = withPostHooks(new StubAgent({ id: "a", output: { content: "x" } }), [
      () => {
        throw new Error("hook broke");
      },
      (run) => void seen.push(String(run.output.content)),
    ]);
    const result = (await runCases([new Case({ name: "h", agent, input: "q", scorer: { score: () => ({ value: 1, passed: true }) } })], { onRunEvent: (_c, e) => void events.push(e) })).results[0]!;
    assert.equal(result.passed, true);
    assert.equal(result.error, null);
    assert.deepEqual(events, [{ type: "post_hook_error", error: "Error: hook broke" }]);
    assert.deepEqual(seen, ["x"], "the next hook still ran");

    const graded: string[] = [];
    const paused = withPostHooks(new StubAgent({ output: { content: "wait", status: "paused" } }), [(run) => void graded.push(String(run.output.content))]);
    await runCases([new Case({ name: "p", agent: paused, input: "q", scorer: { score: () => ({ value: 1, passed: true }) } })]);
    assert.deepEqual(graded, []);
  });

  test("as a post-hook each run is recorded with the hooked agent's id, or the team's (Agno's post_check)", async () => {
    const url = `sqlite:${join(mkdtempSync(join(tmpdir(), "evalfleet-aaj-hook-")), "results.db")}`;
    const judge: JudgeModel = { id: "j", judge: async () => ({ passed: true, reason: "fine" }) };
    const evaluator = new AgentAsJudgeEval({ name: "hooked", criteria: "c", model: judge, db: url });
    const agent = withPostHooks(new StubAgent({ id: "geo", output: { content: "Paris" } }), [evaluator]);
    const team = withPostHooks(new StubAgent({ id: "research-team", output: { content: "Paris" } }), [evaluator], { kind: "team" });
    assert.equal(team.kind, "team");
    const seen: Array<[string | null, string | null]> = [];
    const spy = withPostHooks(new StubAgent({ id: "crew", output: { content: "x" } }), [(run) => void seen.push([run.agentId, run.teamId])], { kind: "team" });
    const ok = { score: () => ({ value: 1, passed: true }) };
    await runCases([
      new Case({ name: "agent", agent, input: "q", scorer: ok }),
      new Case({ name: "team", team, input: "q", scorer: ok }),
      new Case({ name: "spy", team: spy, input: "q", scorer: ok }),
    ]);
    await evaluator.close();
    assert.deepEqual(seen, [[null, "crew"]], "a team's hooks get its id as teamId");
    const store = await ResultsStore.open(url);
    try {
      const runs = await store.listRuns({ kind: "agent_as_judge" });
      assert.deepEqual(runs.map((r) => [r.agentId, r.teamId]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))), [
        ["geo", null],
        [null, "research-team"],
      ]);
      const plain = new AgentAsJudgeEval({ criteria: "c", model: judge, db: store });
      const direct = await plain.run({ input: "q", output: "a" });
      const run = await store.findRun(direct.runId);
      assert.deepEqual([run.agentId, run.teamId], [null, null], "run() called directly grades no agent");
    } finally {
      await store.close();
    }
    assert.throws(() => withPostHooks(new StubAgent(), [], { kind: "crew" as never }), /^ConfigError|withPostHooks: kind must be "agent" or "team", got 'crew'/);
  });

  test("debugMode logs each judge call at debug level: the request, the raw answer, the verdict", async () => {
    const lines: string[] = [];
    // A logger at warn: debugMode lowers this evaluation's log to debug, not the caller's logger.
    const logger = createLogger({ level: "warn", destination: { write: (s: string) => void lines.push(s) } as never });
    const judge: JudgeModel = { id: "debug-judge", judge: async () => '{"passed": false, "reason": "names Lyon"}' };
    const quiet = new AgentAsJudgeEval({ name: "quiet", criteria: "Names Paris.", model: judge, logger });
    await quiet.run({ input: "Capital?", output: "Lyon" });
    assert.deepEqual(lines, [], "without debugMode nothing is logged for a verdict");
    const loud = new AgentAsJudgeEval({ name: "loud", criteria: "Names Paris.", model: judge, logger, debugMode: true });
    await loud.run({ input: "Capital?", output: "Lyon" });
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(
      entries.map((e) => [e.level, e.msg, e.eval]),
      [
        [20, "judge request", "loud"],
        [20, "judge answer", "loud"],
        [20, "judge verdict", "loud"],
      ],
    );
    assert.deepEqual([entries[0]!.criteria, entries[0]!.input, entries[0]!.output, entries[0]!.model], ["Names Paris.", "Capital?", "Lyon", "debug-judge"]);
    assert.equal(entries[1]!.answer, '{"passed": false, "reason": "names Lyon"}');
    assert.deepEqual((entries[2] as { verdict: unknown }).verdict, { passed: false, reason: "names Lyon", score: null });
    assert.equal(lines.length, 3, "the caller's own logger stays at warn");
    assert.throws(() => new AgentAsJudgeEval({ criteria: "c", debugMode: "yes" as never }), /AgentAsJudgeEval: debugMode must be a boolean, got 'yes'/);
  });

  test("bad hooks are refused, naming the position", () => {
    assert.throws(() => withPostHooks(new StubAgent(), [42 as never]), (e: unknown) => e instanceof ConfigError && /^withPostHooks: hooks\[0\] must be a function or an object with postCheck\(run\), got 42$/.test(e.message));
  });
});

/** A pino logger writing into an array. */
function memoryLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(s) } as never });
  return { logger, text: () => lines.join("") };
}
