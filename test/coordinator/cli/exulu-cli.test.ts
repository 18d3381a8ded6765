// Runs in Exulu's terms on the command line (issue 19), in-process with real worker threads and a
// real SQLite store: --run-name, --description, --eval-function, --scoring-method and --set by an
// Exulu set's id, recorded; `evalfleet export RUN_ID --format exulu` validated against a zod schema
// of Exulu's eval_runs type written from the seed; `--format json` is the run's own report.
import { test, describe, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../../coordinator/cli/program.ts";
import { AgentAsJudgeEval } from "../../../index.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { fixture } from "../../support/paths.ts";
import { ExuluEvalRunSchema } from "../../support/exulu-types.ts";

const SUITE = fixture("exulu-suite.ts");
const REFUND = "0b7c7d36-3f0e-4b3c-9a43-2d1f5c1e0001";
const STOCK = "0b7c7d36-3f0e-4b3c-9a43-2d1f5c1e0002";

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(args, { stdout, stderr, handleSignals: false });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe("a run in Exulu's terms, recorded and exported", () => {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-exulu-cli-"));
  const db = `sqlite:${join(dir, "results.db")}`;
  const reportPath = join(dir, "report.json");
  let runId = "";
  let report: any;

  before(async () => {
    const r = await cli([
      "run", SUITE, "--threads", "1", "--db", db, "--json-output", reportPath,
      "--set", "es-11", "--run-name", "Nightly support", "--description", "after the refund policy change",
      "--eval-function", "non_empty", "--eval-function", "received_files", "--scoring-method", "contains",
    ]);
    report = JSON.parse(readFileSync(reportPath, "utf8"));
    runId = report.summary.run_id;
    assert.ok(runId, r.stdout + r.stderr);
    // received_files fails on the row without files: the run's functions grade every case.
    assert.equal(r.code, 1, r.stdout + r.stderr);
  });

  test("the run's evaluation functions graded every selected case on the worker threads, after the case's own checks", () => {
    assert.deepEqual(
      report.cases.map((c: any) => [c.name, c.passed, c.expectations.expected_output.method, c.expectations.eval_functions.map((f: any) => `${f.name}:${f.passed}`)]),
      [
        ["refund_after_lookup", true, "contains", ["non_empty:true", "received_files:true"]],
        ["stock_check_failed", false, "contains", ["non_empty:true", "received_files:false"]],
      ],
    );
  });

  test("export --format exulu: Exulu's eval_runs record, every field, valid against the type; one result per test case", async () => {
    const r = await cli(["export", runId, "--format", "exulu", "--db", db]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const out = JSON.parse(r.stdout);
    const run = ExuluEvalRunSchema.parse(out.eval_run);
    assert.deepEqual(
      { id: run.id, name: run.name, description: run.description, agent_id: run.agent_id, test_case_ids: run.test_case_ids, eval_functions: run.eval_functions, scoring_method: run.scoring_method, pass_threshold: run.pass_threshold, timeout_in_seconds: run.timeout_in_seconds, RBAC: run.RBAC },
      {
        id: runId,
        name: "Nightly support",
        description: "after the refund policy change",
        agent_id: "support-agent",
        test_case_ids: [REFUND, STOCK],
        eval_functions: ["non_empty", "received_files"],
        scoring_method: "contains",
        pass_threshold: null,
        timeout_in_seconds: 120,
        RBAC: null,
      },
    );
    assert.equal((run.config as any).suite, "exulu");
    assert.deepEqual((run.config as any).selection.set, ["es-11"]);
    assert.equal(out.results.length, 2);
    assert.deepEqual(
      out.results.map((x: any) => [x.test_case_id, x.passed, x.metadata.exulu.createdAt, x.eval_function_results.length]),
      [
        [REFUND, true, "2026-01-12T09:30:00.000Z", 2],
        [STOCK, false, "2026-01-12T09:31:00.000Z", 2],
      ],
    );
  });

  test("export --format json (the default) is the run's report as --json-output wrote it; -o writes a file", async () => {
    const r = await cli(["export", runId, "--db", db]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), report);
    const path = join(dir, "out", "exulu.json");
    const w = await cli(["export", runId.slice(0, 12), "--format", "exulu", "--db", db, "-o", path]);
    assert.equal(w.code, 0, w.stderr);
    assert.equal(w.stdout, `exulu export: ${path} (run ${runId})\n`);
    ExuluEvalRunSchema.parse(JSON.parse(readFileSync(path, "utf8")).eval_run);
  });

  test("show prints the run's name, agent, functions, scoring method and description", async () => {
    const r = await cli(["show", runId, "--db", db]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^name Nightly support · agent support-agent · eval functions non_empty, received_files · scoring method contains$/m);
    assert.match(r.stdout, /^after the refund policy change$/m);
  });

  test("an AgentAsJudgeEval run exports as JSON only; an unknown run is exit 2", async () => {
    const evaluation = new AgentAsJudgeEval({ criteria: "c", model: { id: "j", judge: async () => ({ passed: true, reason: "ok" }) }, db });
    const judged = await evaluation.run({ input: "q", output: "a" });
    await evaluation.close();
    const exulu = await cli(["export", judged.runId, "--format", "exulu", "--db", db]);
    assert.equal(exulu.code, 2);
    assert.equal(exulu.stderr, `error: run ${judged.runId} is a standalone AgentAsJudgeEval run, which has no test cases: export it with --format json\n`);
    const json = await cli(["export", judged.runId, "--format", "json", "--db", db]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).evaluations.length, 1);
    const missing = await cli(["export", "no-such-run", "--db", db]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error: no run 'no-such-run' in /);
  });
});

describe("the run flags refuse bad values before anything runs", () => {
  test("an unknown --eval-function lists the suite's; an unknown --scoring-method lists the methods", async () => {
    const fn = await cli(["run", SUITE, "--threads", "0", "--eval-function", "tone"]);
    assert.equal(fn.code, 2);
    assert.equal(fn.stderr, "error: unknown evaluation function 'tone' (the suite registers: received_files, non_empty)\n");
    const method = await cli(["run", SUITE, "--threads", "0", "--scoring-method", "fuzzy"]);
    assert.equal(method.code, 2);
    assert.match(method.stderr, /--scoring-method <method>' argument 'fuzzy' is invalid\. Allowed choices are exact, contains, regex, json, numeric, judge/);
  });

  test("--scoring-method replaces each case's method: an expected output that does not fit it fails its case, saying why", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "evalfleet-exulu-cli-")), "r.json");
    const r = await cli(["run", SUITE, "--threads", "0", "--scoring-method", "numeric", "--json-output", path, "--name", "Weather Query"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const c = JSON.parse(readFileSync(path, "utf8")).cases[0];
    assert.equal(c.error, "expected_output: must be a number (or text holding one) for scoring method 'numeric' (--scoring-method numeric)");
  });
});
