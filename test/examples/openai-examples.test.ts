// The seed's two cookbook suites, rewritten with the built-in agent (examples/openai-math-suite.ts,
// examples/openai-team-suite.ts), run end to end through `evalfleet run` as a child process: real
// worker threads calling the scripted OpenAI-compatible server that runs in this test process
// (the suites read its URL from OPENAI_BASE_URL). The judge is the default judge from the environment.
import { test, describe, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DELEGATE_TOOL_NAME } from "../../index.ts";
import { useScriptedOpenAI, type RecordedRequest, type ScriptedReply } from "../support/openai-server.ts";
import { ROOT } from "../support/paths.ts";

const root = ROOT;
const KEY = "sk-examples-0123456789abcdef";
const server = useScriptedOpenAI((started) => started.handle(model));
/** What the scripted calculator member answers for 4891 x 7238 (a test can make it wrong). */
let teamProduct = 4891 * 7238;

beforeEach(() => {
  server.requests.length = 0;
  teamProduct = 4891 * 7238;
});

/** A stand-in for real models: every agent of the two suites, and a judge that reads the output. */
function model(req: RecordedRequest): ScriptedReply {
  if (req.body?.model === "judge-model") return judge(req);
  if (req.body?.model !== "agent-model") return { status: 404, errorMessage: `unknown model ${String(req.body?.model)}` };
  const system = req.system;
  const user = req.lastUserText;
  const tool = req.lastToolResult?.content;
  if (system === "Use the calculator tools for any arithmetic.") {
    if (tool !== undefined) return { content: user.includes("2 + 2") ? tool : `10! = ${Number(tool).toLocaleString("en-US")}` };
    if (user.includes("10!")) return { toolCalls: [{ name: "factorial", arguments: { n: 10 } }] };
    if (user.includes("2 + 2")) return { toolCalls: [{ name: "add", arguments: { a: 2, b: 2 } }] };
    return { content: "Compound interest is interest earned on the principal and on the previously earned interest." };
  }
  if (system.startsWith("Delegate arithmetic")) {
    if (tool !== undefined) return { content: user.includes("multiplied") ? `The product is ${Number(tool).toLocaleString("en-US")}.` : tool };
    return user.includes("multiplied")
      ? { toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member_id: "calculator", task: "Multiply 4891 by 7238." } }] }
      : { toolCalls: [{ name: DELEGATE_TOOL_NAME, arguments: { member_id: "writer", task: "Explain compound interest in one paragraph." } }] };
  }
  if (system === "Use the calculator tools for every arithmetic operation.") {
    if (tool !== undefined) return { content: String(teamProduct) };
    return { toolCalls: [{ name: "multiply", arguments: { a: 4891, b: 7238 } }] };
  }
  if (system === "Answer in one clear paragraph.") return { content: "Compound interest means you earn interest on the principal and on previously earned interest." };
  return { status: 400, errorMessage: `unexpected system prompt: ${system}` };
}

/** Passes an output that states what the criteria ask for; numeric mode scores 9 or 3. */
function judge(req: RecordedRequest): ScriptedReply {
  const system = req.system;
  const output = /<output nonce="[0-9a-f]{32}">\n([\s\S]*)\n<\/output nonce=/.exec(String(req.messages[1]?.content))?.[1] ?? "";
  const criteria = /## Criteria\n(.*)\n/.exec(system)?.[1] ?? "";
  const ok =
    (criteria.includes("3628800") && /3,?628,?800/.test(output)) ||
    (criteria.includes("35,401,058") && output.includes("35,401,058")) ||
    (criteria.includes("previously earned interest") && output.includes("previously earned interest"));
  if (system.includes("## Scoring (1-10)")) return { content: JSON.stringify({ score: ok ? 9 : 3, reason: ok ? "meets the criteria" : "wrong" }) };
  return { content: JSON.stringify({ passed: ok, reason: ok ? "meets the criteria" : "wrong" }) };
}

