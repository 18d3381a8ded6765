// An Exulu export run across processes (issue 19): the JSONL test cases with UI messages and the
// eval_sets list load unchanged on a real coordinator and a real worker (a private nats-server);
// the run's --eval-function and --scoring-method reach the worker in the manifest; the run is
// recorded with its name, description and agent, and `evalfleet export --format exulu` writes a
// record valid against Exulu's eval_runs type. The same run on worker threads gives the same report.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { comparableReport as comparable } from "./harness/comparable-report.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";
import { ExuluEvalRunSchema } from "../test/support/exulu-types.ts";

const SUITE = fixture("exulu-suite.ts");


describe("an Exulu export in distributed mode", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;
  before(() => {
    env = { NATS_URL: nats.url };
  });

  test("--set by id, --eval-function and --scoring-method on a worker: the local run's report; recorded and exported in Exulu's shape", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-exulu-dist-"));
    const db = `sqlite:${join(dir, "results.db")}`;
    const runId = "exulu-dist";
    const args = ["--set", "es-12", "--eval-function", "non_empty", "--scoring-method", "contains"];
    const worker = evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--log-level", "warn"], env);
    const coordinator = evalfleet(["coordinator", "run", SUITE, ...args, "--run-id", runId, "--db", db, "--run-name", "Exulu nightly", "--description", "three test cases", "--json-output", join(dir, "dist.json")], env);
    const local = evalfleet(["run", SUITE, ...args, "--threads", "1", "--json-output", join(dir, "local.json")]);
    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 0, outputOf(c));
    assert.equal((await exitOf(worker, "the worker once its run is over")).code, 0);
    const l = await exitOf(local, "the local run", 90_000);
    assert.equal(l.code, 0, outputOf(l));

    const dist = readJson(join(dir, "dist.json"));
    assert.deepEqual(
      dist.cases.map((x: any) => [x.name, x.passed, x.expectations.expected_output.method, x.expectations.eval_functions.map((f: any) => f.name)]),
      [
        ["refund_after_lookup", true, "contains", ["non_empty"]],
        ["stock_check_failed", true, "contains", ["non_empty"]],
        ["Weather Query", true, "contains", ["non_empty"]],
      ],
    );
    assert.deepEqual(comparable(dist), comparable(readJson(join(dir, "local.json"))));

    const exported = evalfleet(["export", runId, "--format", "exulu", "--db", db]);
    const e = await exitOf(exported, "export", 30_000);
    assert.equal(e.code, 0, outputOf(e));
    const out = JSON.parse(e.stdout);
    const run = ExuluEvalRunSchema.parse(out.eval_run);
    assert.deepEqual(
      [run.id, run.name, run.description, run.agent_id, run.eval_functions, run.scoring_method, run.test_case_ids!.length, (run.config as { mode: string }).mode],
      [runId, "Exulu nightly", "three test cases", "support-agent", ["non_empty"], "contains", 3, "distributed"],
    );
    assert.deepEqual(
      out.results.map((x: any) => x.metadata.exulu.updatedAt),
      ["2026-01-14T16:05:12.000Z", "2026-01-12T09:31:00.000Z", "2026-01-13T08:00:00.000Z"],
    );
  });
});
