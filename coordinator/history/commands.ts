import { writeFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import Table from "cli-table3";
import { ErrorCode, errorMessage } from "../../shared/errors.ts";
import { CaseResult, SuiteResult } from "../../shared/result/result.ts";
import { expectationsFromJSON, repeatFromJSON } from "../../shared/result/result-json.ts";
import { printSummary } from "../report/console.ts";
import { safeText } from "../../shared/text.ts";
import { redactJson } from "../../shared/redaction/secrets.ts";
import { renderHtmlReport } from "./html/report.ts";
import { renderCompareHtml } from "./html/compare-report.ts";
import { StoreError } from "./store/driver.ts";
import { abandonedBefore, type RunRecord } from "./store/run-record.ts";
import type { CaseRecord } from "./store/case-record.ts";
import { STORE_HEARTBEAT_SECONDS } from "./store/run-heartbeat.ts";
import { ResultsStore } from "./store/store.ts";
import { compareRuns } from "./compare.ts";
import { trialCaseOfRecord } from "./case-trials.ts";
import { pairRuns } from "./paired-runs.ts";
import { compareSignificance, significanceJson } from "./significance.ts";
import { significanceLines } from "./significance-text.ts";
import { historyBefore } from "./recording/record-run.ts";
import { flakiness, isFlaky } from "./flaky.ts";
import { FLAKY_RATE_MARGIN } from "./flaky.ts";
import { formatPercentInterval } from "../../shared/stats/interval.ts";
import { toExuluExport, toReportExport } from "./export.ts";

/**
 * What the history commands do: `evalfleet runs`, `runs close`, `show`, `compare`, `flaky` and `report --html`
 * (their flags are registered in coordinator/cli/history-commands.ts). They read the results store
 * only; presentation is here, the logic is in compare.ts and flaky.ts.
 */

/** Where the commands write. */
export interface HistoryIO {
  stdout: Writable;
  stderr: Writable;
}

/** The store flags of every history command. */
export interface StoreFlagsOnly {
  db?: string;
  dbTimeout: number;
  json?: boolean;
}

const DASH = "\u2014";
/** Table borders without a rule between rows (as the summary table). */
const COMPACT = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };

/** `evalfleet runs`: recent runs, newest first. */
export async function listRuns(flags: StoreFlagsOnly & { suite?: string; branch?: string; limit: number }, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const list = await store.listRuns({ suiteName: flags.suite ?? null, branch: flags.branch, limit: flags.limit });
    if (flags.json) io.stdout.write(jsonText(list));
    else io.stdout.write(formatRuns(store.display, list));
    return 0;
  });
}

/** `evalfleet show <run-id>`: one recorded run as the summary table (or JSON). */
export async function showRun(runId: string, flags: StoreFlagsOnly, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const run = await store.findRun(runId);
    if (run.kind === "agent_as_judge") {
      const evaluations = await store.judgeEvaluations(run.id);
      if (flags.json) io.stdout.write(jsonText({ run, evaluations }));
      else io.stdout.write(formatJudgeRun(run, evaluations));
      return 0;
    }
    const cases = await store.caseRecords(run.id);
    if (flags.json) {
      io.stdout.write(jsonText({ run, cases }));
      return 0;
    }
    io.stdout.write(runHeader(run));
    printSummary(io.stdout, suiteOf(run, cases));
    return 0;
  });
}

/**
 * `evalfleet compare <run-a> <run-b> [--html FILE]`: what changed between two recorded runs, and
 * whether it is more than chance explains (significance.ts at `regressionAlpha`, intervals at
 * `confidence`; the runs before A on its branch join A's trials in the per-case tests).
 */
