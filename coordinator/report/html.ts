import type { CaseRecord, RunRecord } from "../store/records.ts";
import { barChart, columnChart, esc, lineChart, type ChartDatum } from "./svg-chart.ts";

/**
 * `evalfleet report --html`: one self-contained HTML file for one recorded run. Everything is
 * inline (CSS, a few lines of script, SVG charts); a Content-Security-Policy forbids any fetch, so
 * the page renders the same offline, from a CI artifact or an email attachment. Pure: records in,
 * HTML text out. Every recorded string is escaped (an agent's output is untrusted).
 */

/** What the report shows. */
export interface HtmlReportInput {
  run: RunRecord;
  cases: readonly CaseRecord[];
  /** Runs of the same suite (and branch) up to and including `run`, oldest first, for the trends. */
  history: readonly RunRecord[];
  /** When the report was made (ISO 8601). Default: now. */
  generatedAt?: string;
}

/** Slowest cases shown in their chart. */
const SLOWEST = 10;
/** Longest output shown per case; the rest is in the database. */
const OUTPUT_LIMIT = 20_000;

const STYLE = `
:root{--fg:#1d2433;--muted:#5b6478;--line:#d9dee8;--bg:#f6f8fb;--pass:#1a7f37;--fail:#cf222e;--skip:#9a6700;--accent:#2f6feb}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:16px 24px}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}
main{padding:16px 24px;max-width:1400px}.muted{color:var(--muted)}.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}
.b-pass{background:var(--pass)}.b-fail{background:var(--fail)}.b-skip{background:var(--skip)}.b-running,.b-cancelled,.b-incomplete{background:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin:12px 0 18px}.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.card .k{font-size:12px;color:var(--muted)}.card .v{font-size:20px;font-weight:600}
.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:14px;margin-bottom:18px}.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px;overflow:auto}
.chart .grid{stroke:var(--line)}.chart .axis,.chart .val{font-size:11px;fill:var(--muted)}.chart .line{fill:none;stroke:var(--accent);stroke-width:2}.chart .pt{fill:var(--accent)}.chart .pt.current{fill:var(--fail);stroke:#fff;stroke-width:1.5}.chart .bar{fill:var(--accent)}
.controls{display:flex;gap:10px;align-items:center;margin:8px 0 10px;flex-wrap:wrap}input#filter{padding:6px 10px;border:1px solid var(--line);border-radius:6px;min-width:280px}select#status{padding:6px;border:1px solid var(--line);border-radius:6px}
table.cases{width:100%;border-collapse:collapse;background:#fff;border:1px solid var(--line)}table.cases th,table.cases td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
table.cases th{background:#eef1f6;font-weight:600;position:sticky;top:0}td.num{text-align:right;white-space:nowrap}td.reason{max-width:420px}
button.toggle{border:0;background:none;cursor:pointer;color:var(--accent);font:inherit;padding:0}tr.details td{background:#fbfcfe}
dl{display:grid;grid-template-columns:170px 1fr;gap:4px 12px;margin:4px 0}dt{color:var(--muted)}dd{margin:0;word-break:break-word}pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f9;border:1px solid var(--line);border-radius:6px;padding:8px;margin:0;max-height:360px;overflow:auto}
.s-pass{color:var(--pass);font-weight:600}.s-fail{color:var(--fail);font-weight:600}.s-skip{color:var(--skip);font-weight:600}[hidden]{display:none !important}
`;

// Runs when the page loads; no network, no libraries. Filters cases by text and status, and
// opens a case's details.
const SCRIPT = `
(function(){
  var q=document.getElementById('filter'),s=document.getElementById('status'),shown=document.getElementById('shown');
  var rows=Array.prototype.slice.call(document.querySelectorAll('tbody.case'));
  function apply(){
    var text=q.value.trim().toLowerCase(),st=s.value,n=0;
    rows.forEach(function(tb){var ok=(st==='all'||tb.getAttribute('data-status')===st)&&(!text||tb.getAttribute('data-search').indexOf(text)>=0);tb.hidden=!ok;if(ok)n++;});
    shown.textContent='Showing '+n+' of '+rows.length+' cases';
  }
  q.addEventListener('input',apply);s.addEventListener('change',apply);
  document.addEventListener('click',function(e){
    var b=e.target.closest&&e.target.closest('button.toggle');if(!b)return;
    var d=b.closest('tbody').querySelector('tr.details');d.hidden=!d.hidden;b.setAttribute('aria-expanded',String(!d.hidden));
  });
  apply();
})();
`;

