/**
 * Small inline SVG charts for the HTML report: a line chart over runs, vertical bars (a
 * histogram), horizontal bars (slowest cases). Pure: data in, SVG text out; no script, no fonts
 * or images to fetch. Every label is escaped.
 */

/** Escapes text for HTML and SVG (element content and attribute values). */
export function esc(text: unknown): string {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** One point or bar. */
export interface ChartDatum {
  /** Short axis label. */
  label: string;
  value: number;
  /** Tooltip (an SVG `<title>`). */
  title?: string;
  /** Marks the point of the run the report is about. */
  highlight?: boolean;
  /**
   * Marks a point not comparable with the highlighted one (a run of another selection): drawn
   * hollow, left out of the line. Default false.
   */
  other?: boolean;
}

/** Options shared by the charts. */
export interface ChartOptions {
  /** Accessible name of the chart. */
  title: string;
  /** Formats a value for the axis and the tooltips. */
  format?: (v: number) => string;
  width?: number;
  height?: number;
  /** Top of the value axis; default the largest value (or 1). */
  max?: number;
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(2));
const n = (v: number): string => (Math.round(v * 10) / 10).toString();

/** A line chart with a point per datum, oldest first. */
export function lineChart(data: readonly ChartDatum[], o: ChartOptions): string {
  const w = o.width ?? 520;
  const h = o.height ?? 200;
  const pad = { l: 48, r: 12, t: 12, b: 28 };
  const format = o.format ?? fmt;
  const max = o.max ?? Math.max(1e-9, ...data.map((d) => d.value));
  const x = (i: number): number => pad.l + (data.length <= 1 ? (w - pad.l - pad.r) / 2 : (i * (w - pad.l - pad.r)) / (data.length - 1));
  const y = (v: number): number => pad.t + (h - pad.t - pad.b) * (1 - Math.min(v, max) / max);
  const grid = [0, 0.5, 1]
    .map((f) => `<line class="grid" x1="${pad.l}" x2="${w - pad.r}" y1="${n(y(max * f))}" y2="${n(y(max * f))}"/><text class="axis" x="${pad.l - 6}" y="${n(y(max * f) + 4)}" text-anchor="end">${esc(format(max * f))}</text>`)
    .join("");
  const line = data.map((d, i) => ({ d, i })).filter(({ d }) => !d.other);
  const path = line.map(({ d, i }, k) => `${k === 0 ? "M" : "L"}${n(x(i))},${n(y(d.value))}`).join(" ");
  const points = data
    .map((d, i) => `<circle class="${d.highlight ? "pt current" : d.other ? "pt other" : "pt"}" cx="${n(x(i))}" cy="${n(y(d.value))}" r="${d.highlight ? 5 : 3.5}"><title>${esc(d.title ?? `${d.label}: ${format(d.value)}`)}</title></circle>`)
    .join("");
  const every = Math.max(1, Math.ceil(data.length / 8));
  const labels = data
    .map((d, i) => {
      if (!(i % every === 0 || i === data.length - 1)) return "";
      // The outermost labels hang inwards, so they are not cut at the edges.
      const anchor = data.length > 1 && i === 0 ? "start" : data.length > 1 && i === data.length - 1 ? "end" : "middle";
      return `<text class="axis" x="${n(x(i))}" y="${h - 8}" text-anchor="${anchor}">${esc(d.label)}</text>`;
    })
    .join("");
  return `<svg class="chart" role="img" aria-label="${esc(o.title)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}"><title>${esc(o.title)}</title>${grid}${line.length ? `<path class="line" d="${path}"/>` : ""}${points}${labels}</svg>`;
}

/** Vertical bars, one per datum (a histogram when the labels are the bins). */
export function columnChart(data: readonly ChartDatum[], o: ChartOptions): string {
  const w = o.width ?? 520;
  const h = o.height ?? 200;
  const pad = { l: 36, r: 8, t: 12, b: 28 };
  const format = o.format ?? fmt;
  const max = o.max ?? Math.max(1, ...data.map((d) => d.value));
  const slot = (w - pad.l - pad.r) / Math.max(1, data.length);
  const bar = Math.max(2, slot * 0.7);
  const y = (v: number): number => pad.t + (h - pad.t - pad.b) * (1 - v / max);
  const bars = data
    .map((d, i) => {
      const x = pad.l + i * slot + (slot - bar) / 2;
      const top = y(d.value);
      return `<rect class="bar" x="${n(x)}" y="${n(top)}" width="${n(bar)}" height="${n(h - pad.b - top)}"><title>${esc(d.title ?? `${d.label}: ${format(d.value)}`)}</title></rect><text class="axis" x="${n(x + bar / 2)}" y="${h - 10}" text-anchor="middle">${esc(d.label)}</text>${d.value > 0 ? `<text class="val" x="${n(x + bar / 2)}" y="${n(top - 3)}" text-anchor="middle">${esc(format(d.value))}</text>` : ""}`;
    })
    .join("");
  return `<svg class="chart" role="img" aria-label="${esc(o.title)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}"><title>${esc(o.title)}</title><line class="grid" x1="${pad.l}" x2="${w - pad.r}" y1="${h - pad.b}" y2="${h - pad.b}"/>${bars}</svg>`;
}

/** Horizontal bars, largest first as given, with the label on the left. */
export function barChart(data: readonly ChartDatum[], o: ChartOptions): string {
  const w = o.width ?? 520;
  const row = 22;
  const labelW = 190;
  const h = Math.max(row, data.length * row) + 8;
  const format = o.format ?? fmt;
  const max = o.max ?? Math.max(1e-9, ...data.map((d) => d.value));
  const span = w - labelW - 70;
  const bars = data
    .map((d, i) => {
      const y = 4 + i * row;
      const len = Math.max(1, (span * d.value) / max);
      const label = d.label.length > 28 ? `${d.label.slice(0, 27)}\u2026` : d.label;
      return `<text class="axis" x="${labelW - 6}" y="${y + 15}" text-anchor="end">${esc(label)}</text><rect class="bar" x="${labelW}" y="${y + 3}" width="${n(len)}" height="${row - 8}"><title>${esc(d.title ?? `${d.label}: ${format(d.value)}`)}</title></rect><text class="val" x="${n(labelW + len + 4)}" y="${y + 15}">${esc(format(d.value))}</text>`;
    })
    .join("");
  return `<svg class="chart" role="img" aria-label="${esc(o.title)}" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}"><title>${esc(o.title)}</title>${bars}</svg>`;
}