export async function compareRecordedRuns(a: string, b: string, flags: StoreFlagsOnly & { html?: string; regressionAlpha: number; confidence: number }, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const runA = await store.findRun(a);
    const runB = await store.findRun(b);
    const [casesA, casesB] = [await store.caseRecords(runA.id), await store.caseRecords(runB.id)];
    const result = compareRuns(casesA, casesB);
    const history = runA.kind === "suite" ? await historyBefore(store, runA, [runB.id]) : [];
    const paired = pairRuns({ a: casesA.map(trialCaseOfRecord), b: casesB.map(trialCaseOfRecord), history: history.map((h) => h.cases.map(trialCaseOfRecord)) });
    const significance = compareSignificance(paired.cases, { alpha: flags.regressionAlpha, confidence: flags.confidence });
    if (flags.json) io.stdout.write(jsonText({ a: runA.id, b: runB.id, ...result, ...significanceJson(significance), history_runs: history.map((h) => h.run.id) }));
    else {
      io.stdout.write(formatComparison(runA, runB, result));
      const lines = ["", `significance (history: ${history.length} earlier run${history.length === 1 ? "" : "s"} of ${runA.id}'s branch in the per-case tests):`, ...significanceLines(significance)];
      io.stdout.write(lines.map(safeText).join("\n") + "\n");
    }
    if (!flags.html) return 0;
    const path = flags.html;
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, renderCompareHtml({ a: runA, b: runB, casesA, casesB }), "utf8");
    } catch (err) {
      io.stderr.write(`error: cannot write the compare page to ${safeText(path)}: ${safeText(errorMessage(err))}\n`);
      return 1;
    }
    if (!flags.json) io.stdout.write(`compare html: ${safeText(path)} (${result.regressions.length} pass -> fail, ${result.fixes.length} fail -> pass)\n`);
    return 0;
  });
}

/** `evalfleet flaky`: per case, the trials, the pass rate with its interval (`confidence`, 0-1) and the flips over the last runs of a suite. */
export async function flakyCases(flags: StoreFlagsOnly & { suite?: string; branch?: string; last: number; all?: boolean; confidence: number }, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const suiteName = flags.suite ?? (await store.latestRun({ kind: "suite", branch: flags.branch }))?.suiteName;
    if (!suiteName) throw new StoreError(ErrorCode.RunNotFound, `no suite run recorded in ${store.display}${flags.branch ? ` on branch ${flags.branch}` : ""}`);
    const window = (await store.listRuns({ suiteName, branch: flags.branch, kind: "suite", finishedOnly: true, limit: flags.last })).reverse();
    const cases = await store.caseRecordsOf(window.map((r) => r.id));
    const rows = flakiness(
      window.map((r) => ({ runId: r.id, cases: cases.get(r.id) ?? [] })),
      flags.confidence,
    );
    if (flags.json) io.stdout.write(jsonText({ suite: suiteName, branch: flags.branch ?? null, runs: window.map((r) => r.id), confidence: flags.confidence, cases: rows }));
    else io.stdout.write(formatFlaky(suiteName, flags.branch ?? null, window.length, rows, Boolean(flags.all), flags.confidence));
    return 0;
  });
}

/** `evalfleet report --html OUT [run-id]`: a self-contained HTML report of a recorded run, with trends. */
export async function writeHtmlReport(runId: string | undefined, flags: StoreFlagsOnly & { html?: string; last: number }, io: HistoryIO): Promise<number> {
  if (!flags.html) throw new StoreError(ErrorCode.Usage, "report needs --html OUT.html (the one format it writes)", { field: "html" });
  const path = flags.html;
  return withStore(flags, async (store) => {
    const run = runId ? await store.findRun(runId) : await store.latestRun({ kind: "suite" });
    if (!run) throw new StoreError(ErrorCode.RunNotFound, `no suite run recorded in ${store.display}`);
    if (run.kind !== "suite") throw new StoreError(ErrorCode.Usage, `run ${run.id} is a standalone AgentAsJudgeEval run: the HTML report covers suite runs (evalfleet show ${run.id} prints it)`);
    const cases = await store.caseRecords(run.id);
    const before = await store.listRuns({ suiteName: run.suiteName, branch: run.gitBranch, kind: "suite", startedBefore: run.startedAt, finishedOnly: true, limit: Math.max(1, flags.last - 1) });
    const history = [...before.reverse(), run].slice(-flags.last);
    const transcripts = await transcriptsOf(store, run.id);
    const html = renderHtmlReport({ run, cases, history, transcriptOf: transcripts ? (c) => transcripts.get(c.index) ?? null : undefined });
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, html, "utf8");
    } catch (err) {
      io.stderr.write(`error: cannot write html report to ${safeText(path)}: ${safeText(errorMessage(err))}\n`);
      return 1;
    }
    io.stdout.write(`html report: ${safeText(path)} (run ${safeText(run.id)}, ${cases.length} cases, ${history.length} run${history.length === 1 ? "" : "s"} in the trends)\n`);
    return 0;
  });
}