/** Builds the report; see the module comment. */
export function renderHtmlReport(input: HtmlReportInput): string {
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
<title>${esc(title)}</title><style>${STYLE}</style></head><body>`;
  const status = statusBadge(run.status);
  const header = `<header><h1>${esc(run.suiteName)} ${status}</h1><div class="muted">run <code>${esc(run.id)}</code> \u00b7 started ${esc(run.startedAt)}${run.finishedAt ? ` \u00b7 finished ${esc(run.finishedAt)}` : ""}${run.gitBranch ? ` \u00b7 branch ${esc(run.gitBranch)}` : ""}${run.gitCommit ? ` \u00b7 commit ${esc(run.gitCommit.slice(0, 12))}` : ""}</div></header>`;
  const cards = [
    ["Cases", String(counts.total)],
    ["Passed", String(counts.passed)],
    ["Failed", String(failed)],
    ["Skipped", String(counts.skipped)],
    ["Pass rate", counts.total ? `${((100 * counts.passed) / counts.total).toFixed(1)}%` : "\u2014"],
    ["Duration", run.durationSeconds !== null ? `${run.durationSeconds}s` : "\u2014"],
    ["Judge model", run.judgeModel ?? "\u2014"],
    ["Timeout", run.timeoutSeconds !== null ? `${run.timeoutSeconds}s` : "\u2014"],
  ]
    .map(([k, v]) => `<div class="card"><div class="k">${esc(k)}</div><div class="v">${esc(v)}</div></div>`)
    .join("");
  const summary = `<section id="summary"><h2>Summary</h2><div class="cards">${cards}</div><dl>${dlRow("Selection", describeSelection(run.selection))}${dlRow("Configuration", Object.entries(run.config).map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`).join(" \u00b7 ") || "\u2014")}${dlRow("Suite", `${run.suitePath ?? run.suiteName}${run.suiteFingerprint ? ` (fingerprint ${run.suiteFingerprint.slice(0, 12)})` : ""}`)}${dlRow("Recorded by", run.host ?? "\u2014")}</dl></section>`;
  return `${head}${header}<main>${summary}${charts(run, cases, history)}${caseTable(cases)}<p class="muted">Generated ${esc(generatedAt)} by evalfleet.</p></main><script>${SCRIPT}</script></body></html>\n`;
}

function charts(run: RunRecord, cases: readonly CaseRecord[], history: readonly RunRecord[]): string {
  const label = (r: RunRecord): string => r.startedAt.slice(5, 16).replace("T", " ");
  const tip = (r: RunRecord): string => `${r.id} \u00b7 ${r.startedAt} \u00b7 ${r.passed ?? "?"}/${r.total ?? "?"} passed \u00b7 ${r.durationSeconds ?? "?"}s`;
  const rate: ChartDatum[] = history.map((r) => ({ label: label(r), value: r.total ? (100 * (r.passed ?? 0)) / r.total : 0, title: tip(r), highlight: r.id === run.id }));
  const duration: ChartDatum[] = history.map((r) => ({ label: label(r), value: r.durationSeconds ?? 0, title: tip(r), highlight: r.id === run.id }));
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
    panel("chart-pass-rate", `Pass rate, last ${history.length} run${history.length === 1 ? "" : "s"}`, lineChart(rate, { title: "Pass rate per run", max: 100, format: (v) => `${Math.round(v)}%` })),
    panel("chart-duration", `Duration, last ${history.length} run${history.length === 1 ? "" : "s"}`, lineChart(duration, { title: "Duration per run (seconds)", format: seconds })),
    panel(
      "chart-scores",
      "Judge score distribution (numeric judges)",
      scores.length > 0 ? columnChart(bins, { title: "Judge scores 1-10", format: (v) => String(v) }) : `<p class="muted">No numeric judge scores in this run.</p>`,
    ),
    panel("chart-slowest", `Slowest cases`, slowest.length > 0 ? barChart(slowest, { title: "Slowest cases (seconds)", format: seconds }) : `<p class="muted">No case ran.</p>`),
  ].join("")}</section>`;
}

function caseTable(cases: readonly CaseRecord[]): string {
  const body = cases.map(caseRows).join("");
  return `<section id="cases"><h2>Cases</h2><div class="controls"><input id="filter" type="search" placeholder="Filter: name, tag, reason, error, tool" aria-label="Filter cases">
<select id="status" aria-label="Status"><option value="all">All statuses</option><option value="pass">Passed</option><option value="fail">Failed</option><option value="skip">Skipped</option></select>
<span id="shown" class="muted">Showing ${cases.length} of ${cases.length} cases</span></div>
<table class="cases"><thead><tr><th>#</th><th>Case</th><th>Status</th><th>Judge reason</th><th>Tools called</th><th>Duration</th><th>Attempts</th></tr></thead>${body}</table></section>`;
}

