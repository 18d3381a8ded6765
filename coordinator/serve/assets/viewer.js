// evalfleet viewer (`evalfleet serve`): plain browser JavaScript, no framework, no CDN.
// Every value from the store is put on the page with textContent or as an attribute value set
// through the DOM, never as markup: a case named <img onerror=...> shows as that text.
"use strict";

(function () {
  const app = document.getElementById("app");
  const page = app.dataset.page;

  /** An element with attributes and children (strings become text nodes). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, String(v));
    }
    for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
    return el;
  }

  async function api(path) {
    const res = await fetch(path, { headers: { Accept: "application/json" } });
    const body = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
    return body;
  }

  function fail(err) {
    app.replaceChildren(h("p", { class: "s-failed", id: "error" }, String(err && err.message ? err.message : err)));
  }

  const pct = (x) => (x === null || x === undefined ? "\u2014" : `${(x * 100).toFixed(1)}%`);
  const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : "\u2014");
  const statusCell = (s) => h("span", { class: `s-${s}` }, s);
  const enc = encodeURIComponent;

  /** Wilson 95% interval of k passes in n. */
  function wilson(k, n) {
    if (!n) return null;
    const z = 1.96, p = k / n, d = 1 + (z * z) / n;
    const c = (p + (z * z) / (2 * n)) / d, m = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
    return [Math.max(0, c - m), Math.min(1, c + m)];
  }

  /** A sparkline of pass rates (0-1), oldest first. */
  function sparkline(rates) {
    const ns = "http://www.w3.org/2000/svg", w = 80, hgt = 18;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "spark"); svg.setAttribute("width", w); svg.setAttribute("height", hgt);
    const pts = rates.filter((r) => r !== null);
    if (pts.length > 1) {
      const line = document.createElementNS(ns, "polyline");
      line.setAttribute("fill", "none"); line.setAttribute("stroke", "#1849a9"); line.setAttribute("stroke-width", "1.5");
      line.setAttribute("points", pts.map((r, i) => `${(i / (pts.length - 1)) * (w - 2) + 1},${(1 - r) * (hgt - 2) + 1}`).join(" "));
      svg.append(line);
    }
    return svg;
  }

  function runIdFromPath() { return decodeURIComponent(location.pathname.split("/")[2] || ""); }

  // ---------------------------------------------------------------- runs list
  async function runsPage() {
    const params = new URLSearchParams(location.search);
    const q = new URLSearchParams();
    for (const k of ["suite", "branch", "status"]) if (params.get(k)) q.set(k, params.get(k));
    q.set("limit", "100");
    const data = await api(`/api/runs?${q}`);
    const bySuite = new Map();
    for (const r of [...data.runs].reverse()) { if (!bySuite.has(r.suite_name)) bySuite.set(r.suite_name, []); bySuite.get(r.suite_name).push(r.pass_rate); }
    const body = h("tbody");
    const add = (runs) => { for (const r of runs) body.append(h("tr", { "data-run": r.id },
      h("td", {}, h("a", { href: `/runs/${enc(r.id)}` }, r.name || r.id)), h("td", {}, r.suite_name), h("td", {}, statusCell(r.status)),
      h("td", { class: "done" }, `${r.done}${r.total !== null ? ` / ${r.total}` : ""}`), h("td", {}, pct(r.pass_rate)),
      h("td", {}, sparkline(bySuite.get(r.suite_name) || [])), h("td", {}, r.git_branch || ""), h("td", {}, when(r.started_at)))); };
    add(data.runs);
    let cursor = data.next_cursor;
    const more = h("button", { type: "button", hidden: !cursor, onclick: async () => { q.set("cursor", cursor); const next = await api(`/api/runs?${q}`); add(next.runs); cursor = next.next_cursor; more.hidden = !cursor; } }, "more runs");
    app.replaceChildren(h("h1", {}, "Runs"),
      data.runs.length === 0 ? h("p", { class: "muted" }, "no runs recorded yet") : h("table", { id: "runs" }, h("thead", {}, h("tr", {}, ["run", "suite", "status", "done", "pass rate", "trend", "branch", "started"].map((t) => h("th", {}, t)))), body), more);
  }

  // ---------------------------------------------------------------- run page
  async function runPage() {
    const id = runIdFromPath();
    const run = await api(`/api/runs/${enc(id)}`);
    const params = new URLSearchParams(location.search);
    const state = { status: params.get("status") || "", error_kind: params.get("error_kind") || "", tag: params.get("tag") || "", q: params.get("q") || "", sort: params.get("sort") || "index", cursor: params.get("cursor") || "" };
    const summary = h("div", { id: "summary" });
    const causes = h("div", { id: "causes" });
    const table = h("tbody", { id: "cases-body" });
    const count = h("span", { id: "cases-total", class: "muted" });
    const pager = h("div", { class: "pager" });
    const stack = [];
    let selected = -1;

    function renderSummary(r) {
      const ran = r.passed + r.failed, ci = wilson(r.passed, ran);
      const cards = [["status", statusCell(r.status)], ["done", h("span", { id: "done" }, `${r.done}${r.total !== null ? ` / ${r.total}` : ""}`)], ["passed", r.passed], ["failed", r.failed], ["errors", r.errors], ["skipped", r.skipped],
        ["pass rate", `${pct(r.pass_rate)}${ci ? ` (95% ${pct(ci[0])}\u2013${pct(ci[1])})` : ""}`]];
      if (r.cost_usd !== null && r.cost_usd !== undefined) cards.push(["cost", `$${Number(r.cost_usd).toFixed(4)}`]);
      const kids = [h("div", { class: "cards" }, cards.map(([k, v]) => h("div", { class: "card" }, h("span", { class: "muted" }, k), h("b", {}, v))))];
      const p = r.progress;
      if (p) {
        const frac = p.total ? p.done / p.total : 0;
        kids.push(h("div", { id: "progress" }, h("div", { class: "bar" }, h("span", { style: null })),
          h("p", { class: "muted" }, `${p.done}${p.total !== null ? ` of ${p.total}` : ""} recorded`, p.rate_per_second ? ` \u00b7 ${p.rate_per_second.toFixed(2)}/s` : "", p.eta_seconds !== null && p.eta_seconds !== undefined ? ` \u00b7 ETA ${Math.round(p.eta_seconds)} s` : "", ` \u00b7 spent $${Number(p.cost_usd || 0).toFixed(4)}`),
          h("table", {}, h("tbody", {}, (p.workers || []).map((w) => h("tr", {}, h("td", {}, w.worker || "(local)"), h("td", {}, `${w.done} cases`), h("td", { class: "muted" }, `last ${when(w.last_at)}`)))))));
        kids[kids.length - 1].querySelector(".bar span").style.width = `${Math.round(frac * 100)}%`;
      }
      summary.replaceChildren(...kids);
      document.getElementById("live").hidden = r.status !== "running";
    }

    async function renderCauses() {
      const c = await api(`/api/runs/${enc(id)}/causes`);
      causes.replaceChildren(c.causes.length === 0 ? "" : h("details", { open: true }, h("summary", {}, "Failures by cause"),
        h("table", {}, h("tbody", {}, c.causes.map((g) => h("tr", {}, h("td", {}, String(g.count)), h("td", {}, g.error_kind || "check"), h("td", {}, h("a", { href: `/runs/${enc(id)}/cases/${g.first_index}` }, g.reason || "(no reason)"))))))));
    }

    function syncUrl() {
      const u = new URLSearchParams();
      for (const [k, v] of Object.entries(state)) if (v && !(k === "sort" && v === "index")) u.set(k, v);
      history.replaceState(null, "", `${location.pathname}${u.toString() ? `?${u}` : ""}`);
    }

    async function loadCases() {
      const u = new URLSearchParams();
      for (const [k, v] of Object.entries(state)) if (v) u.set(k, v);
      u.set("limit", "50");
      const data = await api(`/api/runs/${enc(id)}/cases?${u}`);
      table.replaceChildren(...data.cases.map((c) => h("tr", { "data-index": c.index, class: `case-row s-row-${c.status}` },
        h("td", {}, String(c.index)), h("td", { class: "name" }, h("a", { href: `/runs/${enc(id)}/cases/${c.index}` }, c.name)), h("td", {}, statusCell(c.status)),
        h("td", {}, c.error_kind || ""), h("td", {}, `${c.duration_seconds.toFixed(2)} s`), h("td", { class: "reason" }, c.reason || ""))));
      count.textContent = `${data.total} matching`;
      pager.replaceChildren(
        h("button", { type: "button", id: "prev", disabled: stack.length === 0, onclick: () => { state.cursor = stack.pop() || ""; syncUrl(); loadCases().catch(fail); } }, "\u2190 previous"),
        h("button", { type: "button", id: "next", disabled: !data.next_cursor, onclick: () => { stack.push(state.cursor); state.cursor = data.next_cursor; syncUrl(); loadCases().catch(fail); } }, "next \u2192"),
        h("span", { class: "kbd" }, "keys: j/k move, Enter opens, f failures, / search"));
      selected = Math.min(selected, data.cases.length - 1);
      highlight();
    }

    function highlight() {
      const rows = table.querySelectorAll("tr");
      rows.forEach((r, i) => r.classList.toggle("selected", i === selected));
      if (rows[selected]) rows[selected].scrollIntoView({ block: "nearest" });
    }

    const field = (name, el) => { el.name = name; el.value = state[name]; return h("label", {}, name.replace("_", " "), el); };
    const form = h("form", { class: "filters", id: "filters", onsubmit: (e) => {
      e.preventDefault();
      for (const el of form.elements) if (el.name) state[el.name] = el.value.trim();
      state.cursor = ""; stack.length = 0; selected = -1; syncUrl(); loadCases().catch(fail);
    } },
      field("status", h("select", {}, ["", "failed", "error", "passed", "skipped"].map((s) => h("option", { value: s }, s || "any")))),
      field("q", h("input", { type: "search", placeholder: "search names, inputs, outputs, reasons", size: 36 })),
      field("error_kind", h("input", { size: 8 })), field("tag", h("input", { size: 10 })),
      field("sort", h("select", {}, ["index", "name", "duration", "-duration"].map((s) => h("option", { value: s }, s)))),
      h("button", { type: "submit" }, "apply"));
    for (const el of form.elements) if (el.name) el.value = state[el.name];

    app.replaceChildren(h("h1", {}, run.name || run.id), h("p", { class: "muted" }, `${run.suite_name} \u00b7 started ${when(run.started_at)}${run.git_branch ? ` \u00b7 ${run.git_branch}` : ""}`),
      summary, causes, h("h2", {}, "Cases ", count), form, h("table", { id: "cases" }, h("thead", {}, h("tr", {}, ["#", "name", "status", "kind", "time", "reason"].map((t) => h("th", {}, t)))), table), pager);
    renderSummary(run);
    await Promise.all([loadCases(), renderCauses()]);

    document.addEventListener("keydown", (e) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      const rows = table.querySelectorAll("tr");
      if (e.key === "j") { selected = Math.min(rows.length - 1, selected + 1); highlight(); }
      else if (e.key === "k") { selected = Math.max(0, selected - 1); highlight(); }
      else if (e.key === "Enter" && rows[selected]) location.href = rows[selected].querySelector("a").href;
      else if (e.key === "f") { form.elements.status.value = "failed"; form.requestSubmit(); }
      else if (e.key === "/") { e.preventDefault(); form.elements.q.focus(); }
      else return;
    });

    if (run.status === "running") {
      const events = new EventSource(`/api/events?run=${enc(id)}`);
      let pending = null;
      const refresh = () => { if (!pending) pending = setTimeout(() => { pending = null; loadCases().catch(() => undefined); renderCauses().catch(() => undefined); }, 250); };
      events.addEventListener("progress", (e) => renderSummary(JSON.parse(e.data)));
      events.addEventListener("result", refresh);
      events.addEventListener("end", () => { events.close(); api(`/api/runs/${enc(id)}`).then(renderSummary).catch(() => undefined); refresh(); });
      // The token was revoked: stop (reconnecting would only be refused), and say why.
      events.addEventListener("revoked", (e) => { events.close(); app.prepend(h("p", { class: "s-failed", id: "error" }, JSON.parse(e.data).error)); });
    }
  }

  // ---------------------------------------------------------------- case page
  function content(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "string") return v;
    if (Array.isArray(v)) return v.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : JSON.stringify(p))).join("\n");
    return JSON.stringify(v, null, 2);
  }

  function conversation(t) {
    if (!t) return h("p", { class: "muted" }, "no transcript recorded");
    if (t.unreadable) return h("p", { class: "muted" }, `transcript unreadable: ${t.unreadable}`);
    const out = [];
    const msgs = (t.run && t.run.messages) || [];
    if (msgs.length === 0 && t.input !== undefined) out.push(h("div", { class: "msg role-user" }, h("div", { class: "role" }, "input"), h("pre", {}, content(t.input))));
    for (const m of msgs) {
      out.push(h("div", { class: `msg role-${m.role}` }, h("div", { class: "role" }, m.role), content(m.content) ? h("pre", {}, content(m.content)) : null,
        (m.toolCalls || []).map((tc) => h("div", { class: "tool" }, h("b", {}, `call ${tc.function.name}`), h("pre", {}, tc.function.arguments || "")))));
    }
    for (const tool of (t.run && t.run.tools) || []) {
      out.push(h("div", { class: "tool" }, h("b", {}, `tool ${tool.toolName || "?"}`), h("pre", {}, JSON.stringify(tool.toolArgs || {}, null, 2)), h("div", { class: "muted" }, "result"), h("pre", {}, content(tool.result)),
        tool.toolCallError ? h("pre", { class: "s-failed" }, content(tool.toolCallError)) : null));
    }
    if (t.run && msgs.length === 0) out.push(h("div", { class: "msg role-assistant" }, h("div", { class: "role" }, "output"), h("pre", {}, content(t.run.content))));
    if (t.error) out.push(h("pre", { class: "s-failed" }, t.error));
    if (t.cut) out.push(h("p", { class: "muted" }, `cut from ${t.cut.originalBytes} bytes to its bound`));
    return h("div", { id: "transcript" }, out);
  }

  async function casePage() {
    const parts = location.pathname.split("/");
    const id = decodeURIComponent(parts[2]), index = Number(parts[4]);
    const d = await api(`/api/runs/${enc(id)}/cases/${index}`);
    const c = d.case;
    const rows = (pairs) => h("table", {}, h("tbody", {}, pairs.filter(([, v]) => v !== null && v !== undefined && v !== "").map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v instanceof Node ? v : String(v))))));
    const diff = d.baseline && d.baseline.diff ? h("div", { class: "diff", id: "diff" }, d.baseline.diff.map((l) => h("div", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "" }, `${l.op} ${l.text}`))) : h("p", { class: "muted" }, d.baseline ? "baseline output too large to diff" : "no earlier run of this case");
    const trials = c.repeats || null;
    app.replaceChildren(
      h("p", {}, h("a", { href: `/runs/${enc(id)}` }, `\u2190 run ${id}`), h("span", { class: "kbd" }, "  keys: j next failure, u back to the run")),
      h("h1", { id: "case-name" }, c.name),
      rows([["status", statusCell(d.status)], ["error kind", c.error_kind], ["error", c.error], ["duration", `${c.duration_seconds} s`], ["attempts", c.attempts], ["worker", c.worker], ["tags", (c.tags || []).join(", ")]]),
      h("h2", {}, "Judge and scores"),
      rows([["judge passed", d.judge.passed], ["judge score", d.judge.score], ["judge reason", d.judge.reason], ["score", d.score.value], ["score reason", d.score.reason], ["reliability", d.reliability ? JSON.stringify(d.reliability) : null]]),
      h("h2", {}, "Output"), h("pre", { id: "output" }, c.output || ""),
      h("h2", {}, "Transcript"), conversation(d.transcript),
      trials ? [h("h2", {}, "Trials"), h("pre", {}, JSON.stringify(trials, null, 2))] : null,
      h("h2", {}, "Against the baseline run"), diff,
      h("h2", {}, "History"), h("table", { id: "history" }, h("tbody", {}, d.history.map((x) => h("tr", {}, h("td", {}, h("a", { href: `/runs/${enc(x.run_id)}/cases/${x.case_index}` }, x.run_id)), h("td", {}, when(x.started_at)), h("td", {}, statusCell(x.status)))))));
    document.addEventListener("keydown", async (e) => {
      if (e.target instanceof HTMLInputElement) return;
      if (e.key === "u") location.href = `/runs/${enc(id)}?status=failed`;
      if (e.key === "j") {
        // The cursor of the case table sorted by index is the last index shown: the next failure is the first after this one.
        const cursor = btoa(JSON.stringify([index, index])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        const next = await api(`/api/runs/${enc(id)}/cases?status=failed&limit=1&cursor=${cursor}`).catch(() => null);
        if (next && next.cases[0]) location.href = `/runs/${enc(id)}/cases/${next.cases[0].index}`;
      }
    });
  }

  // ---------------------------------------------------------------- compare and flaky
  function formPage(title, names, onSubmit) {
    const params = new URLSearchParams(location.search);
    const result = h("div", { id: "result" });
    const form = h("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); const u = new URLSearchParams(); for (const n of names) if (form.elements[n].value) u.set(n, form.elements[n].value); history.replaceState(null, "", `?${u}`); onSubmit(u, result).catch((err) => result.replaceChildren(h("p", { class: "s-failed", id: "error" }, err.message))); } },
      names.map((n) => h("label", {}, n, h("input", { name: n, value: params.get(n) || "" }))), h("button", { type: "submit" }, "show"));
    app.replaceChildren(h("h1", {}, title), form, result);
    if (names.every((n) => params.get(n))) form.requestSubmit();
  }

  const list = (title, names) => [h("h3", {}, `${title} (${names.length})`), h("ul", {}, names.slice(0, 500).map((n) => h("li", {}, n)))];

  function comparePage() {
    formPage("Compare two runs", ["a", "b"], async (u, out) => {
      const d = await api(`/api/compare?${u}`);
      out.replaceChildren(h("p", {}, `${d.a.id} \u2192 ${d.b.id}: ${d.unchanged} unchanged`), list("pass \u2192 fail", d.regressions), list("fail \u2192 pass", d.fixes), list("only in A", d.onlyInA), list("only in B", d.onlyInB));
    });
  }

  function flakyPage() {
    formPage("Flaky cases", ["suite"], async (u, out) => {
      const d = await api(`/api/flaky?${u}`);
      const flaky = d.cases.filter((c) => c.flips > 0);
      out.replaceChildren(h("p", { class: "muted" }, `${d.runs.length} runs, ${flaky.length} flaky cases`),
        h("table", { id: "flaky" }, h("tbody", {}, flaky.map((c) => h("tr", {}, h("td", {}, c.name), h("td", {}, `${c.flips} flips`), h("td", {}, pct(c.passRate)), h("td", {}, c.outcomes.map((o) => (o === "pass" ? "\u2713" : o === "fail" ? "\u2717" : "\u00b7")).join("")))))));
    });
  }

  const pages = { runs: runsPage, run: runPage, case: casePage, compare: async () => comparePage(), flaky: async () => flakyPage() };
  (pages[page] || runsPage)().catch(fail);
})();