/**
 * The run's stored transcripts by case index (its full run outputs), when this store keeps them:
 * a store of an evalfleet that records transcripts has `transcripts(runId)`; without it (or
 * without any), the report shows no transcript.
 */
async function transcriptsOf(store: ResultsStore, runId: string): Promise<ReadonlyMap<number, unknown> | null> {
  const read = (store as unknown as { transcripts?: (runId: string) => Promise<ReadonlyMap<number, unknown>> }).transcripts;
  if (typeof read !== "function") return null;
  const all = await read.call(store, runId);
  return all.size > 0 ? all : null;
}

/** The formats of `evalfleet export`. */
export const EXPORT_FORMATS = ["json", "exulu"] as const;

/**
 * `evalfleet export <run-id> --format exulu|json [-o PATH]`: a recorded run as Exulu's `eval_runs`
 * record with one result per test case (export.ts), or as evalfleet's JSON report; to standard
 * output, or to a file.
 */
export async function exportRun(runId: string, flags: StoreFlagsOnly & { format: (typeof EXPORT_FORMATS)[number]; output?: string }, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const run = await store.findRun(runId);
    let payload: unknown;
    if (run.kind === "agent_as_judge") {
      if (flags.format === "exulu") throw new StoreError(ErrorCode.Usage, `run ${run.id} is a standalone AgentAsJudgeEval run, which has no test cases: export it with --format json`, { field: "format" });
      payload = { run, evaluations: await store.judgeEvaluations(run.id) };
    } else {
      const cases = await store.caseRecords(run.id);
      if (flags.format === "json") payload = toReportExport(run, cases);
      else {
        const exported = toExuluExport(run, cases);
        if (exported.eval_run.agent_id === null && cases.length > 0) {
          const ids = [...new Set(cases.map((c) => c.agentId ?? c.teamId ?? "?"))];
          io.stderr.write(`warning: run ${safeText(run.id)} ran cases of ${ids.length} agents or teams (${safeText(ids.slice(0, 5).join(", "))}${ids.length > 5 ? ", ..." : ""}): its agent_id is null, where Exulu expects one agent\n`);
        }
        payload = exported;
      }
    }
    const text = `${JSON.stringify(payload, null, 2)}\n`;
    if (!flags.output) {
      io.stdout.write(text);
      return 0;
    }
    try {
      await mkdir(dirname(flags.output), { recursive: true });
      await writeFile(flags.output, text, "utf8");
    } catch (err) {
      io.stderr.write(`error: cannot write the export to ${safeText(flags.output)}: ${safeText(errorMessage(err))}\n`);
      return 1;
    }
    io.stdout.write(`${flags.format} export: ${safeText(flags.output)} (run ${safeText(run.id)})\n`);
    return 0;
  });
}

/**
 * `evalfleet runs close <run-id>`: closes a run left `running` (its process died, or could not
 * record its end) as `abandoned`. A run whose heartbeat is recent looks alive: closed only with `--force`.
 */
