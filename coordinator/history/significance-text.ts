import { formatPercentInterval } from "../../shared/stats/interval.ts";
import type { CaseComparison, RunLevelTest, SignificanceResult } from "./significance.ts";

/**
 * The significance-aware comparison as the console shows it (`compare A B`, and
 * `--fail-on-regression` after a run): the verdict, the run-level difference with its interval
 * and p-value, the per-case verdicts, and what was left out and why. Pure; no I/O.
 */

/** A p-value as printed: 3 significant digits, `< 1e-6` below that. */
export function formatP(p: number): string {
  if (!Number.isFinite(p)) return "?";
  if (p < 1e-6) return "< 1e-6";
  return p >= 0.001 ? String(Number(p.toPrecision(3))) : p.toExponential(2);
}

/** A signed difference in percentage points with its interval: `-10.0% [-14.6%, -6.0%]`. */
function signedPercent(t: RunLevelTest): string {
  const sign = t.difference > 0 ? "+" : "";
  return `${sign}${formatPercentInterval(t.difference, t.differenceCi)}`;
}

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

const trials = (s: { passed: number; trials: number }): string => `${s.passed}/${s.trials}`;

/** One case's line: `name (10/10 -> 0/10, p = 1.08e-5)`, with the history when it joined the baseline. */
function caseLine(c: CaseComparison): string {
  const base = c.baseline.trials !== c.a.trials ? ` (${trials(c.baseline)} with history)` : "";
  return `${c.name} (${trials(c.a)}${base} -> ${trials(c.b)}${c.pValue === null ? "" : `, p = ${formatP(c.pValue)}`})`;
}

/** The lines of a comparison (no trailing newline); `names` joined after a count, cut after `limit` (default 20) names. */
export function significanceLines(r: SignificanceResult, limit = 20): string[] {
  const p = r.passRate;
  const lines = [
    `verdict: ${r.verdict} (alpha ${r.alpha}: ${p.alpha} for the pass rate, ${Number(r.perCase.alpha.toPrecision(6))} for the cases)`,
    `pass rate ${percent(p.a)} -> ${percent(p.b)} over ${p.cases} case${p.cases === 1 ? "" : "s"}: difference ${signedPercent(p)}, p = ${formatP(p.pValue)} (${p.method})${p.significant ? ", significant" : ""}`,
  ];
  if (r.score) {
    const s = r.score;
    const num = (x: number): string => String(Number(x.toFixed(3)));
    const ci = s.differenceCi.map((x) => (Number.isFinite(x) ? num(x) : "?")).join(", ");
    lines.push(`mean score ${num(s.a)} -> ${num(s.b)} over ${s.cases} case${s.cases === 1 ? "" : "s"}: difference ${s.difference > 0 ? "+" : ""}${num(s.difference)} [${ci}], p = ${formatP(s.pValue)} (${s.method}; reported, not gated)`);
  }
  lines.push(`per case: Fisher exact, Holm step-down over the ${r.perCase.divisor} of ${r.perCase.compared} compared cases that could be significant (Tarone)`);
  const list = (label: string, cases: CaseComparison[], line: (c: CaseComparison) => string): void => {
    if (cases.length === 0) return;
    const shown = cases.slice(0, limit).map(line).join(", ");
    lines.push(`  ${label} (${cases.length}): ${shown}${cases.length > limit ? `, ... ${cases.length - limit} more` : ""}`);
  };
  const of = (verdict: CaseComparison["verdict"], quarantined = false): CaseComparison[] => r.cases.filter((c) => c.verdict === verdict && c.quarantined === quarantined);
  list("regressed", of("regressed"), caseLine);
  list("improved", of("improved"), caseLine);
  list("changed, not significant", of("changed, not significant"), caseLine);
  list("quarantined (known flaky, not gated)", r.cases.filter((c) => c.quarantined && c.verdict !== "unchanged"), (c) => `${caseLine(c)}: ${c.verdict}`);
  list("checks changed: not compared", r.cases.filter((c) => c.verdict === "checks changed: not compared"), (c) => c.name);
  list("infra error: not compared", r.cases.filter((c) => c.verdict === "infra error: not compared"), (c) => c.name);
  list("not run: not compared", r.cases.filter((c) => c.verdict === "not run: not compared"), (c) => c.name);
  if (r.counts.infraTrials > 0) lines.push(`  infrastructure errors left out: ${r.counts.infraTrials} trial${r.counts.infraTrials === 1 ? "" : "s"}`);
  lines.push(`  unchanged: ${r.counts.unchanged}`);
  return lines;
}
