// The opt-out of the library's runners (coordinator/api.ts): `runCases(cases, { redactShapes })`
// and a suite's `defineSuite({ redactShapes })` under `runSuiteLocal` decide which credential
// shapes the run's outputs lose (here: the results store, and the transcripts in it), for that run
// only: two runs at once with different choices do not mix, and the process's own choice is left
// as it was. `cli(cases, { redactShapes })`, a script's own process, sets the process's. A bad
// value is a usage error naming the field.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { Case, ResultsStore, cli, loadSuite, runCases, runSuiteLocal, type Agent } from "../../index.ts";
import { currentRedactedShapes, redactText, useSuiteRedactShapes } from "../../shared/redaction/secrets.ts";
import { MemoryStream } from "../support/doubles.ts";
import { SECRET_SHAPES } from "../../shared/redaction/shapes.ts";
import { fixture } from "../support/paths.ts";
import { shapedTokens } from "../support/token-shapes.ts";

const tokens = shapedTokens();
const gh = tokens.find((t) => t.label === "a GitHub ghp_ token")!.token;
const jwt = tokens.find((t) => t.label === "a JWT")!.token;
const dir = mkdtempSync(join(tmpdir(), "evalfleet-api-shapes-"));
const stores: ResultsStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});

async function store(name: string): Promise<ResultsStore> {
  const s = await ResultsStore.open(`sqlite:${join(dir, `${name}.db`)}`);
  stores.push(s);
  return s;
}

/** A case whose output holds a GitHub token and a JWT, and whose tool call's arguments hold the token. */
function leaky(name: string, delayMs = 0): Case {
  const agent: Agent = {
    id: "leaky",
    run: async () => {
      await new Promise((r) => setTimeout(r, delayMs));
      return { content: `token ${gh} jwt ${jwt}`, tools: [{ toolName: "push", toolArgs: { auth: gh }, result: "ok" }] };
    },
  };
  return new Case({ name, agent, input: "go", scorer: { score: () => ({ value: 1, passed: true }) } });
}

async function recorded(s: ResultsStore, runId: string): Promise<{ output: string; args: unknown }> {
  const [c] = await s.caseRecords(runId);
  const t = await s.transcript(runId, 0);
  assert.ok(t && !("unreadable" in t));
  return { output: String(c!.output), args: t.run!.tools![0]!.toolArgs };
}

describe("runCases: redactShapes", () => {
  test("default: every shape leaves the store redacted; { except: [github] }: the token stays, the JWT goes; false: both stay", async () => {
    const cases = [
      ["default", undefined, `token [REDACTED] jwt [REDACTED]`, { auth: "[REDACTED]" }],
      ["except", { except: ["github" as const] }, `token ${gh} jwt [REDACTED]`, { auth: gh }],
      ["off", false, `token ${gh} jwt ${jwt}`, { auth: gh }],
    ] as const;
    for (const [name, redactShapes, output, args] of cases) {
      const s = await store(name);
      const suite = await runCases([leaky("a")], { db: s, suiteName: name, ...(redactShapes === undefined ? {} : { redactShapes }) });
      const r = await recorded(s, suite.runId!);
      assert.equal(r.output, output, name);
      assert.deepEqual(r.args, args, `${name}: the transcript's tool arguments`);
      assert.equal(suite.results[0]!.output, `token ${gh} jwt ${jwt}`, "the caller's own result objects are its own data, unredacted");
    }
    assert.deepEqual(currentRedactedShapes(), SECRET_SHAPES, "the process's choice is untouched");
    assert.equal(redactText(gh), "[REDACTED]");
  });

  test("two runs at once with different choices do not mix", async () => {
    const [a, b] = [await store("concurrent-a"), await store("concurrent-b")];
    const [ra, rb] = await Promise.all([
      runCases([leaky("a", 30)], { db: a, suiteName: "a", redactShapes: false }),
      runCases([leaky("b", 10)], { db: b, suiteName: "b" }),
    ]);
    assert.equal((await recorded(a, ra.runId!)).output, `token ${gh} jwt ${jwt}`);
    assert.equal((await recorded(b, rb.runId!)).output, "token [REDACTED] jwt [REDACTED]");
  });

  test("a bad value is a usage error naming the field, before anything runs", async () => {
    let ran = false;
    const c = new Case({ name: "x", agent: { id: "x", run: async () => ((ran = true), { content: "x" }) }, input: "x", scorer: { score: () => ({ value: 1, passed: true }) } });
    await assert.rejects(runCases([c], { redactShapes: { except: ["gihub"] } as never }), (err: Error & { code?: string }) => {
      assert.equal(err.code, "USAGE");
      assert.match(err.message, /^redactShapes\.except\[0\]: unknown shape 'gihub' \(the shapes: private-key, /);
      return true;
    });
    assert.equal(ran, false);
  });
});

describe("runSuiteLocal: the suite's redactShapes, in its threads too", () => {
  test("a suite with { except: [github, jwt] }: the store keeps those, loses the others", async () => {
    process.env.SHAPED_REDACT = "except";
    try {
      const suite = await loadSuite(fixture("shaped-tokens-suite.ts"));
      assert.deepEqual(suite.redactShapes, { except: ["github", "jwt"] });
      const s = await store("suite");
      const result = await runSuiteLocal(suite, { db: s, threads: 1, name: ["agent-error", "tool-args"] });
      const records = new Map((await s.caseRecords(result.runId!)).map((c) => [c.name, c]));
      const aws = tokens.find((t) => t.label === "an AWS access key id")!.token;
      assert.equal(records.get("agent-error")!.error, `agent: Error: 401 from the API: token ${gh} rejected ([REDACTED], ${jwt})`);
      assert.ok(!JSON.stringify([...records.values()]).includes(aws));
      const t = await s.transcript(result.runId!, [...records.values()].find((c) => c.name === "tool-args")!.index);
      assert.ok(t && !("unreadable" in t));
      assert.deepEqual(t.run!.tools![0]!.toolArgs, { auth: "Bearer [REDACTED]", repo_token: gh });
    } finally {
      delete process.env.SHAPED_REDACT;
    }
  });
});

describe("cli(cases, { redactShapes })", () => {
  test("the script's choice holds for its whole process: the console and the JSON report; a bad value exits 2", async () => {
    const io = () => ({ stdout: new MemoryStream(), stderr: new MemoryStream(), handleSignals: false });
    const failing = (): Case => new Case({ name: "fails", agent: { id: "a", run: async () => ({ content: "x" }) }, input: "x", scorer: { score: () => ({ value: 0, passed: false, reason: `saw ${gh}` }) } });
    try {
      for (const [redactShapes, shown] of [[false, gh], [true, "[REDACTED]"]] as const) {
        const o = io();
        const report = join(dir, `cli-${redactShapes}.json`);
        assert.equal(await cli([failing()], { argv: ["--json-output", report], redactShapes, ...o }), 1);
        assert.ok(o.stdout.text.includes(`saw ${shown}`), o.stdout.text);
        assert.equal(JSON.parse(readFileSync(report, "utf8")).cases[0].score_reason, `saw ${shown}`);
      }
      const o = io();
      assert.equal(await cli([failing()], { argv: [], redactShapes: "none" as never, ...o }), 2);
      assert.match(o.stderr.text, /redactShapes must be true, false or \{ except: \[shape names\] \}, got 'none'/);
    } finally {
      useSuiteRedactShapes(true);
    }
  });
});
