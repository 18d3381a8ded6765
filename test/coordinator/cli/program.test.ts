// The command line in-process: cli(cases) for scripts (spec P, upstream tests 64-78) and main() for `evalfleet run/list`.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Case, cli } from "../../../index.ts";
import { main } from "../../../coordinator/cli/program.ts";
import { MemoryStream, StubAgent, StubScorer, ScriptedJudge } from "../../support/doubles.ts";
import { fixture } from "../../support/paths.ts";

const tmp = (): string => mkdtempSync(join(tmpdir(), "evalfleet-cli-"));

function io() {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  return { stdout, stderr, handleSignals: false };
}

/** Everything `o` printed, stdout then stderr. */
function printed(o: ReturnType<typeof io>): string {
  return o.stdout.text + o.stderr.text;
}

function passingCase(name = "only_case", agent = new StubAgent()): Case {
  return new Case({ name, agent, input: "What is the capital of France?", tags: ["smoke"], criteria: "Mentions Paris.", judgeModel: new ScriptedJudge() });
}

describe("cli(cases)", () => {
  test("exit 0 when every case passes, and the tally says so", async () => {
    const o = io();
    const code = await cli([passingCase()], { argv: [], ...o });
    assert.equal(code, 0);
    assert.match(o.stdout.text, /1\/1 passed/);
    assert.match(o.stdout.text, /Eval Summary/);
  });

  test("exit 1 on a failing case, with the failure count", async () => {
    const o = io();
    const failing = new Case({ name: "bad", agent: new StubAgent(), input: "x", criteria: "c", judgeModel: new ScriptedJudge({ answer: { passed: false, reason: "no" } }) });
    const code = await cli([failing], { argv: [], ...o });
    assert.equal(code, 1);
    assert.match(o.stdout.text, /0\/1 passed, 1 failed/);
  });

  test("exit 2 when no case matches, listing every available name; nothing runs", async () => {
    const o = io();
    const agent = new StubAgent();
    const code = await cli([passingCase("only_case", agent)], { argv: ["--tag", "nope"], ...o });
    assert.equal(code, 2);
    assert.match(printed(o), /no cases selected \(name=None, tag='nope'\)/);
    assert.match(printed(o), /available: only_case/);
    assert.equal(agent.runCount, 0);
  });

  test("--list prints the case table and runs nothing", async () => {
    const o = io();
    const agent = new StubAgent();
    const code = await cli([passingCase("listed", agent)], { argv: ["--list"], ...o });
    assert.equal(code, 0);
    assert.match(o.stdout.text, /Eval Cases/);
    assert.match(o.stdout.text, /listed/);
    assert.match(o.stdout.text, /stub-agent/);
    assert.equal(agent.runCount, 0);
  });

  test("--list --json-output writes the exact case-list payload", async () => {
    const o = io();
    const dir = tmp();
    const path = join(dir, "list.json");
    const c = new Case({ name: "listed", agent: new StubAgent(), input: "x", tags: ["smoke"], criteria: "c" });
    const code = await cli([c], { argv: ["--list", "--timeout", "30", "--json-output", path], ...o });
    assert.equal(code, 0);
    assert.equal(
      readFileSync(path, "utf8"),
      JSON.stringify({ cases: [{ name: "listed", agent_id: "stub-agent", team_id: null, tags: ["smoke"], timeout_seconds: 30 }] }, null, 2) + "\n",
    );
  });

  test("--json-output creates parent folders and writes the report", async () => {
    const o = io();
    const path = join(tmp(), "nested", "deeper", "evals.json");
    const code = await cli([passingCase("capital_of_france")], { argv: ["--json-output", path], ...o });
    assert.equal(code, 0);
    const payload = JSON.parse(readFileSync(path, "utf8"));
    assert.equal(payload.summary.status, "PASS");
    assert.equal(payload.cases[0].name, "capital_of_france");
    assert.match(o.stdout.text, new RegExp(`json output: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  test("an unwritable --json-output is a clean error with exit 1, after the summary", async () => {
    const o = io();
    const dir = tmp();
    writeFileSync(join(dir, "file"), "I am a file");
    const path = join(dir, "file", "evals.json");
    const code = await cli([passingCase()], { argv: ["--json-output", path], ...o });
    assert.equal(code, 1);
    assert.match(o.stderr.text, /error: cannot write json output to .*file\/evals\.json: /);
    assert.match(o.stdout.text, /1\/1 passed/);
    assert.doesNotMatch(printed(o), /\n\s+at /, "no stack trace");
  });

  test("--junit writes JUnit XML with one testcase per case", async () => {
    const o = io();
    const path = join(tmp(), "junit.xml");
    const failing = new Case({ name: "bad", agent: new StubAgent(), input: "x", scorer: new StubScorer({ value: 0, passed: false, reason: "wrong" }) });
    const code = await cli([passingCase("good"), failing], { argv: ["--junit", path], ...o });
    assert.equal(code, 1);
    const xml = readFileSync(path, "utf8");
    assert.equal((xml.match(/<testcase /g) ?? []).length, 2);
    assert.match(xml, /<testsuite [^>]*tests="2"[^>]*failures="1"/);
    assert.match(xml, /<failure [^>]*>[^<]*scorer failed/);
    assert.match(o.stdout.text, /junit output: /);
  });

  test("-v prints each case's response, tools and verdicts", async () => {
    const o = io();
    const agent = new StubAgent({ output: { content: "Paris is the capital.", tools: [{ toolName: "search_web" }] } });
    const code = await cli([passingCase("v", agent)], { argv: ["-v"], ...o });
    assert.equal(code, 0);
    assert.match(o.stdout.text, /Response\nParis is the capital\./);
    assert.match(o.stdout.text, /tools fired: search_web/);
    assert.match(o.stdout.text, /Judge: PASS\n {2}meets the criteria/);
    assert.match(o.stdout.text, /session: eval-v-[0-9a-f]{8}/);
  });

  test("--timeout sets the default per-case timeout", async () => {
    const o = io();
    const slow = new StubAgent({ delay: 5000 });
    const code = await cli([new Case({ name: "slow", agent: slow, input: "x", criteria: "c", judgeModel: new ScriptedJudge() })], { argv: ["--timeout", "0.2"], ...o });
    assert.equal(code, 1);
    assert.match(o.stdout.text, /timeout: exceeded 0\.2s/);
  });

  test("cli({defaultTimeout}) is the default behind --timeout", async () => {
    const o = io();
    const slow = new StubAgent({ delay: 5000 });
    const code = await cli([new Case({ name: "slow", agent: slow, input: "x", criteria: "c", judgeModel: new ScriptedJudge() })], { argv: [], defaultTimeout: 0.2, ...o });
    assert.equal(code, 1);
    assert.match(o.stdout.text, /timeout: exceeded 0\.2s/);
  });

  test("terminal escape sequences from the model cannot restyle the console", async () => {
    const o = io();
    const agent = new StubAgent({ output: { content: "model said \u001b[2J\u001b[31m[/dim] red", tools: [{ toolName: "tool\u001b[0m" }] } });
    const judge = new ScriptedJudge({ answer: { passed: true, reason: "reason \u001b]0;title\u0007 [/dim]" } });
    const c = new Case({ name: "markup_\u001b[1mcase", agent, input: "x", criteria: "c", judgeModel: judge });
    const code = await cli([c], { argv: ["-v"], ...o });
    assert.equal(code, 0);
    assert.match(o.stdout.text, /model said \?\[2J\?\[31m\[\/dim\] red/);
    assert.equal(o.stdout.text.includes("\u001b"), false, "no escape character reaches the console");
    assert.equal(o.stdout.text.includes("\u0007"), false);
  });

  test("an unknown flag returns 2 and runs nothing", async () => {
    const o = io();
    const agent = new StubAgent();
    const code = await cli([passingCase("x", agent)], { argv: ["--nope"], ...o });
    assert.equal(code, 2);
    assert.match(o.stderr.text, /unknown option '--nope'/);
    assert.equal(agent.runCount, 0);
  });

  test("a bad flag value names the flag and the value", async () => {
    const o = io();
    const code = await cli([passingCase()], { argv: ["--timeout", "soon"], ...o });
    assert.equal(code, 2);
    assert.match(o.stderr.text, /--timeout must be a number of seconds >= 0, got 'soon'/);
  });

  test("--help returns 0 and documents --tag", async () => {
    const o = io();
    const code = await cli([passingCase()], { argv: ["--help"], ...o });
    assert.equal(code, 0);
    assert.match(o.stdout.text, /--tag/);
    assert.match(o.stdout.text, /Run the eval suite, or a subset with --name\/--tag\./);
  });

  test("--tag is repeatable and a case matches any of them; --name narrows further", async () => {
    const o = io();
    const agents = [new StubAgent(), new StubAgent(), new StubAgent()];
    const cases = [
      new Case({ name: "a", agent: agents[0]!, input: "x", tags: ["smoke"], scorer: new StubScorer() }),
      new Case({ name: "b", agent: agents[1]!, input: "x", tags: ["nightly"], scorer: new StubScorer() }),
      new Case({ name: "c", agent: agents[2]!, input: "x", tags: ["other"], scorer: new StubScorer() }),
    ];
    assert.equal(await cli(cases, { argv: ["--tag", "smoke", "--tag", "nightly"], ...o }), 0);
    assert.deepEqual(agents.map((a) => a.runCount), [1, 1, 0]);
    assert.equal(await cli(cases, { argv: ["--tag", "smoke", "--tag", "nightly", "--name", "b"], ...io() }), 0);
    assert.deepEqual(agents.map((a) => a.runCount), [1, 2, 0]);
  });

  test("an external abort signal cancels the run: exit 3 and the unrun cases are skipped", async () => {
    const o = io();
    const controller = new AbortController();
    const first = new StubAgent({ delay: 60_000 });
    const cases = [
      new Case({ name: "first", agent: first, input: "x", scorer: new StubScorer() }),
      new Case({ name: "second", agent: new StubAgent(), input: "x", scorer: new StubScorer() }),
    ];
    const path = join(tmp(), "cancelled.json");
    const running = cli(cases, { argv: ["--json-output", path], ...o, signal: controller.signal });
    while (first.runCount === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    assert.equal(await running, 3);
    const payload = JSON.parse(readFileSync(path, "utf8"));
    assert.deepEqual(payload.cases.map((c: { skipped: boolean }) => c.skipped), [false, true]);
    assert.equal(payload.cases[1].error, "skipped: suite aborted after cancelled run");
  });
});

describe("evalfleet run / list (main)", () => {

  test("runs a suite file on worker threads, in declaration order, with the JSON report", async () => {
    const o = io();
    const path = join(tmp(), "r.json");
    const code = await main(["run", fixture("basic-suite.ts"), "--threads", "2", "--concurrency", "3", "--json-output", path], o);
    assert.equal(code, 1, printed(o));
    const payload = JSON.parse(readFileSync(path, "utf8"));
    assert.deepEqual(payload.cases.map((c: { name: string }) => c.name), ["alpha", "beta", "gamma"]);
    assert.deepEqual(payload.cases.map((c: { passed: boolean }) => c.passed), [true, true, false]);
    assert.deepEqual(payload.cases.map((c: { index: number }) => c.index), [0, 1, 2]);
    assert.ok(payload.cases.every((c: { worker: string }) => /^thread-\d+$/.test(c.worker)));
    assert.equal(payload.summary.total, 3);
    assert.match(payload.summary.run_id, /^[0-9a-f-]{36}$/);
  });

  test("--threads 0 runs inline with the same report", async () => {
    const o = io();
    const path = join(tmp(), "r.json");
    const code = await main(["run", fixture("basic-suite.ts"), "--threads", "0", "--tag", "smoke", "--json-output", path, "--run-id", "nightly-1"], o);
    assert.equal(code, 1);
    const payload = JSON.parse(readFileSync(path, "utf8"));
    assert.deepEqual(payload.cases.map((c: { name: string }) => c.name), ["alpha", "gamma"]);
    assert.equal(payload.summary.run_id, "nightly-1");
    assert.deepEqual(payload.cases.map((c: { worker: string }) => c.worker), ["local", "local"]);
  });

  test("an Agno-style script that calls cli() itself is loaded without running itself again", async () => {
    const dir = tmp();
    process.env.EVALFLEET_TEST_DIR = dir;
    try {
      const o = io();
      const code = await main(["run", fixture("script-suite.ts"), "--threads", "2"], o);
      assert.equal(code, 0, printed(o));
      const runs = readFileSync(join(dir, "runs.log"), "utf8").trim().split("\n").sort();
      assert.deepEqual(runs, ["one", "three", "two"], "each case ran exactly once");
    } finally {
      delete process.env.EVALFLEET_TEST_DIR;
    }
  });

  test("list prints the selected cases and runs nothing", async () => {
    const dir = tmp();
    process.env.EVALFLEET_TEST_DIR = dir;
    try {
      const o = io();
      const code = await main(["list", fixture("basic-suite.ts"), "--tag", "regression"], o);
      assert.equal(code, 0);
      assert.match(o.stdout.text, /beta/);
      assert.match(o.stdout.text, /gamma/);
      assert.doesNotMatch(o.stdout.text, /alpha/);
      assert.equal(existsSync(join(dir, "runs.log")), false);
    } finally {
      delete process.env.EVALFLEET_TEST_DIR;
    }
  });

  test("the suite path can come from EVALFLEET_SUITE", async () => {
    process.env.EVALFLEET_SUITE = fixture("basic-suite.ts");
    try {
      const o = io();
      const code = await main(["list"], o);
      assert.equal(code, 0);
      assert.match(o.stdout.text, /3 cases/);
    } finally {
      delete process.env.EVALFLEET_SUITE;
    }
  });

  test("no suite at all is a usage error", async () => {
    delete process.env.EVALFLEET_SUITE;
    const o = io();
    assert.equal(await main(["run"], o), 2);
    assert.match(o.stderr.text, /no suite file: pass SUITE or set EVALFLEET_SUITE/);
  });
});
