// Issue 32: every option object of the public API refuses a misspelt key, naming who, the key and
// the nearest known key, with a stable code, before it does anything (no request, no case run).
// Case, defineSuite and dataset() are in test/shared/option-keys.test.ts; suite files in .mjs and
// .ts and the exit code 2 in integration/cli-process.test.ts. Here: the run functions, cli(), the
// model clients and the team.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { join } from "node:path";
import { ROOT } from "../support/paths.ts";
import { Case, ConfigError, ErrorCode, aiSdkJudge, cli, openAIAgent, openAIJudge, openAITeam, runCases, runSuiteLocal, loadSuite, type Agent } from "../../index.ts";

const agent: Agent = { id: "a", async run() { return { content: "4" }; } };
const cases = (ran: string[]): Case[] => [new Case({ name: "one", input: "2+2", agent: { async run() { ran.push("one"); return { content: "4" }; } }, expectedOutput: "4" })];

/** Asserts `fn` throws (or rejects with) a ConfigError with exactly `message`, naming the key as its field. */
async function refused(fn: () => unknown, message: string, field: string): Promise<void> {
  await assert.rejects(async () => fn(), (err: unknown) => {
    assert.ok(err instanceof ConfigError, `a ConfigError, got ${String(err)}`);
    assert.equal(err.code, ErrorCode.ConfigInvalid);
    assert.equal(err.message, message);
    assert.equal((err.details as { field?: string }).field, field);
    return true;
  });
}

describe("unknown options of the run functions, cli() and the model clients", () => {
  test("runCases and runSuiteLocal refuse a misspelt option before any case runs", async () => {
    const ran: string[] = [];
    await refused(() => runCases(cases(ran), { concurency: 2 } as never), "runCases: unknown option 'concurency' (did you mean concurrency?)", "concurency");
    await refused(() => runCases(cases(ran), { passTreshold: 0.5 } as never), "runCases: unknown option 'passTreshold' (did you mean passThreshold?)", "passTreshold");
    const suite = await loadSuite(join(ROOT, "test", "fixtures", "basic-suite.ts"));
    await refused(() => runSuiteLocal(suite, { thread: 2 } as never), "runSuiteLocal: unknown option 'thread' (did you mean threads?)", "thread");
    assert.deepEqual(ran, [], "nothing ran");
  });

  test("cli() run as a script: a usage error, exit code 2, one line on stderr, nothing run", async () => {
    const ran: string[] = [];
    let err = "";
    const stderr = new Writable({ write(chunk, _enc, done) { err += String(chunk); done(); } });
    const code = await cli(cases(ran), { defaultTimout: 5, argv: [], stderr } as never);
    assert.equal(code, 2);
    assert.equal(err, "error: cli(): unknown option 'defaultTimout' (did you mean defaultTimeout?)\n");
    assert.deepEqual(ran, []);
  });

  test("the model clients and the team refuse a misspelt option before any request", async () => {
    await refused(() => openAIJudge({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9", temprature: 0 } as never), "openAIJudge: unknown option 'temprature' (did you mean temperature?)", "temprature");
    await refused(() => openAIAgent({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9", intructions: "be brief" } as never), "openAIAgent: unknown option 'intructions' (did you mean instructions?)", "intructions");
    await refused(() => openAITeam({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:9", members: [agent], member: [agent] } as never), "openAITeam: unknown option 'member' (did you mean members?)", "member");
    await refused(() => aiSdkJudge("openai/gpt-5-mini", { maxRetry: 1 } as never), "aiSdkJudge: unknown option 'maxRetry' (did you mean maxRetries?)", "maxRetry");
  });
});
