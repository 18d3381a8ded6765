// MCP clients declared by a suite (Agno's mcp_tools=), against a real MCP server process
// (test/fixtures/mcp-calculator-server.mjs, stdio) started by the code under test: connected once
// per thread (or inline run) before the first case, closed at the end, the caller's own clients
// left alone, nothing connected when nothing runs, a failed connection a warning.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Case, ConfigError, cli, loadSuite, mcpToolkit, openAIAgent, runCases, runSuiteLocal, type Agent, type RunOutput } from "../../../index.ts";
import { main } from "../../../coordinator/cli/program.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { startScriptedOpenAI } from "../../support/openai-server.ts";
import { ROOT } from "../../support/paths.ts";

const root = ROOT;
const serverScript = join(root, "test", "fixtures", "mcp-calculator-server.mjs");
const suiteFile = join(root, "test", "fixtures", "mcp-suite.ts");

function markerDir(): string {
  return mkdtempSync(join(tmpdir(), "evalfleet-mcp-"));
}

/** Server pids that started, and those whose client closed them. */
function markers(dir: string): { started: number[]; closed: number[] } {
  const files = readdirSync(dir);
  const pids = (prefix: string) => files.filter((f) => f.startsWith(`${prefix}-`)).map((f) => Number(f.slice(prefix.length + 1))).sort();
  return { started: pids("started"), closed: pids("closed") };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function calculator(dir: string, name = "calculator") {
  return mcpToolkit({ name, command: process.execPath, args: [serverScript], env: { EVALFLEET_MCP_DIR: dir } });
}

/** An agent that multiplies through the toolkit's MCP tool. */
function multiplier(toolkit: ReturnType<typeof calculator>, a: number, b: number): Agent {
  return {
    id: "mcp-agent",
    async run(_input, { signal, sessionId }) {
      const tool = (await toolkit.tools(signal)).find((t) => t.name === "multiply");
      if (!tool) return { content: "no calculator" };
      const result = await tool.execute({ a, b }, { signal, sessionId, emit: () => undefined });
      return { content: String(result), tools: [{ toolName: "multiply", toolArgs: { a, b }, result }] };
    },
  };
}

const cases = (toolkit: ReturnType<typeof calculator>) => [
  new Case({ name: "six_sevens", agent: multiplier(toolkit, 6, 7), input: "6 x 7", tags: ["calc"], expectedToolCalls: ["multiply"] }),
  new Case({ name: "eight_nines", agent: multiplier(toolkit, 8, 9), input: "8 x 9", tags: ["calc"], expectedToolCalls: ["multiply"] }),
];

describe("MCP clients, inline (runCases, cli)", () => {
  test("connected once before the first case, used by every case, closed at the end (the server process is gone)", async () => {
    const dir = markerDir();
    const toolkit = calculator(dir);
    const suite = await runCases(cases(toolkit), { mcpClients: [toolkit], concurrency: 2 });
    assert.deepEqual(suite.results.map((r) => [r.output, r.reliabilityPassed]), [
      ["42", true],
      ["72", true],
    ]);
    const m = markers(dir);
    assert.equal(m.started.length, 1, "one server for the whole run");
    assert.deepEqual(m.closed, m.started, "closed by evalfleet at the end");
    assert.equal(isAlive(m.started[0]!), false);
    assert.equal(toolkit.connected, false);
    assert.deepEqual(readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n").map((l) => l.split(" ").slice(1).join(" ")).sort(), ["multiply 6 7", "multiply 8 9"]);
  });

  test("a client the caller connected stays the caller's: not connected again, not closed", async () => {
    const dir = markerDir();
    const toolkit = calculator(dir);
    await toolkit.connect();
    try {
      const suite = await runCases(cases(toolkit), { mcpClients: [toolkit] });
      assert.equal(suite.status, "PASS");
      assert.equal(toolkit.connected, true);
      const m = markers(dir);
      assert.equal(m.started.length, 1);
      assert.deepEqual(m.closed, []);
      assert.equal(isAlive(toolkit.pid!), true);
    } finally {
      await toolkit.close();
    }
    assert.equal(markers(dir).closed.length, 1);
  });

  test("listing, or selecting no case, connects nothing", async () => {
    const dir = markerDir();
    const toolkit = calculator(dir);
    const empty = await runCases(cases(toolkit), { mcpClients: [toolkit], tag: "nope" });
    assert.equal(empty.total, 0);
    const io = { stdout: new MemoryStream(), stderr: new MemoryStream(), handleSignals: false };
    assert.equal(await cli(cases(toolkit), { mcpClients: [toolkit], argv: ["--list"], ...io }), 0);
    assert.equal(await cli(cases(toolkit), { mcpClients: [toolkit], argv: ["--tag", "nope"], ...io }), 2);
    assert.deepEqual(markers(dir).started, []);
  });

  test("a failed connection is a warning; the cases still run and their checks decide", async () => {
    const dir = markerDir();
    const good = calculator(dir);
    const broken = mcpToolkit({ name: "broken", command: join(dir, "no-such-server") });
    const stdout = new MemoryStream();
    const code = await cli(
      [...cases(good), new Case({ name: "needs_broken", agent: multiplier(broken, 1, 1), input: "1 x 1", expectedToolCalls: ["multiply"] })],
      { mcpClients: [broken, good], argv: [], stdout, stderr: new MemoryStream(), handleSignals: false },
    );
    assert.equal(code, 1);
    const warnings = stdout.text.split("\n").filter((l) => l.startsWith("warning: "));
    assert.equal(warnings.length, 1, stdout.text);
    assert.match(warnings[0]!, /^warning: MCP client 'broken' failed to connect: Error: spawn .*no-such-server ENOENT; its cases run without it$/);
    assert.match(stdout.text, /2\/3 passed, 1 failed/);
    assert.match(stdout.text, /│ needs_broken +│ — +│ FAIL +│ — +│ FAIL +│/, "decided by its reliability check, not by a crash");
    // Its one summary line is its failed check's reason: no error was recorded for it.
    assert.match(stdout.text, /^ {2}needs_broken: reliability: expected multiply: never called \(no tool calls\)$/m, "no error recorded for it");
    assert.deepEqual(markers(dir).closed, markers(dir).started);
  });

  test("a toolkit that was never connected says how to declare it", async () => {
    const toolkit = calculator(markerDir());
    const suite = await runCases([cases(toolkit)[0]!]);
    assert.match(suite.results[0]!.error!, /^agent: EvalfleetError: MCP client 'calculator' is not connected: declare it in defineSuite\(\{ mcpClients \}\) or cli\(cases, \{ mcpClients \}\), or connect\(\) it yourself$/);
  });

  test("the built-in agent offers an MCP server's tools to the model and calls them", async () => {
    const dir = markerDir();
    const toolkit = calculator(dir);
    const server = await startScriptedOpenAI();
    try {
      server.handle((req) => (req.lastToolResult ? { content: `It is ${req.lastToolResult.content}.` } : { toolCalls: [{ name: "multiply", arguments: { a: 4891, b: 7238 } }] }));
      const agent = openAIAgent({ id: "mcp-tutor", model: "m", baseURL: server.url, apiKey: "sk-mcp-0123456789", tools: [toolkit, { name: "noop", parameters: { type: "object", properties: {} }, execute: () => "" }] });
      const suite = await runCases([new Case({ name: "mcp_multiply", agent, input: "4891 x 7238?", expectedToolCalls: ["multiply"] })], { mcpClients: [toolkit] });
      const result = suite.results[0]!;
      assert.equal(result.error, null);
      assert.equal(result.output, "It is 35401058.");
      assert.equal(result.reliabilityPassed, true);
      assert.deepEqual((result.response as RunOutput).tools, [{ toolName: "multiply", toolArgs: { a: 4891, b: 7238 }, result: "35401058" }]);
      const offered = server.requests[0]!.body?.tools as Array<{ function: { name: string; description?: string; parameters: { properties: Record<string, unknown> } } }>;
      assert.deepEqual(offered.map((t) => t.function.name).sort(), ["factorial", "multiply", "noop"]);
      const mul = offered.find((t) => t.function.name === "multiply")!;
      assert.equal(mul.function.description, "Multiply two numbers.");
      assert.deepEqual(Object.keys(mul.function.parameters.properties).sort(), ["a", "b"]);
    } finally {
      await server.close();
    }
    assert.deepEqual(markers(dir).closed, markers(dir).started);
  });

  test("many tool calls on one case signal leave no abort listeners behind (no leak warning)", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on("warning", onWarning);
    const toolkit = calculator(markerDir());
    await toolkit.connect();
    try {
      const signal = new AbortController().signal;
      const multiply = (await toolkit.tools(signal)).find((t) => t.name === "multiply")!;
      for (let i = 0; i < 15; i++) assert.equal(await multiply.execute({ a: i, b: 2 }, { signal, sessionId: "s", emit: () => undefined }), String(i * 2));
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message), []);
    } finally {
      process.off("warning", onWarning);
      await toolkit.close();
    }
  });

  test("bad toolkit options and bad suite declarations name the field", async () => {
    assert.throws(() => mcpToolkit({ name: "x", command: "" }), (e: unknown) => e instanceof ConfigError && e.message === "mcpToolkit: command must be a non-empty string, got ''");
    assert.throws(() => mcpToolkit({ name: "x", command: "node", args: "server.js" as never }), /mcpToolkit: args must be a list of strings, got 'server.js'/);
    const dir = markerDir();
    const file = join(dir, "bad-mcp-suite.mjs");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, `import { Case, defineSuite } from ${JSON.stringify(pathToFileURL(join(root, "index.ts")).href)};\nexport default defineSuite({ mcpClients: ["calc"], cases: [new Case({ name: "a", agent: { run: () => ({}) }, input: "x", expectedToolCalls: ["t"] })] });\n`);
    const stderr = new MemoryStream();
    const code = await main(["run", file], { stdout: new MemoryStream(), stderr, handleSignals: false });
    assert.equal(code, 2);
    assert.match(stderr.text, /mcpClients\[0\] is string 'calc', not an MCP client \(an object with connect\(\) and close\(\), e\.g\. mcpToolkit\(\{\.\.\.\}\)\)/);
  });
});

