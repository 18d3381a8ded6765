import { redactJson } from "../../../shared/redaction/secrets.ts";
import { formatPercentInterval } from "../../../shared/stats/interval.ts";
import type { RunRecord } from "../store/run-record.ts";
import type { CaseRecord } from "../store/case-record.ts";
import { barChart, columnChart, esc, lineChart, type ChartDatum } from "./svg-chart.ts";
import { buildReportData, CHUNK_CASES, scriptJson } from "./report-data.ts";
import { REPORT_SCRIPT, REPORT_STYLE } from "./report-page.ts";
import { selectionKey, selectionSize } from "../selection-key.ts";

/**
 * `evalfleet report --html`: one self-contained HTML file for one recorded run. Everything is
 * inline (CSS, a few lines of script, SVG charts); a Content-Security-Policy forbids any fetch, so
 * the page renders the same offline, from a CI artifact or an email attachment. Pure: records in,
 * HTML text out. Every recorded string is escaped (an agent's output is untrusted), and secrets
 * are removed from the records before anything is cut or escaped (shared/redaction/secrets.ts: a store
 * written before redaction existed, or by a process that knew other secrets, may hold some).
 */

/** What the report shows. */
export interface HtmlReportInput {
  run: RunRecord;
  cases: readonly CaseRecord[];
  /** Runs of the same suite (and branch) up to and including `run`, oldest first, for the trends. */
  history: readonly RunRecord[];
  /** When the report was made (ISO 8601). Default: now. */
  generatedAt?: string;
  /** A case's stored run output (its transcript), when the store kept one. Default: none. */
  transcriptOf?: (c: CaseRecord) => unknown;
}

/** Slowest cases shown in their chart. */
const SLOWEST = 10;
/** Rows per page of the case table, first shown. */
const PAGE_SIZES = [100, 500, 50] as const;

