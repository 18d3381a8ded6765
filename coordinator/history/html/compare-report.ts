import { redactJson } from "../../../shared/redaction/secrets.ts";
import type { RunRecord } from "../store/run-record.ts";
import type { CaseRecord } from "../store/case-record.ts";
import { compareRuns } from "../compare.ts";
import { failureCause } from "../failure-cause.ts";
import { outcomeOf } from "../outcome.ts";
import { diffLines } from "../text-diff.ts";
import { esc } from "./svg-chart.ts";

/**
 * `evalfleet compare A B --html FILE`: the two runs side by side in one self-contained page, the
 * flips first (pass to fail, then fail to pass), then score changes, cases skipped in one run,
 * cases in one run only; each changed case opens (a `<details>`, no script) on both runs' status,
 * reason and output, and the line diff of the outputs. Pure: records in, HTML text out; every
 * recorded string is escaped and redacted first, as in the report (report.ts).
 */

/** What the page compares. */
export interface CompareHtmlInput {
  a: RunRecord;
  b: RunRecord;
  casesA: readonly CaseRecord[];
  casesB: readonly CaseRecord[];
  /** When the page was made (ISO 8601). Default: now. */
  generatedAt?: string;
}

/** Changed cases shown with their outputs and diff; past this, by name only. */
export const COMPARE_DETAIL_LIMIT = 2_000;
/** Longest output diffed per side (characters). */
const DIFF_TEXT_LIMIT = 20_000;

const STYLE = `
:root{--fg:#1d2433;--muted:#5b6478;--line:#d9dee8;--bg:#f6f8fb;--pass:#1a7f37;--fail:#cf222e;--skip:#9a6700;--accent:#2f6feb}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{background:#fff;border-bottom:1px solid var(--line);padding:16px 24px}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:18px 0 8px}main{padding:8px 24px 24px;max-width:1500px}
.muted{color:var(--muted)}.runs{display:grid;grid-template-columns:1fr 1fr;gap:14px;margin-top:12px}.run{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.run h3{margin:0 0 4px;font-size:14px}details.case{background:#fff;border:1px solid var(--line);border-radius:6px;margin:4px 0}details.case>summary{cursor:pointer;padding:6px 10px;display:grid;grid-template-columns:minmax(180px,1.2fr) 1fr 1fr;gap:12px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px;padding:6px 10px}pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f9;border:1px solid var(--line);border-radius:6px;padding:8px;margin:4px 0;max-height:320px;overflow:auto}
.diff{margin:0 10px 10px}.diff .del{background:#ffebe9;display:block}.diff .add{background:#dafbe1;display:block}.diff .same{display:block;color:var(--muted)}
.s-pass{color:var(--pass);font-weight:600}.s-fail{color:var(--fail);font-weight:600}.s-skip{color:var(--skip);font-weight:600}.s-none{color:var(--muted)}
.counts{display:flex;gap:18px;flex-wrap:wrap;margin:10px 0}.counts b{font-size:18px}
`;