describe("MCP clients on worker threads (defineSuite({ mcpClients }))", () => {
  test("each thread connects once before its first case; every server is closed before the threads are destroyed", async () => {
    const dir = markerDir();
    process.env.EVALFLEET_MCP_DIR = dir;
    try {
      const suite = await loadSuite(suiteFile);
      assert.equal(suite.mcpClients.length, 1);
      const result = await runSuiteLocal(suite, { tag: "calc", threads: 2, concurrency: 4 });
      assert.equal(result.status, "PASS", JSON.stringify(result.toJSON().cases.map((c) => c.error)));
      assert.equal(result.total, 6);
      const workers = new Set(result.results.map((r) => r.worker));
      const m = markers(dir);
      assert.equal(m.started.length, workers.size, `one server per thread that ran cases (${[...workers].join(", ")})`);
      assert.ok(m.started.length <= 2);
      assert.deepEqual(m.closed, m.started, "each thread closed its server on the pool's shutdown message");
      for (const pid of m.started) assert.equal(isAlive(pid), false, `server ${pid} exited`);
      assert.equal(readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n").length, 6);
    } finally {
      delete process.env.EVALFLEET_MCP_DIR;
    }
  });

  test("evalfleet run: a broken client is warned about once (not once per thread); evalfleet list connects nothing", async () => {
    const dir = markerDir();
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(root, "bin", "evalfleet.mjs"), ...args], {
          cwd: root,
          env: { ...process.env, NO_COLOR: "1", EVALFLEET_MCP_DIR: dir, EVALFLEET_MCP_BROKEN: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const listed = await run(["list", suiteFile]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(markers(dir).started, [], "listing connects nothing");

    const r = await run(["run", suiteFile, "--threads", "2", "--concurrency", "4"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const warnings = r.stdout.split("\n").filter((l) => l.startsWith("warning: MCP client 'broken'"));
    assert.equal(warnings.length, 1, r.stdout);
    assert.match(r.stdout, /6\/7 passed, 1 failed/);
    assert.match(r.stdout, /│ uses_broken +│ — +│ FAIL +│ — +│ FAIL +│/);
    const m = markers(dir);
    assert.ok(m.started.length >= 1 && m.started.length <= 2);
    assert.deepEqual(m.closed, m.started);
  });
});
