// Adaptive repeats end to end (issue 28): `evalfleet run` of bench/adaptive-suite.ts (400 cases,
// the verdict simulation's mix of pass probabilities) with `--repeat 3..20 --case-pass-rate 0.8`
// and with a fixed `--repeat 20 --case-pass-rate 0.8`, side by side. Prints one JSON line:
// - adaptive_cli_trials_ratio: trials the adaptive run spent over the fixed run's (the simulation's
//   `adaptive_trials_ratio` is the same figure through the same rule without the CLI);
// - adaptive_cli_agreement: the share of cases both runs gave the same verdict (independent runs:
//   compare with the simulation's `fixed_repeat_self_agreement`, the noise two fixed runs share);
// - adaptive_cli_undecided_share, adaptive_cli_seconds, fixed_cli_seconds.
//
//   node --import tsx bench/adaptive-cli.ts
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "bin", "evalfleet.mjs");
const suite = join(root, "bench", "adaptive-suite.ts");
const dir = mkdtempSync(join(tmpdir(), "evalfleet-adaptive-cli-"));

interface Report {
  summary: { adaptive_repeats: { trials_spent: number; undecided_cases: number } | null; total: number };
  cases: Array<{ name: string; passed: boolean; repeats: unknown[] }>;
}

function run(repeat: string): { report: Report; seconds: number } {
  const json = join(dir, `${repeat.replace(/\W/g, "_")}.json`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, "run", suite, "--repeat", repeat, "--case-pass-rate", "0.8", "--concurrency", "50", "--json-output", json, "--log-level", "error"], { cwd: root, encoding: "utf8" });
  const seconds = (performance.now() - t0) / 1000;
  // Exit 1: some cases fail, as the flaky ones should.
  if (r.status !== 0 && r.status !== 1) throw new Error(`evalfleet run --repeat ${repeat} exited ${r.status}: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
  return { report: JSON.parse(readFileSync(json, "utf8")) as Report, seconds };
}

const adaptive = run("3..20");
const fixed = run("20");
const spent = adaptive.report.summary.adaptive_repeats!.trials_spent;
const fixedTrials = fixed.report.cases.reduce((n, c) => n + c.repeats.length, 0);
const agree = adaptive.report.cases.filter((c, i) => c.passed === fixed.report.cases[i]!.passed).length;
console.log(
  JSON.stringify({
    adaptive_cli_cases: adaptive.report.summary.total,
    adaptive_cli_trials_ratio: spent / fixedTrials,
    adaptive_cli_agreement: agree / adaptive.report.cases.length,
    adaptive_cli_undecided_share: adaptive.report.summary.adaptive_repeats!.undecided_cases / adaptive.report.summary.total,
    adaptive_cli_seconds: adaptive.seconds,
    fixed_cli_seconds: fixed.seconds,
  }),
);
