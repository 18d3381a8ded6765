// The default judge (EVALFLEET_JUDGE_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY) and the resolution
// order case -> suite/runner -> default, against the scripted server over real HTTP.
import { test, describe, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Case, DEFAULT_JUDGE_MODEL, defaultJudgeModel, openAIJudge, runCase, runCases } from "../../../index.ts";
import { NO_JUDGE_MODEL_ERROR } from "../../../worker/runtime/lifecycle.ts";
import { StubAgent } from "../../support/doubles.ts";
import { useScriptedOpenAI } from "../../support/openai-server.ts";

const VARS = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "EVALFLEET_JUDGE_MODEL"] as const;
// Every judge on this server passes; its model name says which judge answered.
const server = useScriptedOpenAI((started) => started.handle((req) => ({ content: JSON.stringify({ passed: true, reason: `judged by ${String(req.body?.model)}` }) })));
let saved: Record<string, string | undefined> = {};

beforeEach(() => {
  saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]));
  for (const v of VARS) delete process.env[v];
  server.requests.length = 0;
});
afterEach(() => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});

const judgedCase = (name: string, extra: Partial<ConstructorParameters<typeof Case>[0]> = {}): Case =>
  new Case({ name, input: "q", agent: new StubAgent({ output: { content: "a" } }), criteria: "c", ...extra });

describe("defaultJudgeModel", () => {
  test("no OPENAI_API_KEY: no default judge, and a case with criteria fails cleanly", async () => {
    process.env.OPENAI_BASE_URL = server.url;
    assert.equal(defaultJudgeModel(), null);
    const suite = await runCases([judgedCase("one"), judgedCase("two")]);
    assert.deepEqual(suite.results.map((r) => r.error), [NO_JUDGE_MODEL_ERROR, NO_JUDGE_MODEL_ERROR]);
    assert.equal(server.requests.length, 0);
  });

  test("from the environment: model, base URL and key", async () => {
    process.env.OPENAI_API_KEY = "sk-env-key-0123456789";
    process.env.OPENAI_BASE_URL = server.url;
    process.env.EVALFLEET_JUDGE_MODEL = "env-judge";
    const result = await runCase(judgedCase("env"));
    assert.equal(result.judgePassed, true, result.error ?? "");
    assert.equal(result.judgeReason, "judged by env-judge");
    assert.equal(server.requests[0]!.headers.authorization, "Bearer sk-env-key-0123456789");
  });

  test("the model defaults to gpt-5-mini", async () => {
    process.env.OPENAI_API_KEY = "sk-env-key-0123456789";
    process.env.OPENAI_BASE_URL = server.url;
    assert.equal(DEFAULT_JUDGE_MODEL, "gpt-5-mini");
    assert.equal(defaultJudgeModel()?.id, "gpt-5-mini");
    const result = await runCase(judgedCase("default_model"));
    assert.equal(result.judgeReason, "judged by gpt-5-mini");
  });

  test("one instance per environment; a changed environment gives a new one", () => {
    process.env.OPENAI_API_KEY = "sk-env-key-0123456789";
    process.env.OPENAI_BASE_URL = server.url;
    const a = defaultJudgeModel();
    assert.equal(defaultJudgeModel(), a);
    process.env.EVALFLEET_JUDGE_MODEL = "other";
    const b = defaultJudgeModel();
    assert.notEqual(b, a);
    assert.equal(b?.id, "other");
  });

  test("a malformed OPENAI_BASE_URL is a judge error naming it, not a crash", async () => {
    process.env.OPENAI_API_KEY = "sk-env-key-0123456789";
    process.env.OPENAI_BASE_URL = "localhost:11434";
    const result = await runCase(judgedCase("bad_url"));
    assert.equal(result.error, "judge: ConfigError: default judge: OPENAI_BASE_URL must be an http(s) URL such as http://localhost:11434/v1, got 'localhost:11434'");
  });
});

describe("judge resolution order: case, then suite/runner, then default", () => {
  test("each case is judged by the first judge it has", async () => {
    process.env.OPENAI_API_KEY = "sk-env-key-0123456789";
    process.env.OPENAI_BASE_URL = server.url;
    process.env.EVALFLEET_JUDGE_MODEL = "default-judge";
    const caseJudge = openAIJudge({ model: "case-judge", baseURL: server.url, apiKey: "k-case-123456" });
    const runnerJudge = openAIJudge({ model: "runner-judge", baseURL: server.url, apiKey: "k-runner-123456" });
    const withRunner = await runCases([judgedCase("own", { judgeModel: caseJudge }), judgedCase("inherits")], { judgeModel: runnerJudge });
    assert.deepEqual(
      withRunner.results.map((r) => r.judgeReason),
      ["judged by case-judge", "judged by runner-judge"],
    );
    const withoutRunner = await runCases([judgedCase("own", { judgeModel: caseJudge }), judgedCase("default")]);
    assert.deepEqual(
      withoutRunner.results.map((r) => r.judgeReason),
      ["judged by case-judge", "judged by default-judge"],
    );
  });
});
