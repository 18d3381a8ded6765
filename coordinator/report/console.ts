import type { Writable } from "node:stream";
import type cliProgress from "cli-progress";
import { progressBars } from "./lazy-deps.ts";
import { renderGrid } from "./grid-table.ts";
import pc from "picocolors";
import type { Case } from "../../shared/case/case.ts";
import type { RunEvent } from "../../shared/case/agent.ts";
import type { CaseResult, SuiteResult } from "../../shared/result/result.ts";
import type { SuiteHooks } from "../../shared/hooks.ts";
import { safeText } from "../../shared/text.ts";
import { describeExpectation } from "../../shared/case/tool-call-matchers.ts";
import { colorAllowedBy, processEnvironment } from "../../shared/environment.ts";
import { shortDuration, type HistoryEta } from "../run/run-eta.ts";
import { formatPercentInterval } from "../../shared/stats/interval.ts";
import type { RunStatistics } from "../../shared/result/run-statistics.ts";

/**
 * Human output of the CLI: a live progress display on a terminal, one line per finished case
 * otherwise, the summary table and the case list. Every model- or user-derived string is cleaned
 * of control characters, so an output cannot restyle or hijack the terminal.
 */

/** Above this many cases the summary table lists only the cases that did not pass. */
export const SUMMARY_TABLE_LIMIT = 100;
/** Error lines printed under the summary, at most. */
const ERROR_LINES_LIMIT = 50;
const DASH = "\u2014";
/** Table borders without a rule between rows. */
/** Options of {@link ConsoleReporter}. */
export interface ConsoleReporterOptions {
  out: Writable;
  /** Show a live progress bar (a terminal). Default: `out.isTTY`. */
  live?: boolean;
  /** Colors. Default: on for a terminal unless NO_COLOR is set. */
  color?: boolean;
  /** Print the response, tools and verdicts of every case. */
  verbose?: boolean;
  /** Cases selected (for the progress display). */
  total: number;
  /** An ETA from history (coordinator/run/run-eta.ts): shown instead of the rate-based one. Default none. */
  eta?: HistoryEta | null;
}

/** Renders a case's progress and results; its hooks plug into the runner. */
export class ConsoleReporter {
  readonly #out: Writable;
  readonly #verbose: boolean;
  readonly #c: ReturnType<typeof pc.createColors>;
  readonly #total: number;
  #multibar: cliProgress.MultiBar | undefined;
  #bar: cliProgress.SingleBar | undefined;
  #running = 0;
  #passed = 0;
  #failed = 0;
  #done = 0;
  #extra = "";
  readonly #eta: HistoryEta | null;