export async function closeRun(runId: string, flags: StoreFlagsOnly & { force?: boolean }, io: HistoryIO): Promise<number> {
  return withStore(flags, async (store) => {
    const run = await store.findRun(runId);
    if (run.status !== "running") {
      io.stdout.write(`${safeText(`run ${run.id} is already ${run.status}: nothing to close`)}\n`);
      return 0;
    }
    const silentSeconds = run.heartbeatAt ? Math.round((Date.now() - Date.parse(run.heartbeatAt)) / 1000) : null;
    if (!flags.force && silentSeconds !== null && silentSeconds < ALIVE_HEARTBEATS * STORE_HEARTBEAT_SECONDS) {
      throw new StoreError(
        ErrorCode.Usage,
        `run ${run.id} looks alive: ${run.host ?? "its process"} wrote its heartbeat ${silentSeconds}s ago (every ${STORE_HEARTBEAT_SECONDS}s while it runs); pass --force to close it anyway`,
        { runId: run.id },
      );
    }
    const closed = await store.abandonRun(run);
    const after = await store.findRun(run.id);
    if (flags.json) io.stdout.write(`${JSON.stringify(after, null, 2)}\n`);
    else if (!closed) io.stdout.write(`${safeText(`run ${run.id} ended meanwhile: ${after.status}`)}\n`);
    else {
      const cases = await store.caseRecords(run.id);
      io.stdout.write(`${safeText(`run ${run.id} closed as abandoned: last seen alive at ${after.finishedAt} (${cases.length} of ${after.total ?? cases.length} case results recorded, ${after.passed ?? 0} passed)`)}\n`);
    }
    return 0;
  });
}

/** Heartbeats a run may miss before `runs close` takes it for dead without `--force`. */
const ALIVE_HEARTBEATS = 3;

