// Data-driven suites across processes (issue 8): real `evalfleet coordinator` and `evalfleet worker`
// processes on a private nats-server, and a real `evalfleet run` on worker threads. Every process
// loads the dataset itself and must derive the same cases and fingerprint; repeats, eval sets and
// the pass threshold give the same report in both modes.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { comparableReport as comparable } from "./harness/comparable-report.ts";
import { evalfleet, exitOf, fixture, readJson, root } from "./harness/processes.ts";

const SUITE = fixture("dataset-suite.ts");
const FLAKY = fixture("flaky-data-suite.ts");
const tmp = (what: string): string => mkdtempSync(join(tmpdir(), `evalfleet-dsdist-${what}-`));


describe("data-driven suites in distributed mode", () => {
  const nats = useNatsServer();
  let env: Record<string, string>;

  before(async () => {
    env = { NATS_URL: nats.url };
  });

  test("--set, --repeat and --pass-threshold on two workers: the local run's report, exit 0 above the threshold", async () => {
    const dir = tmp("parity");
    const runId = "dataset-parity";
    const args = ["--set", "smoke", "--set", "tools", "--repeat", "2", "--pass-threshold", "0.8"];
    const workers = [1, 2].map(() => evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "2", "--log-level", "warn"], env));
    const coordinator = evalfleet(["coordinator", "run", SUITE, ...args, "--run-id", runId, "--json-output", join(dir, "dist.json")], env);
    const local = evalfleet(["run", SUITE, ...args, "--threads", "2", "--json-output", join(dir, "local.json")]);

    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    const l = await exitOf(local, "the local run", 90_000);
    assert.equal(l.code, 0, l.stdout + l.stderr);
    for (const w of workers) assert.equal((await exitOf(w, "a worker whose run is over")).code, 0);

    const dist = readJson(join(dir, "dist.json"));
    const loc = readJson(join(dir, "local.json"));
    assert.deepEqual(
      dist.cases.map((x: { name: string }) => x.name),
      ["capital_exact", "multi_turn_contains", "uses_factorial", "team_multiplies", "csv_contains", "csv_tools_missing"],
    );
    assert.deepEqual(dist.summary.pass_threshold, 0.8);
    assert.equal(dist.summary.pass_rate, 5 / 6);
    assert.equal(dist.summary.repeat, 2);
    for (const x of dist.cases) assert.equal(x.repeats.length, 2, `${x.name} ran twice`);
    assert.deepEqual(dist.cases.find((x: { name: string }) => x.name === "team_multiplies").expectations, {
      expected_agent_tools: { passed: true, reason: "members ran: calculator/multiply" },
    });
    assert.deepEqual(comparable(dist), comparable(loc));
    assert.deepEqual(Object.keys(dist.cases[0]), Object.keys(loc.cases[0]), "the same keys in the same order");
    assert.match(c.stdout, /pass rate 83\.3%, threshold 80%: met/);
  });

  test("repeats of a flaky case are counted across worker processes; below the threshold the coordinator exits 1", async () => {
    const dir = tmp("flaky");
    const runId = "dataset-flaky";
    const steer = { ...env, EVALFLEET_TEST_DIR: dir };
    const workers = [1, 2].map(() => evalfleet(["worker", FLAKY, "--run", runId, "--threads", "1", "--concurrency", "3", "--log-level", "warn"], steer));
    const coordinator = evalfleet(["coordinator", "run", FLAKY, "--repeat", "3", "--pass-threshold", "0.5", "--run-id", runId, "--json-output", join(dir, "report.json")], steer);
    const c = await exitOf(coordinator, "the coordinator", 90_000);
    assert.equal(c.code, 1, c.stdout + c.stderr);
    for (const w of workers) {
      const e = await exitOf(w, "a worker whose run is over");
      assert.equal(e.code, 0, e.stderr);
      assert.doesNotMatch(e.stderr, /handing the case back/, "repeats never overfill the worker's pool");
    }
    const report = readJson(join(dir, "report.json"));
    assert.deepEqual(
      report.cases.map((x: { name: string; pass_rate: number; passed: boolean }) => [x.name, x.pass_rate, x.passed]),
      [
        ["stable", 1, true],
        ["flaky", 2 / 3, false],
        ["always_wrong", 0, false],
      ],
    );
    assert.equal(readdirSync(join(dir, "flaky")).length, 3, "the flaky prompt ran three times in all");
    assert.equal(report.cases[1].attempts, 1, "delivered once");
    assert.equal(report.summary.pass_rate, 1 / 3);
    assert.match(c.stdout, /pass rate 33\.3%, threshold 50%: not met/);
  });

  test("a worker whose copy of the dataset differs refuses the run; an identical copy elsewhere serves it", async () => {
    const dir = tmp("fingerprint");
    const runId = "dataset-fingerprint";
    // Two copies of the suite and its data: one identical, one with one expected output changed.
    const copy = (name: string, edit: (jsonl: string) => string): string => {
      const at = join(dir, name);
      mkdirSync(at);
      cpSync(join(root, "test", "fixtures", "data"), join(at, "data"), { recursive: true });
      const agents = pathToFileURL(join(root, "test", "fixtures", "data-agents.ts")).href;
      writeFileSync(join(at, "suite.mts"), readFileSync(SUITE, "utf8").replace('"evalfleet"', JSON.stringify(pathToFileURL(join(root, "index.ts")).href)).replace('"./data-agents.ts"', JSON.stringify(agents)));
      const jsonl = join(at, "data", "support.jsonl");
      writeFileSync(jsonl, edit(readFileSync(jsonl, "utf8")));
      return join(at, "suite.mts");
    };
    const same = copy("same", (t) => t);
    const changed = copy("changed", (t) => t.replace('"expected_output": "Paris", "tags": ["smoke"]', '"expected_output": "Lyon!", "tags": ["smoke"]'));
    const refusing = evalfleet(["worker", changed, "--run", runId, "--threads", "1", "--log-level", "warn"], env);
    const coordinator = evalfleet(["coordinator", "run", SUITE, "--set", "smoke", "--run-id", runId, "--json-output", join(dir, "report.json")], env);
    const r = await exitOf(refusing, "the worker with the changed dataset", 60_000);
    assert.equal(r.code, 2, `a worker that refuses its run exits 2: ${r.stderr}`);
    assert.match(r.stderr, /with fingerprint [0-9a-f]{12}, this worker loaded .*changed\/suite\.mts with fingerprint [0-9a-f]{12}/);
    const serving = evalfleet(["worker", same, "--run", runId, "--threads", "1", "--log-level", "warn"], env);
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /refused the run/);
    assert.equal((await exitOf(serving, "the worker with the identical copy")).code, 0);
    assert.equal(readJson(join(dir, "report.json")).summary.passed, 3);
  });

  test("a worker given an invalid dataset exits 2 at start, listing every bad row", async () => {
    const w = await exitOf(evalfleet(["worker", fixture("invalid-dataset-suite.ts"), "--run", "never", "--log-level", "warn"], env), "the worker");
    assert.equal(w.code, 2, w.stdout + w.stderr);
    assert.match(w.stderr, /3 problems in the suite's data, nothing was run:\n {2}test\/fixtures\/data\/invalid\.jsonl:2: inputs: is required/);
    assert.match(w.stderr, /invalid\.jsonl:3: expected_ouput: unknown field \(did you mean expected_output\?\)/);
    assert.match(w.stderr, /invalid\.jsonl:4: name: duplicate case name 'fine'/);
    assert.doesNotMatch(w.stderr, /\n\s+at /, "no stack trace");
  });
});