  constructor(options: ConsoleReporterOptions) {
    this.#out = options.out;
    this.#eta = options.eta ?? null;
    this.#verbose = options.verbose ?? false;
    this.#total = options.total;
    const tty = Boolean((options.out as { isTTY?: boolean }).isTTY);
    this.#c = pc.createColors(options.color ?? (tty && colorAllowedBy(processEnvironment())));
    if (options.live ?? tty) {
      this.#multibar = new (progressBars().MultiBar)(
        {
          stream: options.out as NodeJS.WritableStream,
          format: `{bar} {value}/{total} done | {running} running | {passed} passed | {failed} failed | {duration_formatted} elapsed | ETA {${this.#eta ? "history_eta" : "eta_formatted"}}{extra}`,
          hideCursor: true,
          clearOnComplete: true,
          stopOnComplete: false,
          etaBuffer: 50,
          fps: 10,
          noTTYOutput: false,
        },
        progressBars().Presets.shades_classic,
      );
      this.#bar = this.#multibar.create(this.#total, 0, this.#payload());
    }
  }

  /** Presentation hooks for the runner. */
  hooks(): Required<SuiteHooks> {
    return {
      onCaseStart: (c: Case) => {
        this.#eta?.started(c.name);
        this.#running++;
        this.#update();
      },
      onRunEvent: (c: Case, event: RunEvent) => {
        if (this.#verbose) this.#print([this.#c.dim(`  \u21b3 ${safeText(c.name)}: ${describeEvent(event)}`)]);
      },
      onCaseEnd: (c: Case, result: CaseResult) => {
        this.#eta?.ended(c.name);
        if (!result.skipped) this.#running = Math.max(0, this.#running - 1);
        this.#done++;
        if (result.passed) this.#passed++;
        else this.#failed++;
        this.#print(this.#caseLines(c, result));
        this.#update();
      },
    };
  }

  /** Stops the live display (call it in a `finally`: Ctrl-C must not leave a hidden cursor). */
  stop(): void {
    if (this.#multibar) {
      this.#multibar.stop();
      this.#multibar = undefined;
      this.#bar = undefined;
    }
  }

  /** A line to show above the live display (or plainly). */
  note(line: string): void {
    this.#print([line]);
  }

  #payload(): Record<string, number | string> {
    return {
      running: this.#running,
      passed: this.#passed,
      failed: this.#failed,
      extra: this.#extra ? ` | ${this.#extra}` : "",
      ...(this.#eta ? { history_eta: `${shortDuration(this.#eta.secondsLeft())} (history)` } : {}),
    };
  }

  /** Extra text for the live display (e.g. which workers are busy); ignored without a live display. */
  status(text: string): void {
    this.#extra = safeText(text);
    this.#update();
  }

  #update(): void {
    this.#bar?.update(this.#done, this.#payload());
  }

  #print(lines: string[]): void {
    const text = lines.join("\n") + "\n";
    if (this.#multibar) this.#multibar.log(text);
    else this.#out.write(text);
  }

  #caseLines(c: Case, r: CaseResult): string[] {
    const k = this.#c;
    const name = safeText(r.name);
    if (r.skipped) return [`${k.yellow("SKIP")}  ${name}  ${k.dim(safeText(r.error ?? ""))}`];
    const status = r.passed ? k.green("PASS") : k.red("FAIL");
    // A rule below every trial is said, so a PASS with failed runs reads as what it is.
    const rule = r.casePassRate !== null && r.casePassRate < 1 ? ` (needs ${percent(r.casePassRate)})` : "";
    const undecided = r.adaptive && !r.adaptive.decided ? ", undecided" : "";
    const runs = r.repeats && r.repeats.length > 0 ? ` \u00b7 ${r.repeats.filter((x) => x.passed).length}/${r.repeats.length} runs passed${rule}${undecided}` : "";
    const lines = [`${status}  ${name}  ${k.dim(`${safeText(c.componentId)} \u00b7 ${r.durationSeconds}s${runs}`)}`];
    if (this.#verbose) {
      lines.push("", "Response", safeText(r.output) || "(empty)");
      if (r.toolsCalled.length > 0) lines.push("", `tools fired: ${r.toolsCalled.map(safeText).join(", ")}`);
      if (r.judgePassed !== null) {
        lines.push(`Judge: ${r.judgePassed ? "PASS" : "FAIL"}${r.judgeScore !== null ? ` (score ${r.judgeScore})` : ""}`);
        if (r.judgeReason) lines.push(`  ${safeText(r.judgeReason)}`);
      }
      if (r.reliabilityPassed !== null) {
        lines.push(`Reliability: ${r.reliabilityPassed ? "PASS" : "FAIL"}  expected: ${(c.expectedToolCalls ?? []).map((e) => safeText(describeExpectation(e))).join(", ")}`);
        if (r.reliability && r.reliability.missingToolCalls.length > 0) lines.push(`  missing: ${r.reliability.missingToolCalls.map(safeText).join(", ")}`);
        if (r.reliability && r.reliability.failedToolCalls.length > 0) lines.push(`  unexpected: ${r.reliability.failedToolCalls.map(safeText).join(", ")}`);
        if (r.reliability?.reason) lines.push(`  ${safeText(r.reliability.reason)}`);
      }
      if (r.score) lines.push(`Score: ${r.score.value} ${r.score.passed ? "PASS" : "FAIL"}${r.score.reason ? `  ${safeText(r.score.reason)}` : ""}`);
      for (const [check, v] of expectationLines(r)) lines.push(`${check}: ${v.passed ? "PASS" : "FAIL"}  ${safeText(v.reason)}`);
      lines.push(k.dim(`session: ${safeText(r.sessionId)} \u00b7 ${r.durationSeconds}s`));
    }
    // A failed data-driven or trajectory check says why even without -v: the row's author needs the reason.
    if (!this.#verbose && r.reliabilityPassed === false && r.reliability?.reason) lines.push(`  ${k.red("reliability:")} ${safeText(r.reliability.reason)}`);
    if (!this.#verbose) for (const [check, v] of expectationLines(r)) if (!v.passed) lines.push(`  ${k.red(`${check}:`)} ${safeText(v.reason)}`);
    if (r.error) lines.push(`  ${k.red("error:")} ${safeText(r.error)}`);
    return lines;
  }
}