function caseRows(c: CaseRecord): string {
  const status = c.skipped ? "skip" : c.passed ? "pass" : "fail";
  const search = [c.name, ...c.tags, c.judgeReason ?? "", c.error ?? "", ...c.toolsCalled, c.scoreReason ?? ""].join(" ").toLowerCase();
  const reason = c.judgeReason ?? (c.error ? `error: ${c.error}` : "");
  const main = `<tr class="row"><td class="num">${c.index}</td><td><button class="toggle" type="button" aria-expanded="false">${esc(c.name)}</button></td><td class="s-${status}">${status.toUpperCase()}</td><td class="reason">${esc(reason)}</td><td>${esc(c.toolsCalled.join(", "))}</td><td class="num">${c.durationSeconds}s</td><td class="num">${c.attempts}</td></tr>`;
  return `<tbody class="case" data-status="${status}" data-name="${esc(c.name)}" data-search="${esc(search)}">${main}<tr class="details" hidden><td></td><td colspan="6">${details(c)}</td></tr></tbody>`;
}

function details(c: CaseRecord): string {
  const verdict = (v: boolean | null): string => (v === null ? "\u2014" : v ? "PASS" : "FAIL");
  const list = (xs: readonly string[]): string => (xs.length ? xs.join(", ") : "none");
  const rows: string[] = [
    dlRow("Component", c.agentId ? `agent ${c.agentId}` : c.teamId ? `team ${c.teamId}` : "\u2014"),
    dlRow("Tags", list(c.tags)),
    dlRow("Session", c.sessionId || "\u2014"),
    dlRow("Worker / attempts", `${c.worker ?? "\u2014"} / ${c.attempts}`),
    dlRow("Duration", `${c.durationSeconds}s${c.timedOut ? " (timed out)" : ""}`),
    dlRow("Judge", `${verdict(c.judgePassed)}${c.judgeScore !== null ? ` \u00b7 score ${c.judgeScore}` : ""}${c.judgeReason ? ` \u00b7 ${c.judgeReason}` : ""}`),
  ];
  if (c.reliabilityPassed !== null || c.reliability) {
    const r = c.reliability;
    rows.push(
      dlRow(
        "Reliability",
        `${verdict(c.reliabilityPassed)}${r ? ` \u00b7 passed: ${list(r.passedToolCalls)} \u00b7 missing: ${list(r.missingToolCalls)} \u00b7 additional: ${list(r.additionalToolCalls)} \u00b7 failed: ${list(r.failedToolCalls)}` : ""}`,
      ),
    );
  }
  if (c.scoreValue !== null) rows.push(dlRow("Scorer", `${verdict(c.scorePassed)} \u00b7 value ${c.scoreValue}${c.scoreReason ? ` \u00b7 ${c.scoreReason}` : ""}`));
  if (c.scoreDetail) rows.push(`<dt>Scorer detail</dt><dd><pre>${esc(JSON.stringify(c.scoreDetail, null, 2))}</pre></dd>`);
  rows.push(dlRow("Tools called", list(c.toolsCalled)));
  if (c.inputTokens !== null || c.outputTokens !== null || c.totalTokens !== null || c.costUsd !== null) {
    rows.push(dlRow("Tokens / cost", `in ${c.inputTokens ?? "?"} \u00b7 out ${c.outputTokens ?? "?"} \u00b7 total ${c.totalTokens ?? "?"}${c.costUsd !== null ? ` \u00b7 $${c.costUsd}` : ""}`));
  }
  if (c.error) rows.push(`<dt>Error</dt><dd><pre class="error">${esc(c.error)}</pre></dd>`);
  const output = c.output ?? "";
  rows.push(`<dt>Output</dt><dd><pre class="output">${esc(output.length > OUTPUT_LIMIT ? `${output.slice(0, OUTPUT_LIMIT)}\n... (${output.length - OUTPUT_LIMIT} more characters in the database)` : output || "(empty)")}</pre></dd>`);
  return `<dl>${rows.join("")}</dl>`;
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
