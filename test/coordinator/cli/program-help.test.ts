// `evalfleet --version` and what each command's --help offers: only the options the command uses,
// with the defaults of shared/defaults.ts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../../coordinator/cli/program.ts";
import { DEFAULT_ACK_WAIT_SECONDS, DEFAULT_CONCURRENCY, DEFAULT_DRAIN_SECONDS, DEFAULT_GRACE_SECONDS, DEFAULT_STORE_TIMEOUT_SECONDS } from "../../../shared/defaults.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { ROOT } from "../../support/paths.ts";

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(argv, { stdout, stderr, handleSignals: false });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** The long option names a help text lists. */
function optionsOf(help: string): string[] {
  return [...help.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!);
}

describe("evalfleet --version", () => {
  test("prints only the package version, one line, on stdout, exit 0", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const r = await run(["--version"]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `${version}\n`);
    assert.equal(r.stderr, "");
  });

  test("the root help lists --version", async () => {
    const r = await run(["--help"]);
    assert.equal(r.code, 0);
    assert.ok(optionsOf(r.stdout).includes("--version"), r.stdout);
  });
});

describe("--help lists only the command's own options", () => {
  test("list: the selection, the timeout it shows per case, the JSON case list and the load bound; nothing only a run uses", async () => {
    const r = await run(["list", "--help"]);
    assert.equal(r.code, 0);
    assert.deepEqual(optionsOf(r.stdout), ["--name", "--tag", "--set", "--timeout", "--json-output", "--load-timeout", "--help"]);
  });

  test("list refuses the flags only a run uses (exit 2)", async () => {
    for (const flag of [["--junit", "x.xml"], ["-v"], ["--log-level", "info"]]) {
      const r = await run(["list", "suite.ts", ...flag]);
      assert.equal(r.code, 2, flag.join(" "));
      assert.match(r.stderr, /unknown option/, flag.join(" "));
    }
  });

  test("run keeps every run flag, in the order it always had, with the bounds after their groups and Exulu's run flags after the policy flags", async () => {
    const r = await run(["run", "--help"]);
    assert.equal(r.code, 0);
    assert.deepEqual(optionsOf(r.stdout), [
      "--name", "--tag", "--set", "--timeout", "--json-output", "--junit", "--list", "--verbose", "--log-level",
      "--setup-timeout", "--teardown-timeout", "--max-output-kb",
      "--pass-threshold", "--case-pass-rate", "--confidence", "--repeat", "--run-name", "--description", "--eval-function", "--scoring-method",
      "--concurrency", "--threads", "--grace", "--thread-memory", "--run-id",
      "--db", "--db-timeout", "--fail-on-regression", "--regression-alpha", "--baseline", "--quarantine-flaky", "--max-transcript-kb",
      "--rerun-failed", "--rerun-errors", "--rerun-incomplete", "--last-failed", "--grep", "--sample", "--seed", "--filter-metadata", "--order", "--estimate", "--cache", "--cache-ttl", "--record", "--replay", "--record-missing",
      "--load-timeout", "--retries", "--infra-errors-incomplete", "--budget-usd", "--budget-tokens", "--limit", "--help",
    ]);
  });

  test("the defaults --help shows are shared/defaults.ts's", async () => {
    const run_ = (await run(["run", "--help"])).stdout.replace(/\s+/g, " ");
    assert.match(run_, new RegExp(`--concurrency <n> Cases in flight at once \\(default: ${DEFAULT_CONCURRENCY}\\)`));
    assert.match(run_, new RegExp(`terminated \\(default: ${DEFAULT_GRACE_SECONDS}\\)`));
    assert.match(run_, new RegExp(`final flush \\(default: ${DEFAULT_STORE_TIMEOUT_SECONDS}\\)`));
    const worker = (await run(["worker", "--help"])).stdout.replace(/\s+/g, " ");
    assert.match(worker, new RegExp(`handed back \\(default: ${DEFAULT_DRAIN_SECONDS}\\)`));
    assert.match(worker, /--log-level <level> structured log level on stderr \(choices: .*default: "info"\)/);
    const coordinator = (await run(["coordinator", "run", "--help"])).stdout.replace(/\s+/g, " ");
    assert.match(coordinator, new RegExp(`while a case runs\\) \\(default: ${DEFAULT_ACK_WAIT_SECONDS}\\)`));
  });
});