/** Opens the store named by the flags, runs `use`, closes it. Errors go up to the CLI (one line, exit 2 for a store problem). */
async function withStore(flags: StoreFlagsOnly, use: (store: ResultsStore) => Promise<number>): Promise<number> {
  const url = flags.db?.trim();
  if (!url) throw new StoreError(ErrorCode.Usage, "no results store: pass --db URL (sqlite:PATH or postgres://...) or set EVALFLEET_DB", { field: "db" });
  const store = await ResultsStore.open(url, { timeoutSeconds: flags.dbTimeout });
  try {
    // Runs whose process died are shown for what they are (best effort: a read-only user may not write).
    await store.closeAbandonedRuns(abandonedBefore()).catch(() => undefined);
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
  // The data-driven verdicts and the error's kind, as the report recorded them (the summary's
  // "Expected" column, failure reasons and infrastructure-error count read them).
  result.expectations = expectationsFromJSON(r.report?.expectations);
  // The reliability lists from their columns, its reason and steps from the report (absent in older runs).
  if (r.reliability) result.reliability = { passed: r.reliabilityPassed ?? false, ...r.reliability, reason: r.report?.reliability_reason ?? null, trajectory: r.report?.trajectory ?? null };
  result.errorKind = r.errorKind ?? null;
  // A repeated case's trials and its pass rule, from its report entry: the statistics (the pass
  // rate's interval, pass^k) are computed from them as the run computed them.
  if (r.report?.repeats && r.report.repeats.length > 0) result.repeats = r.report.repeats.map(repeatFromJSON);
  result.casePassRate = r.report?.case_pass_rate ?? null;
  // Adaptive repeats' mark, as recorded (absent before them).
  const decided = r.report?.decided;
  const stop = r.report?.adaptive_stop;
  if (typeof decided === "boolean" && typeof stop === "string") result.adaptive = { decided, stop };
  // The verdict as recorded: a later evalfleet may compute `passed` from checks this record predates.
  Object.defineProperty(result, "passed", { value: r.passed, enumerable: false });
  return result;
}

/** A recorded run as a SuiteResult (for `printSummary`). */
export function suiteOf(run: RunRecord, cases: readonly CaseRecord[]): SuiteResult {
  // The run's confidence, repeat and pass rule from its stored summary (absent in runs recorded before them).
  const s = run.summary ?? {};
  const confidence = typeof s.confidence === "number" && s.confidence > 0 && s.confidence < 1 ? s.confidence : undefined;
  return new SuiteResult(cases.map(caseResultOf), {
    runId: run.id,
    durationSeconds: run.durationSeconds ?? 0,
    cancelled: run.status === "cancelled",
    ...(typeof s.repeat === "number" && Number.isInteger(s.repeat) && s.repeat >= 1 ? { repeat: s.repeat } : {}),
    ...adaptiveMaxOf(s.adaptive_repeats),
    ...(confidence === undefined ? {} : { confidence }),
    casePassRate: typeof s.case_pass_rate === "number" ? s.case_pass_rate : null,
  });
}

function runHeader(run: RunRecord): string {
  const lines = [
    `run ${run.id} \u00b7 suite ${run.suiteName} \u00b7 ${run.status}`,
    `started ${run.startedAt}${run.finishedAt ? ` \u00b7 finished ${run.finishedAt}` : ""}${run.gitBranch ? ` \u00b7 branch ${run.gitBranch}` : ""}${run.gitCommit ? ` \u00b7 commit ${run.gitCommit.slice(0, 12)}` : ""}`,
  ];
  // A run given Exulu's fields (--run-name, --description, --eval-function, --scoring-method) says so, with its agent.
  if (run.kind === "suite" && (run.runName || run.description || run.evalFunctions?.length || run.scoringMethod)) {
    const parts = [
      run.runName ? `name ${run.runName}` : null,
      run.agentId ? `agent ${run.agentId}` : run.teamId ? `team ${run.teamId}` : null,
      run.evalFunctions?.length ? `eval functions ${run.evalFunctions.join(", ")}` : null,
      run.scoringMethod ? `scoring method ${run.scoringMethod}` : null,
    ].filter((x): x is string => x !== null);
    if (parts.length > 0) lines.push(parts.join(" \u00b7 "));
  }
  if (run.description) lines.push(run.description);
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
    table.push([String(e.position), cut(safeText(e.input), 120), e.score === null ? DASH : String(e.score), e.failure ? "NO VERDICT" : e.passed ? "PASS" : "FAIL", cut(safeText(e.failure ?? e.reason ?? ""), 240)]);
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

function formatFlaky(suite: string, branch: string | null, runs: number, rows: ReturnType<typeof flakiness>, all: boolean, confidence: number): string {
  const flakyCount = rows.filter(isFlaky).length;
  const shown = all ? rows : rows.filter(isFlaky);
  const head = `Flakiness of suite '${safeText(suite)}' over the last ${runs} run${runs === 1 ? "" : "s"} (${branch ? `branch ${safeText(branch)}` : "any branch"})`;
  const mark = { pass: "\u2713", fail: "\u2717", skip: "s" } as const;
  const table = new Table({ head: ["Case", "Runs", "Trials", "Pass rate", "Flips", "Last", "History (oldest first)"], style: { head: [], border: [] }, chars: COMPACT });
  for (const r of shown) {
    table.push([
      safeText(r.name),
      String(r.runs),
      `${r.trialPasses}/${r.trials}`,
      r.trials ? formatPercentInterval(r.trialPasses / r.trials, r.passRateCi, 0) : DASH,
      String(r.flips),
      r.last ? r.last.toUpperCase() : DASH,
      r.outcomes.map((o) => (o ? mark[o] : "\u00b7")).join(""),
    ]);
  }
  const body = shown.length > 0 ? `${table.toString()}\n` : "";
  const band = `${Math.round(FLAKY_RATE_MARGIN * 100)}%, ${Math.round((1 - FLAKY_RATE_MARGIN) * 100)}%`;
  return `${head}\n${body}${flakyCount} of ${rows.length} case${rows.length === 1 ? "" : "s"} flaky (the ${Math.round(confidence * 100)}% interval of the pass rate over the trials inside (${band}))${all ? "" : flakyCount ? "" : "; --all lists every case"}\n`;
}

/** `--json` output: what the store holds, without secrets (a run recorded before redaction existed may hold some). */
function jsonText(value: unknown): string {
  return `${JSON.stringify(redactJson(value), null, 2)}\n`;
}

/** Cuts text already passed through `safeText` (a cut before it could leave a piece of a secret). */
function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}\u2026` : s;
}

/** MAX of a recorded adaptive run, from its summary's `adaptive_repeats` (nothing for a fixed repeat or an older run). */
function adaptiveMaxOf(a: unknown): { repeatMax?: number } {
  const max = a && typeof a === "object" ? (a as { max?: unknown }).max : undefined;
  return typeof max === "number" && Number.isInteger(max) && max >= 1 ? { repeatMax: max } : {};
}