function evalfleet(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete childEnv[k];
      else childEnv[k] = v;
    }
    const child = spawn(process.execPath, [join(root, "bin", "evalfleet.mjs"), ...args], { cwd: root, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const modelEnv = () => ({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: KEY, EVALFLEET_AGENT_MODEL: "agent-model", EVALFLEET_JUDGE_MODEL: "judge-model" });

interface ReportCase {
  name: string;
  judge_passed: boolean | null;
  judge_score: number | null;
  judge_reason: string | null;
  reliability_passed: boolean | null;
  tools_called: string[];
  score_passed: boolean | null;
  passed: boolean;
  error: string | null;
  output: string;
  worker: string;
  team_id: string | null;
}

describe("the OpenAI example suites, end to end", () => {
  test("math tutor: the tutor calls factorial and add; the default judge grades over HTTP", async () => {
    const report = join(mkdtempSync(join(tmpdir(), "evalfleet-ex-")), "math.json");
    const r = await evalfleet(["run", "examples/openai-math-suite.ts", "--threads", "2", "--json-output", report], modelEnv());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const payload = JSON.parse(readFileSync(report, "utf8")) as { summary: { status: string; total: number }; cases: ReportCase[] };
    assert.equal(payload.summary.status, "PASS");
    const [fact, interest, sum] = payload.cases as [ReportCase, ReportCase, ReportCase];
    assert.deepEqual([fact.name, fact.judge_passed, fact.judge_reason, fact.reliability_passed, fact.tools_called, fact.output], [
      "factorial_uses_calculator",
      true,
      "meets the criteria",
      true,
      ["factorial"],
      "10! = 3,628,800",
    ]);
    assert.deepEqual([interest.name, interest.judge_passed, interest.tools_called], ["explains_compound_interest", true, []]);
    assert.deepEqual([sum.name, sum.score_passed, sum.output, sum.judge_passed], ["exact_sum", true, "4", null]);
    for (const c of payload.cases) assert.match(c.worker, /^thread-\d+$/, "ran on worker threads");
    // Every request carried the key; the judge asked for structured output.
    assert.ok(server.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`));
    const judged = server.requests.filter((q) => q.body?.model === "judge-model");
    assert.equal(judged.length, 2);
    assert.ok(judged.every((q) => (q.body?.response_format as { type?: string })?.type === "json_schema"));
  });

  test("team: the member's multiply is in tools_called and passes reliability; numeric scores are in the report", async () => {
    const report = join(mkdtempSync(join(tmpdir(), "evalfleet-ex-")), "team.json");
    const r = await evalfleet(["run", "examples/openai-team-suite.ts", "--threads", "2", "--json-output", report], modelEnv());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const cases = (JSON.parse(readFileSync(report, "utf8")) as { cases: ReportCase[] }).cases;
    const [calc, explain] = cases as [ReportCase, ReportCase];
    assert.equal(calc.name, "team_uses_calculator");
    assert.equal(calc.team_id, "assistant-team");
    assert.equal(calc.output, "The product is 35,401,058.");
    assert.deepEqual(calc.tools_called, [DELEGATE_TOOL_NAME, "multiply"]);
    assert.ok(calc.tools_called.includes("multiply"));
    assert.equal(calc.reliability_passed, true);
    assert.equal(calc.judge_score, 9);
    assert.equal(calc.judge_passed, true);
    assert.equal(explain.name, "team_explains_clearly");
    assert.equal(explain.judge_score, 9);
    assert.deepEqual(explain.tools_called, [DELEGATE_TOOL_NAME]);
    assert.ok(server.requests.some((q) => q.body?.model === "judge-model" && (q.body?.response_format as { json_schema?: { name?: string } })?.json_schema?.name === "numeric_judge_response"));
  });

  test("a wrong answer gets the verdict it deserves: a low numeric score fails the case and the run exits 1", async () => {
    teamProduct = 35401057;
    const report = join(mkdtempSync(join(tmpdir(), "evalfleet-ex-")), "team-wrong.json");
    const r = await evalfleet(["run", "examples/openai-team-suite.ts", "--tag", "smoke", "--json-output", report], modelEnv());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const [calc] = (JSON.parse(readFileSync(report, "utf8")) as { cases: ReportCase[] }).cases as [ReportCase];
    assert.equal(calc.output, "The product is 35,401,057.");
    assert.equal(calc.judge_score, 3);
    assert.equal(calc.judge_passed, false);
    assert.equal(calc.reliability_passed, true, "the tool still ran");
    assert.equal(calc.passed, false);
  });

  test("without OPENAI_API_KEY: one line saying what to set, exit 2, no stack trace, no request", async () => {
    for (const suite of ["examples/openai-math-suite.ts", "examples/openai-team-suite.ts"]) {
      const r = await evalfleet(["run", suite], { ...modelEnv(), OPENAI_API_KEY: undefined });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, new RegExp(`^error: ${suite.replace(/[.]/g, "\\.")}: OPENAI_API_KEY is not set: this example calls a real model\\. Set OPENAI_API_KEY`));
      assert.doesNotMatch(r.stderr + r.stdout, /\n\s+at /);
    }
    assert.equal(server.requests.length, 0);
  });
});
