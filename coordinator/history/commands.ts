import { writeFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import Table from "cli-table3";
import { InvalidArgumentError, Option, type Command } from "commander";
import { ErrorCode, errorMessage } from "../../shared/errors.ts";
import { CaseResult, SuiteResult } from "../../shared/result.ts";
import { printSummary, safeText } from "../report/console.ts";
import { renderHtmlReport } from "../report/html.ts";
import { StoreError } from "../store/driver.ts";
import type { CaseRecord, RunRecord } from "../store/records.ts";
import { DEFAULT_STORE_TIMEOUT_SECONDS, ResultsStore } from "../store/store.ts";
import { compareRuns } from "./compare.ts";
import { flakiness, isFlaky } from "./flaky.ts";

/**
 * The history commands: `evalfleet runs`, `show`, `compare`, `flaky` and `report --html`. They
 * read the results store only; presentation is here, the logic is in compare.ts and flaky.ts.
 */

/** Where the commands write. */
interface HistoryIO {
  stdout: Writable;
  stderr: Writable;
}

interface StoreFlagsOnly {
  db?: string;
  dbTimeout: number;
  json?: boolean;
}

const DASH = "\u2014";
/** Table borders without a rule between rows (as the summary table). */
const COMPACT = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };

/** Registers the history commands on the `evalfleet` program. */
export function addHistoryCommands(program: Command, io: HistoryIO, setCode: (code: number) => void): void {
  const runs = program.command("runs").description("List recent runs recorded in the results store, newest first");
  addReadFlags(runs);
  runs
    .option("--suite <name>", "only runs of this suite")
    .option("--branch <name>", "only runs recorded on this git branch")
    .addOption(new Option("--limit <n>", "how many runs").argParser(parseWhole("--limit", 1)).default(20));
  runs.action(async (flags: StoreFlagsOnly & { suite?: string; branch?: string; limit: number }) => {
    setCode(
      await withStore(flags, async (store) => {
        const list = await store.listRuns({ suiteName: flags.suite ?? null, branch: flags.branch, limit: flags.limit });
        if (flags.json) io.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        else io.stdout.write(formatRuns(store.display, list));
        return 0;
      }),
    );
  });

  const show = program.command("show").description("Print one recorded run as the summary table").argument("<run-id>", "the run (or a prefix of its id only it has)");
  addReadFlags(show);
  show.action(async (runId: string, flags: StoreFlagsOnly) => {
    setCode(
      await withStore(flags, async (store) => {
        const run = await store.findRun(runId);
        if (run.kind === "agent_as_judge") {
          const evaluations = await store.judgeEvaluations(run.id);
          if (flags.json) io.stdout.write(`${JSON.stringify({ run, evaluations }, null, 2)}\n`);
          else io.stdout.write(formatJudgeRun(run, evaluations));
          return 0;
        }
        const cases = await store.caseRecords(run.id);
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ run, cases }, null, 2)}\n`);
          return 0;
        }
        io.stdout.write(runHeader(run));
        printSummary(io.stdout, suiteOf(run, cases));
        return 0;
      }),
    );
  });

  const compare = program
    .command("compare")
    .description("What changed between two recorded runs: cases that went from pass to fail and back, score changes")
    .argument("<run-a>", "the earlier run")
    .argument("<run-b>", "the later run");
  addReadFlags(compare);
  compare.action(async (a: string, b: string, flags: StoreFlagsOnly) => {
    setCode(
      await withStore(flags, async (store) => {
        const runA = await store.findRun(a);
        const runB = await store.findRun(b);
        const [casesA, casesB] = [await store.caseRecords(runA.id), await store.caseRecords(runB.id)];
        const result = compareRuns(casesA, casesB);
        if (flags.json) io.stdout.write(`${JSON.stringify({ a: runA.id, b: runB.id, ...result }, null, 2)}\n`);
        else io.stdout.write(formatComparison(runA, runB, result));
        return 0;
      }),
    );
  });

  const flaky = program.command("flaky").description("Per case, the pass rate and the number of pass/fail flips over the last runs of a suite");
  addReadFlags(flaky);
  flaky
    .option("--suite <name>", "the suite (default: the suite of the newest recorded run)")
    .option("--branch <name>", "only runs recorded on this git branch")
    .addOption(new Option("--last <n>", "how many runs, newest first").argParser(parseWhole("--last", 2)).default(20))
    .option("--all", "list every case, not only the flaky ones");
  flaky.action(async (flags: StoreFlagsOnly & { suite?: string; branch?: string; last: number; all?: boolean }) => {
    setCode(
      await withStore(flags, async (store) => {
        const suiteName = flags.suite ?? (await store.latestRun({ kind: "suite", branch: flags.branch }))?.suiteName;
        if (!suiteName) throw new StoreError(ErrorCode.RunNotFound, `no suite run recorded in ${store.display}${flags.branch ? ` on branch ${flags.branch}` : ""}`);
        const window = (await store.listRuns({ suiteName, branch: flags.branch, kind: "suite", finishedOnly: true, limit: flags.last })).reverse();
        const cases = await store.caseRecordsOf(window.map((r) => r.id));
        const rows = flakiness(window.map((r) => ({ runId: r.id, cases: cases.get(r.id) ?? [] })));
        if (flags.json) io.stdout.write(`${JSON.stringify({ suite: suiteName, branch: flags.branch ?? null, runs: window.map((r) => r.id), cases: rows }, null, 2)}\n`);
        else io.stdout.write(formatFlaky(suiteName, flags.branch ?? null, window.length, rows, Boolean(flags.all)));
        return 0;
      }),
    );
  });

  const report = program
    .command("report")
    .description("Write a self-contained HTML report of a recorded run (default: the newest) with trends over the last runs")
    .argument("[run-id]", "the run (default: the newest suite run)");
  addReadFlags(report, { json: false });
  report
    .option("--html <path>", "write the HTML report here (parent folders are created)")
    .addOption(new Option("--last <n>", "runs of the same suite and branch in the trend charts").argParser(parseWhole("--last", 1)).default(20));
  report.action(async (runId: string | undefined, flags: StoreFlagsOnly & { html?: string; last: number }) => {
    if (!flags.html) throw new StoreError(ErrorCode.Usage, "report needs --html OUT.html (the one format it writes)", { field: "html" });
    const path = flags.html;
    setCode(
      await withStore(flags, async (store) => {
        const run = runId ? await store.findRun(runId) : await store.latestRun({ kind: "suite" });
        if (!run) throw new StoreError(ErrorCode.RunNotFound, `no suite run recorded in ${store.display}`);
        if (run.kind !== "suite") throw new StoreError(ErrorCode.Usage, `run ${run.id} is a standalone AgentAsJudgeEval run: the HTML report covers suite runs (evalfleet show ${run.id} prints it)`);
        const cases = await store.caseRecords(run.id);
        const before = await store.listRuns({ suiteName: run.suiteName, branch: run.gitBranch, kind: "suite", startedBefore: run.startedAt, finishedOnly: true, limit: Math.max(1, flags.last - 1) });
        const history = [...before.reverse(), run].slice(-flags.last);
        const html = renderHtmlReport({ run, cases, history });
        try {
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, html, "utf8");
        } catch (err) {
          io.stderr.write(`error: cannot write html report to ${safeText(path)}: ${safeText(errorMessage(err))}\n`);
          return 1;
        }
        io.stdout.write(`html report: ${safeText(path)} (run ${safeText(run.id)}, ${cases.length} cases, ${history.length} run${history.length === 1 ? "" : "s"} in the trends)\n`);
        return 0;
      }),
    );
  });
}

function addReadFlags(cmd: Command, opts: { json?: boolean } = {}): void {
  cmd
    .addOption(new Option("--db <url>", "the results store: sqlite:PATH or postgres://USER@HOST/DB (default $EVALFLEET_DB)").env("EVALFLEET_DB"))
    .addOption(new Option("--db-timeout <seconds>", "bound on connecting and on each query").argParser(parsePositive("--db-timeout")).default(DEFAULT_STORE_TIMEOUT_SECONDS));
  if (opts.json !== false) cmd.option("--json", "print JSON instead of a table");
}

/** Opens the store named by the flags, runs `use`, closes it. Errors go up to the CLI (one line, exit 2 for a store problem). */
async function withStore(flags: StoreFlagsOnly, use: (store: ResultsStore) => Promise<number>): Promise<number> {
  const url = flags.db?.trim();
  if (!url) throw new StoreError(ErrorCode.Usage, "no results store: pass --db URL (sqlite:PATH or postgres://...) or set EVALFLEET_DB", { field: "db" });
  const store = await ResultsStore.open(url, { timeoutSeconds: flags.dbTimeout });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** A recorded case as a CaseResult, for the summary table; `passed` is the recorded verdict. */
export function caseResultOf(r: CaseRecord): CaseResult {
  const result = new CaseResult({
    name: r.name,
    tags: r.tags,
    agentId: r.agentId,
    teamId: r.teamId,
    sessionId: r.sessionId,
    durationSeconds: r.durationSeconds,
    judgePassed: r.judgePassed,
    judgeReason: r.judgeReason,
    judgeScore: r.judgeScore,
    reliabilityPassed: r.reliabilityPassed,
    output: r.output,
    toolsCalled: r.toolsCalled,
    timedOut: r.timedOut,
    skipped: r.skipped,
    error: r.error,
    score: r.scoreValue !== null ? { value: r.scoreValue, passed: r.scorePassed ?? false, reason: r.scoreReason, detail: r.scoreDetail } : null,
    index: r.index,
    attempts: r.attempts,
    worker: r.worker,
  });
  // The verdict as recorded: a later evalfleet may compute `passed` from checks this record predates.
  Object.defineProperty(result, "passed", { value: r.passed, enumerable: false });
  return result;
}

/** A recorded run as a SuiteResult (for `printSummary`). */
export function suiteOf(run: RunRecord, cases: readonly CaseRecord[]): SuiteResult {
  return new SuiteResult(cases.map(caseResultOf), { runId: run.id, durationSeconds: run.durationSeconds ?? 0, cancelled: run.status === "cancelled" });
}

function runHeader(run: RunRecord): string {
  const lines = [
    `run ${run.id} \u00b7 suite ${run.suiteName} \u00b7 ${run.status}`,
    `started ${run.startedAt}${run.finishedAt ? ` \u00b7 finished ${run.finishedAt}` : ""}${run.gitBranch ? ` \u00b7 branch ${run.gitBranch}` : ""}${run.gitCommit ? ` \u00b7 commit ${run.gitCommit.slice(0, 12)}` : ""}`,
  ];
  return lines.map(safeText).join("\n") + "\n";
}

function formatRuns(display: string, runs: readonly RunRecord[]): string {
  if (runs.length === 0) return `no runs recorded in ${safeText(display)}\n`;
  const table = new Table({ head: ["Run", "Suite", "Started", "Status", "Passed", "Time", "Branch", "Commit"], style: { head: [], border: [] }, chars: COMPACT });
  for (const r of runs) {
    table.push([
      safeText(r.id),
      safeText(r.kind === "agent_as_judge" ? `${r.suiteName} (judge)` : r.suiteName),
      safeText(r.startedAt.replace("T", " ").replace(/\.\d+Z$/, "Z")),
      safeText(r.status),
      r.total === null ? DASH : `${r.passed ?? 0}/${r.total}`,
      r.durationSeconds === null ? DASH : `${r.durationSeconds}s`,
      safeText(r.gitBranch ?? DASH),
      safeText(r.gitCommit ? r.gitCommit.slice(0, 10) : DASH),
    ]);
  }
  return `Runs in ${safeText(display)}\n${table.toString()}\n${runs.length} run${runs.length === 1 ? "" : "s"}\n`;
}

function formatJudgeRun(run: RunRecord, evaluations: Awaited<ReturnType<ResultsStore["judgeEvaluations"]>>): string {
  const table = new Table({ head: ["#", "Input", "Score", "Verdict", "Reason"], style: { head: [], border: [] }, chars: COMPACT, colWidths: [5, 40, 7, 12, 60], wordWrap: true });
  for (const e of evaluations) {
    table.push([String(e.position), safeText(cut(e.input, 120)), e.score === null ? DASH : String(e.score), e.failure ? "NO VERDICT" : e.passed ? "PASS" : "FAIL", safeText(cut(e.failure ?? e.reason ?? "", 240))]);
  }
  return `${runHeader(run)}AgentAsJudgeEval \u00b7 criteria: ${safeText(String((run.config as { criteria?: unknown }).criteria ?? ""))}\n${table.toString()}\n${run.passed ?? 0}/${run.total ?? 0} passed\n`;
}

function formatComparison(a: RunRecord, b: RunRecord, c: ReturnType<typeof compareRuns>): string {
  const lines: string[] = [
    `compare ${a.id} (${a.startedAt}) -> ${b.id} (${b.startedAt})${a.suiteName !== b.suiteName ? ` [suites ${a.suiteName} / ${b.suiteName}]` : ` \u00b7 suite ${a.suiteName}`}`,
    "",
    `pass -> fail (${c.regressions.length})${c.regressions.length ? `: ${c.regressions.join(", ")}` : ""}`,
    `fail -> pass (${c.fixes.length})${c.fixes.length ? `: ${c.fixes.join(", ")}` : ""}`,
  ];
  if (c.skipChanges.length) lines.push(`skipped in one run (${c.skipChanges.length}): ${c.skipChanges.map((s) => `${s.name} (${s.from} -> ${s.to})`).join(", ")}`);
  lines.push(`score changes (${c.scoreChanges.length})${c.scoreChanges.length ? ":" : ""}`);
  const num = (v: number | null): string => (v === null ? "none" : String(v));
  for (const s of c.scoreChanges) {
    const parts: string[] = [];
    if (s.judge) parts.push(`judge ${num(s.judge.from)} -> ${num(s.judge.to)}`);
    if (s.scorer) parts.push(`scorer ${num(s.scorer.from)} -> ${num(s.scorer.to)}`);
    lines.push(`  ${s.name}: ${parts.join(", ")}`);
  }
  if (c.onlyInA.length) lines.push(`only in ${a.id} (${c.onlyInA.length}): ${c.onlyInA.join(", ")}`);
  if (c.onlyInB.length) lines.push(`only in ${b.id} (${c.onlyInB.length}): ${c.onlyInB.join(", ")}`);
  lines.push(`unchanged: ${c.unchanged}`);
  return lines.map(safeText).join("\n") + "\n";
}

function formatFlaky(suite: string, branch: string | null, runs: number, rows: ReturnType<typeof flakiness>, all: boolean): string {
  const flakyCount = rows.filter(isFlaky).length;
  const shown = all ? rows : rows.filter(isFlaky);
  const head = `Flakiness of suite '${safeText(suite)}' over the last ${runs} run${runs === 1 ? "" : "s"} (${branch ? `branch ${safeText(branch)}` : "any branch"})`;
  const mark = { pass: "\u2713", fail: "\u2717", skip: "s" } as const;
  const table = new Table({ head: ["Case", "Runs", "Pass rate", "Flips", "Last", "History (oldest first)"], style: { head: [], border: [] }, chars: COMPACT });
  for (const r of shown) {
    table.push([safeText(r.name), String(r.runs), r.runs ? `${Math.round(r.passRate * 100)}%` : DASH, String(r.flips), r.last ? r.last.toUpperCase() : DASH, r.outcomes.map((o) => (o ? mark[o] : "\u00b7")).join("")]);
  }
  const body = shown.length > 0 ? `${table.toString()}\n` : "";
  return `${head}\n${body}${flakyCount} of ${rows.length} case${rows.length === 1 ? "" : "s"} flaky (passed and failed)${all ? "" : flakyCount ? "" : "; --all lists every case"}\n`;
}

function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}\u2026` : s;
}

function parseWhole(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min) throw new InvalidArgumentError(`${flag} must be a whole number >= ${min}, got '${value}'`);
    return n;
  };
}

function parsePositive(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a number of seconds > 0, got '${value}'`);
    return n;
  };
}
