import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { meets, renderBenchReadme, renderFigures, type BenchResults } from "../../bench/readme.ts";
import { fixture } from "../support/paths.ts";

const results = JSON.parse(readFileSync(fixture("bench/results.json"), "utf8")) as Record<string, unknown>;
const TEMPLATE = "# Bench\n\nFrom {{machine}}.\n\n{{figures}}\n\n## Scaling\n\n{{scaling}}\n";

/** The table row whose first cell is `label`, as its cells. */
function row(markdown: string, label: string): string[] {
  const line = markdown.split("\n").find((l) => l.startsWith(`| ${label} |`));
  assert.ok(line, `no row '${label}' in:\n${markdown}`);
  return line
    .slice(2, -2)
    .split(" | ")
    .map((c) => c.trim());
}

test("renders the machine, each figure with its ratio to the baseline, its target and whether it was met", () => {
  const md = renderBenchReadme(results, TEMPLATE);
  assert.match(md, /^From a quick run \(`--quick`: one run of each scenario\) of 10,000 trivial cases, measured 2026-12-01 on 2 cores \(Test CPU\), Node 20\.20\.2, nats-server 2\.9\.10\.$/m);
  assert.deepEqual(row(md, "baseline (p-limit, direct calls)"), ["baseline (p-limit, direct calls)", "200,000 cases/s", "1.000x", "", ""]);
  assert.deepEqual(row(md, "`runCases` inline"), ["`runCases` inline", "50,000 cases/s", "0.250x", "", ""]);
  assert.deepEqual(row(md, "`evalfleet run`, 2 threads, 10,000 cases including thread start-up"), [
    "`evalfleet run`, 2 threads, 10,000 cases including thread start-up",
    "12,000 cases/s",
    "0.060x",
    "10,000/s",
    "yes",
  ]);
  // Below its target: said so, in bold.
  assert.deepEqual(row(md, "`coordinator run`, 1 worker (durable path)").slice(1), ["3,500 cases/s", "0.018x", "4,000/s", "**no**"]);
  assert.deepEqual(row(md, "5,000 cases, 1,000 in flight").slice(1), ["0.900 (2 workers; 9,000 cases/s, 0.20 ms CPU per case in all)", "0.85", "yes"]);
  // An upper bound: 0.31 ms against at most 0.07 ms is missed; 1.5 s against at most 2 s is met.
  assert.deepEqual(row(md, "coordinator").slice(1), ["0.310 ms", "0.07 ms", "**no**"]);
  assert.deepEqual(row(md, "SIGINT to the final report, 1,000 cases running").slice(1), ["1.50 s", "2 s", "yes"]);
  assert.deepEqual(row(md, "`evalfleet --help`, wall").slice(1), ["0.25 s", "0.3 s", "yes"]);
});

test("figures the run lacks are left out; a key no row names is still shown", () => {
  const md = renderBenchReadme(results, TEMPLATE);
  assert.doesNotMatch(md, /steady state/);
  assert.doesNotMatch(md, /2 workers \(durable path\)/);
  assert.doesNotMatch(md, /### Memory/);
  assert.doesNotMatch(md, /NaN|undefined/);
  assert.match(md, /### Other figures/);
  assert.deepEqual(row(md, "`brand_new_figure_ms`"), ["`brand_new_figure_ms`", "42"]);
  assert.match(md, /## Scaling\n\nThis run has no scaling-model figures\./);
});

test("each placeholder is filled; nothing of the template is lost", () => {
  const template = "intro {{machine}}\n{{figures}}\nmiddle\n{{scaling}}\n{{figures}}\nend\n";
  const md = renderBenchReadme(results, template);
  assert.doesNotMatch(md, /\{\{/);
  assert.match(md, /^intro a quick run \(`--quick`/m);
  assert.equal(md.split("### Throughput (trivial cases)").length, 3);
  assert.ok(md.endsWith("\nend\n"));
});

test("targets: at least, at most, and the bound itself meets", () => {
  assert.equal(meets(4000, { op: ">=", value: 4000, text: "" }), true);
  assert.equal(meets(3999, { op: ">=", value: 4000, text: "" }), false);
  assert.equal(meets(0.3, { op: "<=", value: 0.3, text: "" }), true);
  assert.equal(meets(0.31, { op: "<=", value: 0.3, text: "" }), false);
});

test("results that are not what bench/run.ts writes are refused, naming the field", () => {
  const { machine: _machine, ...noMachine } = results;
  assert.throws(() => renderBenchReadme(noMachine, TEMPLATE), /bench\/results\.json: machine: /);
  assert.throws(() => renderBenchReadme({ ...results, measured_at: 7 }, TEMPLATE), /bench\/results\.json: measured_at: /);
  assert.throws(() => renderBenchReadme(results, "no placeholder"), /no \{\{figures\}\} placeholder/);
  // A cell cannot break its table.
  assert.match(renderFigures({ ...(results as BenchResults), odd: "a|b" }), /\| `odd` \| "a\\\|b" \|/);
});

test("the verdict simulation's figures get their section, each against issue 28's target", () => {
  const verdicts = {
    verdict_cases: 2000,
    verdict_pairs: 1000,
    verdict_gate_repeat: 10,
    gate_false_alarm_rate: 0.06,
    gate_false_alarm_rate_raw_flips: 1,
    gate_power: 0.95,
    gate_power_raw_flips: 1,
    gate_power_single_trial: 0.15,
    gate_false_alarm_rate_single_trial: 0.01,
    gate_false_alarm_rate_raw_flips_single_trial: 1,
    adaptive_trials_ratio: 0.35,
    adaptive_confidence: 0.75,
    adaptive_agreement: 0.9877,
    adaptive_undecided_share: 0.045,
    verdict_simulation_s: 5,
  };
  const md = renderBenchReadme({ ...results, ...verdicts }, TEMPLATE);
  assert.match(md, /### Verdicts under nondeterminism/);
  // Above its bound of 0.05: missed, in bold.
  assert.deepEqual(row(md, "gate false alarms: 1,000 pairs of runs of the same agent, 2,000 cases, --repeat 10: share called regressed").slice(1), ["0.060", "0.05", "**no**"]);
  assert.deepEqual(row(md, "gate power: the candidate drops 40 cases by 0.5: share called regressed").slice(2), ["0.9", "yes"]);
  assert.deepEqual(row(md, "its verdicts that are the fixed run's, on the same trials").slice(1), ["0.9877 (4.5% of cases ran to MAX undecided)", "0.95", "yes"]);
  // Rows whose figures the run lacks are left out; the simulation's duration is not a figure.
  assert.doesNotMatch(md, /stopping interval at 0.95/);
  assert.doesNotMatch(md, /verdict_simulation_s/);
});
