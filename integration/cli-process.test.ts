// `evalfleet run` as a real child process: Ctrl-C, a case stuck in synchronous code, a crashed
// thread, bad input. Real worker threads, real signals, no mocks.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { outputOf, type Finished } from "./harness/processes.ts";

const root = join(import.meta.dirname, "..");
const bin = join(root, "bin", "evalfleet.mjs");
const fixture = (name: string): string => join(root, "test", "fixtures", name);


function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const done = new Promise<Finished>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("evalfleet run (child process)", () => {
  test("the first Ctrl-C aborts in-flight cases, runs their teardowns, skips the rest, writes the report and exits 3", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sigint-"));
    const report = join(dir, "report.json");
    const { child, done } = start(["run", fixture("slow-suite.ts"), "--concurrency", "2", "--threads", "1", "--json-output", report], { EVALFLEET_TEST_DIR: dir });
    await waitFor(() => readdirSync(dir).filter((f) => f.startsWith("started-")).length === 2, "two cases in flight");
    child.kill("SIGINT");
    const r = await done;
    assert.equal(r.code, 3, outputOf(r));
    const payload = JSON.parse(readFileSync(report, "utf8"));
    assert.equal(payload.summary.total, 6);
    assert.equal(payload.summary.skipped, 4);
    const inFlight = payload.cases.filter((c: { skipped: boolean }) => !c.skipped);
    assert.equal(inFlight.length, 2);
    for (const c of inFlight) {
      assert.match(c.error, /cancelled: suite cancelled while the case was running/);
      const i = c.name.replace("slow_", "");
      assert.ok(existsSync(join(dir, `teardown-${i}`)), `teardown ran for ${c.name}`);
    }
    for (const c of payload.cases.filter((c: { skipped: boolean }) => c.skipped)) {
      assert.equal(c.error, "skipped: suite aborted after cancelled run");
      assert.equal(c.session_id, "");
    }
    assert.match(r.stdout, /run cancelled: 4 cases not run/);
  });

  test("a case spinning in synchronous code is stopped by terminating its thread; its thread-mate is re-run and passes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-stuck-"));
    const report = join(dir, "report.json");
    const { done } = start(["run", fixture("stuck-suite.ts"), "--threads", "1", "--concurrency", "2", "--grace", "0.5", "--json-output", report], { EVALFLEET_TEST_DIR: dir });
    const r = await done;
    assert.equal(r.code, 1, outputOf(r));
    const [spin, mate] = JSON.parse(readFileSync(report, "utf8")).cases;
    assert.equal(spin.name, "spins_forever");
    assert.equal(spin.timed_out, true);
    // The message states how long after the deadline the thread really went (the grace, then the time to stop it).
    const after = Number(/^timeout: exceeded 0\.5s; worker: thread terminated (\d+\.\d)s after the deadline/.exec(spin.error)?.[1]);
    assert.ok(after >= 0.5 && after < 30, spin.error);
    assert.match(spin.error, /cleanup: teardown not run \(thread terminated\)/);
    assert.match(spin.session_id, /^eval-spins_forever-[0-9a-f]{8}$/);
    assert.equal(mate.name, "thread_mate");
    assert.equal(mate.passed, true, mate.error);
    assert.equal(mate.attempts, 2, "the thread-mate ran again on a fresh thread");
    const events = readFileSync(join(dir, "events.log"), "utf8").trim().split("\n");
    assert.equal(events.filter((e) => e === "spin-teardown").length, 0);
    assert.equal(events.filter((e) => e === "patient-start").length, 2);
  });

  test("a thread that runs out of memory costs only its own case", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-oom-"));
    const report = join(dir, "report.json");
    const { done } = start(["run", fixture("oom-suite.ts"), "--threads", "2", "--concurrency", "1", "--thread-memory", "64", "--json-output", report]);
    const r = await done;
    assert.equal(r.code, 1, outputOf(r));
    const cases = JSON.parse(readFileSync(report, "utf8")).cases;
    assert.deepEqual(cases.map((c: { name: string }) => c.name), ["before", "hog", "after"]);
    assert.equal(cases[0].passed, true);
    assert.equal(cases[2].passed, true);
    assert.match(cases[1].error, /worker: thread crashed: ran out of memory/);
  });

  test("200 cases with random durations at concurrency 32 come back in declaration order, each once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-order-"));
    const report = join(dir, "report.json");
    const { done } = start(["run", fixture("many-suite.ts"), "--threads", "2", "--concurrency", "32", "--json-output", report]);
    const r = await done;
    assert.equal(r.code, 0, outputOf(r));
    const cases = JSON.parse(readFileSync(report, "utf8")).cases;
    assert.equal(cases.length, 200);
    assert.deepEqual(cases.map((c: { index: number }) => c.index), Array.from({ length: 200 }, (_, i) => i));
    assert.ok(cases.every((c: { passed: boolean }) => c.passed));
  });

  test("the demo suite of the README passes", async () => {
    const { done } = start(["run", "examples/math-suite.ts"]);
    const r = await done;
    assert.equal(r.code, 0, outputOf(r));
    assert.match(r.stdout, /5\/5 passed/);
  });

  describe("bad input: one clear line, exit 2, no stack trace", () => {
    const cases: Array<[string, string[], RegExp]> = [
      ["a suite file that does not exist", ["run", "no/such/suite.ts"], /^error: no\/such\/suite\.ts: suite file not found$/],
      ["a suite with a syntax error", ["run", fixture("syntax-error-suite.ts")], /^error: .*syntax-error-suite\.ts: syntax error: syntax-error-suite\.ts:2:\d+: ERROR: Expected "}" but found "scorer"$/],
      ["a suite exporting no cases", ["run", fixture("no-cases-suite.ts")], /^error: .*no-cases-suite\.ts: exports no cases: /],
      ["a suite with an invalid case", ["run", fixture("invalid-case-suite.ts")], /^error: .*invalid-case-suite\.ts: .*case 'no_checks' has no checks: set criteria, expectedToolCalls, and\/or scorer$/],
      ["a suite with duplicate names and a non-case, all reported", ["run", fixture("duplicate-suite.ts")], /^error: .*duplicate-suite\.ts: .*item 2 is string 'not a case'.*; duplicate case name 'same' \(items 0 and 1\)/],
      ["a .mjs suite with a misspelt case option", ["run", fixture("slip-case-suite.mjs")], /^error: .*slip-case-suite\.mjs: .*case 'a': unknown option 'scoringMethod' \(did you mean outputScoring\?\)$/],
      ["a .ts suite with a misspelt defineSuite option", ["run", fixture("slip-suite-option.ts")], /^error: .*slip-suite-option\.ts: suite 'math': unknown option 'defaultTimout' \(did you mean defaultTimeout\?\)$/],
      ["a .mjs suite with a misspelt dataset() option", ["run", fixture("slip-dataset-suite.mjs")], /^error: .*slip-dataset-suite\.mjs: dataset 'data\/support\.jsonl': unknown option 'scoringMethod' \(did you mean scoring\?\)$/],
      ["an unknown flag", ["run", fixture("basic-suite.ts"), "--frobnicate"], /^error: unknown option '--frobnicate'$/],
      ["a bad flag value", ["run", fixture("basic-suite.ts"), "--concurrency", "0"], /--concurrency must be a whole number >= 1, got '0'$/],
      ["an unknown tag", ["run", fixture("basic-suite.ts"), "--tag", "nope"], /^no cases selected \(name=None, tag='nope'\)\n {2}available: alpha, beta, gamma$/],
    ];
    for (const [what, args, expected] of cases) {
      test(what, async () => {
        const r = await start(args).done;
        assert.equal(r.code, 2, outputOf(r));
        assert.match(r.stderr.trim(), expected);
        assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
        assert.equal(r.stdout, "", "nothing on stdout");
      });
    }
    test("the issue's other slips of a .mjs suite: tag for tags, timeout for timeoutSeconds", async () => {
      for (const [slip, near] of [["tag", "tags"], ["timeout", "timeoutSeconds"]]) {
        const r = await start(["run", fixture("slip-case-suite.mjs"), "--tag", "smoke"], { EVALFLEET_SLIP: slip! }).done;
        assert.equal(r.code, 2, outputOf(r));
        assert.match(r.stderr.trim(), new RegExp(`^error: .*slip-case-suite\\.mjs: .*case 'a': unknown option '${slip}' \\(did you mean ${near}\\?\\)$`), "the load fails before selection says 'no cases selected'");
        assert.equal(r.stdout, "");
      }
    });
  });
});