/** Builds the report; see the module comment. */
export function renderHtmlReport(given: HtmlReportInput): string {
  const input = redactJson(given);
  const { run, cases } = input;
  const history = input.history.length > 0 ? input.history : [run];
  const generatedAt = input.generatedAt ?? new Date().toISOString();
  const counts = {
    total: cases.length,
    passed: cases.filter((c) => c.passed).length,
    skipped: cases.filter((c) => c.skipped).length,
  };
  const failed = counts.total - counts.passed - counts.skipped;
  const title = `${run.suiteName} \u00b7 run ${run.id}`;
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title><style>${REPORT_STYLE}</style></head><body>`;
  const status = statusBadge(run.status);
  const header = `<header><h1>${esc(run.suiteName)} ${status}</h1><div class="muted">run <code>${esc(run.id)}</code> \u00b7 started ${esc(run.startedAt)}${run.finishedAt ? ` \u00b7 finished ${esc(run.finishedAt)}` : ""}${run.gitBranch ? ` \u00b7 branch ${esc(run.gitBranch)}` : ""}${run.gitCommit ? ` \u00b7 commit ${esc(run.gitCommit.slice(0, 12))}` : ""}</div></header>`;
  const cards = [
    ["Cases", String(counts.total)],
    ["Passed", String(counts.passed)],
    ["Failed", String(failed)],
    ["Skipped", String(counts.skipped)],
    ["Pass rate", counts.total ? `${((100 * counts.passed) / counts.total).toFixed(1)}%` : "\u2014"],
    ...statisticsCards(run.summary),
    ["Duration", run.durationSeconds !== null ? `${run.durationSeconds}s` : "\u2014"],
    ["Judge model", run.judgeModel ?? "\u2014"],
    ["Timeout", run.timeoutSeconds !== null ? `${run.timeoutSeconds}s` : "\u2014"],
  ]
    .map(([k, v]) => `<div class="card"><div class="k">${esc(k)}</div><div class="v">${esc(v)}</div></div>`)
    .join("");
  const summary = `<section id="summary"><h2>Summary</h2><div class="cards">${cards}</div><dl>${dlRow("Selection", describeSelection(run.selection))}${dlRow("Configuration", Object.entries(run.config).map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`).join(" \u00b7 ") || "\u2014")}${dlRow("Suite", `${run.suitePath ?? run.suiteName}${run.suiteFingerprint ? ` (fingerprint ${run.suiteFingerprint.slice(0, 12)})` : ""}`)}${dlRow("Recorded by", run.host ?? "\u2014")}</dl></section>`;
  const data = buildReportData(cases, given.transcriptOf ? (c) => redactJson(given.transcriptOf!(c)) : undefined);
  const payload = `<script type="application/json" id="report-data">${scriptJson({ rows: data.rows, groups: data.groups, otherFailures: data.otherFailures, kinds: data.kinds, tags: data.tags, chunkCases: CHUNK_CASES })}</script>${data.chunks.map((c, i) => `<script type="application/octet-stream" id="chunk-${i}">${c}</script>`).join("")}`;
  return `${head}${header}<main>${summary}${charts(run, cases, history)}${failures(run, failed)}${caseTable(cases.length)}<p class="muted">Generated ${esc(generatedAt)} by evalfleet.</p></main>${payload}<script>${REPORT_SCRIPT}</script></body></html>\n`;
}

function charts(run: RunRecord, cases: readonly CaseRecord[], history: readonly RunRecord[]): string {
  const label = (r: RunRecord): string => r.startedAt.slice(5, 16).replace("T", " ");
  // Runs of another selection (another set of case names) are marked, and left out of the line.
  const key = selectionKey(run);
  const other = (r: RunRecord): boolean => r.id !== run.id && selectionKey(r) !== key;
  const tip = (r: RunRecord): string =>
    `${r.id} \u00b7 ${r.startedAt} \u00b7 ${r.passed ?? "?"}/${r.total ?? "?"} passed \u00b7 ${r.durationSeconds ?? "?"}s${other(r) ? ` \u00b7 different selection (${selectionSize(r) ?? "?"} cases)` : ""}`;
  const rate: ChartDatum[] = history.map((r) => ({ label: label(r), value: r.total ? (100 * (r.passed ?? 0)) / r.total : 0, title: tip(r), highlight: r.id === run.id, other: other(r) }));
  const duration: ChartDatum[] = history.map((r) => ({ label: label(r), value: r.durationSeconds ?? 0, title: tip(r), highlight: r.id === run.id, other: other(r) }));
  const differing = history.filter(other).length;
  const note = differing > 0 ? ` (${differing} of another selection, hollow, off the line)` : "";
  const phases = { setup: 0, run: 0, checks: 0, teardown: 0 };
  let timed = 0;
  for (const c of cases) {
    const p = c.report?.phase_seconds;
    if (!p) continue;
    timed++;
    for (const k of Object.keys(phases) as Array<keyof typeof phases>) phases[k] += p[k];
  }
  const phaseBars: ChartDatum[] = (Object.keys(phases) as Array<keyof typeof phases>).map((k) => ({ label: k, value: Math.round(phases[k] * 1000) / 1000, title: `${k}: ${seconds(phases[k])} over ${timed} cases` }));
  const scores = cases.map((c) => c.judgeScore).filter((s): s is number => s !== null);
  const bins: ChartDatum[] = Array.from({ length: 10 }, (_, i) => {
    const v = scores.filter((s) => Math.round(s) === i + 1).length;
    return { label: String(i + 1), value: v, title: `score ${i + 1}: ${v} case${v === 1 ? "" : "s"}` };
  });
  const slowest: ChartDatum[] = [...cases]
    .filter((c) => !c.skipped)
    .sort((a, b) => b.durationSeconds - a.durationSeconds || a.index - b.index)
    .slice(0, SLOWEST)
    .map((c) => ({ label: c.name, value: c.durationSeconds, title: `${c.name}: ${c.durationSeconds}s` }));
  const panel = (id: string, title: string, body: string): string => `<div class="panel" id="${id}"><h2>${esc(title)}</h2>${body}</div>`;
  return `<section class="panels">${[
    panel("chart-pass-rate", `Pass rate, last ${history.length} run${history.length === 1 ? "" : "s"}${note}`, lineChart(rate, { title: "Pass rate per run", max: 100, format: (v) => `${Math.round(v)}%` })),
    panel("chart-duration", `Duration, last ${history.length} run${history.length === 1 ? "" : "s"}${note}`, lineChart(duration, { title: "Duration per run (seconds)", format: seconds })),
    panel(
      "chart-scores",
      "Judge score distribution (numeric judges)",
      scores.length > 0 ? columnChart(bins, { title: "Judge scores 1-10", format: (v) => String(v) }) : `<p class="muted">No numeric judge scores in this run.</p>`,
    ),
    panel("chart-slowest", `Slowest cases`, slowest.length > 0 ? barChart(slowest, { title: "Slowest cases (seconds)", format: seconds }) : `<p class="muted">No case ran.</p>`),
    panel(
      "chart-phases",
      "Where the time went (all cases, per phase)",
      timed > 0 ? barChart(phaseBars, { title: "Seconds per phase, summed over cases", format: seconds }) : `<p class="muted">No phase timings recorded.</p>`,
    ),
  ].join("")}</section>`;
}

function failures(run: RunRecord, failed: number): string {
  if (failed === 0) return "";
  const suite = run.suitePath ?? run.suiteName;
  const command = `evalfleet run ${shellWord(suite)} --rerun-failed ${shellWord(run.id)}`;
  return `<section id="failures"><h2>Failures by cause</h2><div class="rerun"><code id="rerun-command">${esc(command)}</code><button id="copy-rerun" class="act" type="button">Copy the re-run command</button></div><div id="groups"></div></section>`;
}

function caseTable(total: number): string {
  const sizes = PAGE_SIZES.map((n) => `<option value="${n}">${n} per page</option>`).join("");
  return `<section id="cases"><h2>Cases</h2><div class="controls"><input id="filter" type="search" placeholder="Search: name, tag, reason, error, tool" aria-label="Search cases">
<select id="status" aria-label="Status"><option value="all">All statuses</option><option value="pass">Passed</option><option value="fail">Failed</option><option value="skip">Skipped</option></select>
<select id="kind" aria-label="Error kind"><option value="all">All error kinds</option></select>
<select id="tag" aria-label="Tag"><option value="all">All tags</option></select>
<select id="group" aria-label="Failure cause"><option value="all">All causes</option></select>
<span id="shown" class="muted">Showing ${total} of ${total} cases</span></div>
<div class="controls"><button id="prev" class="act" type="button">Previous</button><span id="page-info" class="muted"></span><button id="next" class="act" type="button">Next</button><select id="page-size" aria-label="Cases per page">${sizes}</select></div>
<table class="cases" id="case-table"><thead><tr><th>#</th><th>Case</th><th>Status</th><th>Reason</th><th>Error kind</th><th>Tools called</th><th>Duration</th><th>Attempts</th></tr></thead></table></section>`;
}

/** A word as a POSIX shell reads it: quoted when it holds anything but safe characters. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `850ms`, `4.2s`, `95s`: a duration on an axis. */
function seconds(v: number): string {
  if (v === 0) return "0s";
  if (v < 1) return `${Math.round(v * 1000)}ms`;
  return v < 100 ? `${Number(v.toFixed(1))}s` : `${Math.round(v)}s`;
}

function describeSelection(selection: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of ["name", "tag", "set"]) {
    const v = selection[key];
    if (Array.isArray(v) && v.length > 0) parts.push(`${key}: ${v.join(", ")}`);
  }
  const cases = selection.cases;
  const count = Array.isArray(cases) ? cases.length : typeof cases === "number" ? cases : null;
  return `${parts.length ? parts.join(" \u00b7 ") : "every case"}${count !== null ? ` (${count} selected)` : ""}`;
}

function dlRow(k: string, v: string): string {
  return `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`;
}

function statusBadge(status: RunRecord["status"]): string {
  const cls = status === "passed" ? "b-pass" : status === "failed" ? "b-fail" : `b-${status}`;
  return `<span class="badge ${cls}">${esc(status.toUpperCase())}</span>`;
}

/**
 * The cards of the run's statistics, from its stored summary (shared/result/run-statistics.ts): the
 * pass rate's interval, pass^k at the largest k, the mean judge score and scorer value with theirs.
 * None for a run recorded before them.
 */
export function statisticsCards(summary: Record<string, unknown> | null): [string, string][] {
  const s = summary ?? {};
  const pair = (v: unknown): [number, number] | null => (Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === "number") ? [v[0] as number, v[1] as number] : null);
  const level = typeof s.confidence === "number" ? `${Number((s.confidence * 100).toFixed(1))}%` : null;
  const ci = pair(s.pass_rate_ci);
  const cards: [string, string][] = [];
  if (ci && level && typeof s.trial_pass_rate === "number") {
    cards.push([`Pass rate, ${level} interval${s.pass_rate_method === "clustered" ? " (mean of cases' rates)" : ""}`, formatPercentInterval(s.trial_pass_rate, ci)]);
  }
  const hat = s.pass_hat_k && typeof s.pass_hat_k === "object" ? Object.entries(s.pass_hat_k as Record<string, unknown>) : [];
  const last = hat.at(-1);
  if (last && typeof last[1] === "number") cards.push([`pass^${last[0]}`, `${(last[1] * 100).toFixed(1)}%`]);
  for (const [label, mean, interval, digits] of [["Judge score", s.judge_score_mean, s.judge_score_ci, 1], ["Scorer value", s.score_value_mean, s.score_value_ci, 2]] as const) {
    const range = pair(interval);
    if (typeof mean === "number" && range) cards.push([label, `${mean.toFixed(digits)} [${range[0].toFixed(digits)}, ${range[1].toFixed(digits)}]`]);
  }
  return cards;
}