/** The data-driven verdicts of a result, labelled as the dataset fields are (`expected_output (contains)`). */
function expectationLines(r: CaseResult): [string, { passed: boolean; reason: string }][] {
  const e = r.expectations;
  if (!e) return [];
  const out: [string, { passed: boolean; reason: string }][] = [];
  if (e.expectedOutput) out.push([`expected_output (${e.expectedOutput.method})`, e.expectedOutput]);
  if (e.expectedAgentTools) out.push(["expected_agent_tools", e.expectedAgentTools]);
  if (e.expectedKnowledgeSources) out.push(["expected_knowledge_sources", e.expectedKnowledgeSources]);
  for (const f of e.evalFunctions ?? []) out.push([`eval_function ${f.name}`, f]);
  return out;
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1).replace(/\.0$/, "")}%`;
}

/** Prints the "Eval Summary" table, the pass count and one line per errored case. */
export function printSummary(out: Writable, suite: SuiteResult, options: { color?: boolean } = {}): void {
  const k = pc.createColors(options.color ?? false);
  const check = (v: boolean | null): string => (v === null ? DASH : v ? "PASS" : "FAIL");
  // One walk, keeping only the rows shown (a big run's failing ones): a spooled run's results are read back, not held.
  const total = suite.total;
  const shown: CaseResult[] = [];
  let expected = false;
  for (const r of suite.cases()) {
    // The data-driven checks get a column only in runs that have them: other suites keep Agno's table.
    if (r.expectations) expected = true;
    if (total <= SUMMARY_TABLE_LIMIT || !r.passed) shown.push(r);
  }
  const head = ["Case", "Judge", "Reliability", "Scorer", ...(expected ? ["Expected"] : []), "Status", "Time"];
  const rows: string[][] = [];
  for (const r of shown) {
    const status = r.skipped ? "SKIP" : r.passed ? "PASS" : "FAIL";
    const verdicts = expectationLines(r).map(([, v]) => v.passed);
    const expectedCell = expected ? [verdicts.length === 0 ? DASH : check(verdicts.every(Boolean))] : [];
    rows.push([safeText(r.name), check(r.judgePassed), check(r.reliabilityPassed), r.score ? check(r.score.passed) : DASH, ...expectedCell, status, `${r.durationSeconds}s`]);
  }
  const lines: string[] = ["", "Eval Summary"];
  if (shown.length > 0) lines.push(renderGrid(head, rows));
  if (shown.length < total) lines.push(k.dim(`(${total - shown.length} passing cases not listed)`));
  let tally = `\n${suite.passed}/${suite.total} passed`;
  if (suite.failed > 0) tally += `, ${suite.failed} failed`;
  if (suite.skipped > 0) tally += ` (${suite.skipped} skipped)`;
  // Failures of the infrastructure (a provider's 429/5xx, a lost connection or worker) are not regressions.
  const infra = suite.infraErrors;
  if (infra > 0) tally += `, ${infra} infra error${infra === 1 ? "" : "s"}`;
  tally += ` in ${suite.durationSeconds}s`;
  const verdict = suite.thresholdMet ?? suite.status === "PASS";
  lines.push(verdict ? k.green(tally) : k.red(tally));
  const stats = suite.statistics;
  if (suite.total > 0) lines.push(intervalLine(stats));
  for (const [label, m, digits] of [["judge score", stats.judgeScore, 1], ["scorer value", stats.scoreValue, 2]] as const) {
    if (m) lines.push(`${label} ${m.mean.toFixed(digits)} [${m.interval[0].toFixed(digits)}, ${m.interval[1].toFixed(digits)}] (mean over ${m.cases} case${m.cases === 1 ? "" : "s"})`);
  }
  if (suite.passThreshold !== null) {
    lines.push(`pass rate ${percent(suite.passRate)}, threshold ${percent(suite.passThreshold)}: ${suite.thresholdMet ? "met" : "not met"}`);
  }
  // Tokens and cost, when any model call reported usage; unknown prices are said, not hidden.
  const usage = suite.usage;
  if (usage.tokens.total > 0 || usage.unknownCostCases > 0) {
    const unknown = usage.unknownCostCases > 0 ? ` (${usage.unknownCostCases} case${usage.unknownCostCases === 1 ? "" : "s"} of unknown cost${suite.budget?.usd !== null && suite.budget?.usd !== undefined ? ", counted as $0 against --budget-usd" : ""})` : "";
    lines.push(`tokens ${usage.tokens.total} (agent ${usage.tokens.agent}, judge ${usage.tokens.judge}), cost $${usage.costUsd.toFixed(4)}${unknown}`);
  }
  if (suite.budget?.exhausted) lines.push(`budget exhausted (${[suite.budget.usd !== null ? `$${suite.budget.usd}` : null, suite.budget.tokens !== null ? `${suite.budget.tokens} tokens` : null].filter(Boolean).join(", ")}): the cases not started were skipped`);
  const atK = suite.passAtK;
  // pass^k beside pass@k: the chance all k trials pass, at the largest k every case ran.
  const hatK = stats.passHatK;
  const kHat = hatK ? Object.keys(hatK).length : 0;
  const hat = hatK && kHat > 0 ? `, pass^${kHat} ${percent(hatK[String(kHat)] ?? 0)}` : "";
  const adaptive = suite.adaptiveRepeats;
  if (atK) lines.push(`${adaptive ? "at least " : ""}${suite.repeat} runs per case: pass@1 ${percent(atK["1"] ?? 0)}, pass@${suite.repeat} ${percent(atK[String(suite.repeat)] ?? 0)}${hat}`);
  if (adaptive) {
    const undecided = adaptive.undecidedCases > 0 ? `; ${adaptive.undecidedCases} case${adaptive.undecidedCases === 1 ? "" : "s"} undecided (judged on the point estimate)` : "";
    lines.push(
      `adaptive repeats ${adaptive.min}..${adaptive.max}: ${adaptive.trialsSpent} trials run of ${adaptive.trialsMax} (${adaptive.trialsSaved} saved, ${percent(adaptive.trialsMax === 0 ? 0 : adaptive.trialsSaved / adaptive.trialsMax)})${undecided}`,
    );
  }
  const cache = suite.modelCache;
  if (cache) lines.push(`model cache: ${cache.hits} hit${cache.hits === 1 ? "" : "s"}, ${cache.misses} miss${cache.misses === 1 ? "" : "es"} (hits made no model call)`);
  // Each case that did not pass says why in one line, without -v: what a CI log needs.
  let failed = 0;
  for (const r of suite.cases()) {
    const reason = r.passed ? null : firstReason(r);
    if (reason === null) continue;
    if (++failed <= ERROR_LINES_LIMIT) lines.push(`  ${safeText(r.name)}: ${oneLine(reason)}`);
  }
  if (failed > ERROR_LINES_LIMIT) lines.push(`  ... and ${failed - ERROR_LINES_LIMIT} more (see the JSON report)`);
  out.write(lines.join("\n") + "\n");
}

/**
 * `pass rate 95.0% [91.0%, 97.3%] (95% confidence)`: the run's pass rate with its interval; with
 * repeats the rate is the mean of the cases' pass rates, and the line says so.
 */
export function intervalLine(s: RunStatistics): string {
  const how = s.method === "clustered" ? "mean of per-case pass rates, cases as clusters; " : "";
  return `pass rate ${formatPercentInterval(s.trialPassRate, s.passRateInterval)} (${how}${percent(s.confidence)} confidence)`;
}

/** Text on one line: control characters made safe, line breaks as spaces. */
function oneLine(text: string): string {
  return safeText(text.replace(/\s*[\r\n]+\s*/g, " ")).trim();
}

/**
 * Why a case did not pass, in one line: its errors (they come first, as they decide the verdict),
 * else the first failed check's reason (judge, reliability, scorer, data-driven checks). Null for
 * a case that has no recorded reason.
 */
export function firstReason(r: CaseResult): string | null {
  if (r.error) return r.error;
  if (r.judgePassed === false) return `judge: ${r.judgeReason || "failed"}`;
  if (r.reliabilityPassed === false) {
    if (r.reliability?.reason) return `reliability: ${r.reliability.reason}`;
    // A result from an evalfleet before the trajectory check's reasons.
    const missing = r.reliability?.missingToolCalls ?? [];
    const unexpected = r.reliability?.failedToolCalls ?? [];
    const parts = [missing.length > 0 ? `missing ${missing.join(", ")}` : "", unexpected.length > 0 ? `unexpected ${unexpected.join(", ")}` : ""].filter(Boolean);
    return `reliability: ${parts.join("; ") || "failed"}`;
  }
  if (r.score && !r.score.passed) return `scorer: ${r.score.reason || `score ${r.score.value}`}`;
  for (const [check, v] of expectationLines(r)) if (!v.passed) return `${check}: ${v.reason}`;
  return null;
}

/** Prints the "Eval Cases" table of `--list`. */
export function printCaseList(out: Writable, cases: readonly Case[], defaultTimeout: number): void {
  const rows = cases.map((c) => [safeText(c.name), safeText(c.componentId), c.tags.map(safeText).join(", "), `${c.resolveTimeout(defaultTimeout)}s`]);
  out.write(`Eval Cases\n${renderGrid(["Case", "Component", "Tags", "Timeout"], rows)}\n${cases.length} case${cases.length === 1 ? "" : "s"}\n`);
}

/** One line for a streamed event: its type, and the tool it concerns when there is one. */
function describeEvent(event: RunEvent): string {
  const e = event as { type?: unknown; tool?: { toolName?: unknown }; toolName?: unknown };
  const tool = e.tool?.toolName ?? e.toolName;
  return `${safeText(e.type ?? "event")}${tool ? ` ${safeText(tool)}` : ""}`;
}