/** Builds the page; see the module comment. */
export function renderCompareHtml(given: CompareHtmlInput): string {
  const { a, b, casesA, casesB, generatedAt } = redactJson(given);
  const c = compareRuns(casesA, casesB);
  const byA = new Map(casesA.map((x) => [x.name, x]));
  const byB = new Map(casesB.map((x) => [x.name, x]));
  let detailed = 0;
  const block = (name: string): string => {
    const x = byA.get(name) ?? null;
    const y = byB.get(name) ?? null;
    const full = detailed++ < COMPARE_DETAIL_LIMIT;
    const summary = `<summary><span class="name">${esc(name)}</span>${side(x)}${side(y)}</summary>`;
    if (!full) return `<details class="case" data-name="${esc(name)}">${summary}</details>`;
    const outA = (x?.output ?? "").slice(0, DIFF_TEXT_LIMIT);
    const outB = (y?.output ?? "").slice(0, DIFF_TEXT_LIMIT);
    const diff =
      x && y
        ? outA === outB
          ? `<p class="muted diff">Same output.</p>`
          : `<pre class="diff">${diffLines(outA, outB)
              .map((l) => `<span class="${l.op === "-" ? "del" : l.op === "+" ? "add" : "same"}">${esc(`${l.op} ${l.text}`)}</span>`)
              .join("")}</pre>`
        : "";
    return `<details class="case" data-name="${esc(name)}">${summary}<div class="side">${detail(x, a.id)}${detail(y, b.id)}</div>${diff}</details>`;
  };
  const section = (id: string, title: string, names: readonly string[]): string =>
    names.length === 0 ? "" : `<section id="${id}"><h2>${esc(title)} (${names.length})</h2>${names.map(block).join("")}</section>`;
  const scoreNames = c.scoreChanges.map((s) => s.name).filter((n) => !c.regressions.includes(n) && !c.fixes.includes(n));
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${esc(`compare ${a.id} \u2192 ${b.id}`)}</title><style>${STYLE}</style></head><body>`;
  const counts = `<div class="counts"><span><b id="n-regressions">${c.regressions.length}</b> pass \u2192 fail</span><span><b id="n-fixes">${c.fixes.length}</b> fail \u2192 pass</span><span><b>${c.scoreChanges.length}</b> score changes</span><span><b>${c.skipChanges.length}</b> skipped in one run</span><span><b>${c.onlyInA.length}</b> only in A</span><span><b>${c.onlyInB.length}</b> only in B</span><span><b id="n-unchanged">${c.unchanged}</b> unchanged</span></div>`;
  const header = `<header><h1>${esc(a.suiteName === b.suiteName ? a.suiteName : `${a.suiteName} / ${b.suiteName}`)}: compare</h1><div class="runs">${runCard("A", a, casesA)}${runCard("B", b, casesB)}</div>${counts}</header>`;
  const body = [
    section("regressions", "Pass \u2192 fail", c.regressions),
    section("fixes", "Fail \u2192 pass", c.fixes),
    section("scores", "Score changes", scoreNames),
    section("skips", "Skipped in one run", c.skipChanges.map((s) => s.name)),
    section("only-a", `Only in A (${a.id})`, c.onlyInA),
    section("only-b", `Only in B (${b.id})`, c.onlyInB),
  ].join("");
  const more = detailed > COMPARE_DETAIL_LIMIT ? `<p class="muted">The first ${COMPARE_DETAIL_LIMIT} changed cases open on their outputs and diff; ${detailed - COMPARE_DETAIL_LIMIT} more are listed by name.</p>` : "";
  return `${head}${header}<main>${body || `<p>No case changed outcome or score.</p>`}${more}<p class="muted">Generated ${esc(generatedAt ?? new Date().toISOString())} by evalfleet.</p></main></body></html>\n`;
}

function runCard(label: string, r: RunRecord, cases: readonly CaseRecord[]): string {
  const passed = cases.filter((x) => x.passed && !x.skipped).length;
  return `<div class="run" id="run-${label.toLowerCase()}"><h3>${label}: run <code>${esc(r.id)}</code></h3><div class="muted">${esc(r.startedAt)} \u00b7 ${esc(r.status)} \u00b7 ${passed}/${cases.length} passed${r.durationSeconds !== null ? ` \u00b7 ${r.durationSeconds}s` : ""}${r.gitBranch ? ` \u00b7 ${esc(r.gitBranch)}` : ""}${r.gitCommit ? ` \u00b7 ${esc(r.gitCommit.slice(0, 12))}` : ""}</div></div>`;
}

function side(c: CaseRecord | null): string {
  if (!c) return `<span class="s-none">not in this run</span>`;
  const o = outcomeOf(c);
  const cause = failureCause(c);
  const score = [c.judgeScore !== null ? `judge ${c.judgeScore}` : "", c.scoreValue !== null ? `scorer ${c.scoreValue}` : ""].filter(Boolean).join(", ");
  return `<span><span class="s-${o}">${o.toUpperCase()}</span>${score ? ` <span class="muted">(${esc(score)})</span>` : ""}${cause ? ` ${esc(cause.reason.length > 200 ? `${cause.reason.slice(0, 199)}\u2026` : cause.reason)}` : ""}</span>`;
}

function detail(c: CaseRecord | null, runId: string): string {
  if (!c) return `<div class="muted">Not in run ${esc(runId)}.</div>`;
  const cause = failureCause(c);
  return `<div><div class="muted">run ${esc(runId)} \u00b7 ${c.durationSeconds}s \u00b7 tools: ${esc(c.toolsCalled.join(", ") || "none")}</div>${cause ? `<pre class="reason">${esc(cause.reason)}</pre>` : ""}<pre class="output">${esc(c.output ?? "(empty)")}</pre></div>`;
}
