import { gzipSync } from "node:zlib";
import type { CaseRecord } from "../store/case-record.ts";
import { failureCause } from "../failure-cause.ts";

/**
 * The data the HTML report's page script works from, built once when the report is written.
 * Two parts, so that a 50,000-case report opens fast and stays small:
 * - the table's rows, plain JSON (one short array per case: what the table, the search and the
 *   filters need, the reason cut to {@link REASON_LIMIT});
 * - each case's details (every field, the case's JSON entry, its output and transcript), in gzip
 *   chunks of {@link CHUNK_CASES} cases, base64 text, inflated by the page only when a case is
 *   opened (the browser's DecompressionStream: no library, no fetch).
 * Pure apart from compression; no I/O.
 */

/** Cases per compressed details chunk: large enough to compress well, small enough to open at once. */
export const CHUNK_CASES = 64;
/** Longest reason a table row holds (characters); the details hold it whole. */
export const REASON_LIMIT = 300;
/** Longest output kept per case (characters); the rest is in the database. */
export const OUTPUT_LIMIT = 20_000;
/** Failure groups listed; the rest are counted together. */
export const GROUP_LIMIT = 200;
/**
 * Transcript JSON a report holds at most (bytes, before compression): past it, the remaining
 * cases' transcripts are left in the store and the page says so. Bounds the file and the memory
 * of writing it for a run of very long conversations.
 */
export const TRANSCRIPT_BUDGET_BYTES = 64 * 1024 * 1024;

/** A row of the table: `[position, index, name, status, reason, kind, tags, tools, seconds, attempts, group]`. */
export type ReportRow = [number, number, string, "pass" | "fail" | "skip", string, string, string[], string, number, number, number];

/** One group of failures with the same cause. */
export interface ReportGroup {
  label: string;
  kind: string | null;
  check: string;
  count: number;
}

/** Everything the page script reads. */
export interface ReportData {
  rows: ReportRow[];
  groups: ReportGroup[];
  /** Failed cases whose group is past {@link GROUP_LIMIT}. */
  otherFailures: number;
  kinds: string[];
  tags: string[];
  /** base64 gzip of a JSON array of details, {@link CHUNK_CASES} per chunk, in row order. */
  chunks: string[];
}

/** A case's details, as the page renders them when it is opened. */
export interface CaseDetail {
  record: Omit<CaseRecord, "report" | "output"> & { output: string | null; outputCut: number };
  /** The case's JSON report entry (its output cut as `record.output`). */
  json: CaseRecord["report"];
  /** Every failed check with its whole reason. */
  checks: Array<{ check: string; reason: string }>;
  /** The case's run output (messages, tool calls, members), when the store kept it; else null. */
  transcript: unknown;
}

/** Builds the page's data; `transcriptOf` gives a case's stored run output, when there is one. */
export function buildReportData(cases: readonly CaseRecord[], transcriptOf: (c: CaseRecord) => unknown = () => null): ReportData {
  let budget = TRANSCRIPT_BUDGET_BYTES;
  const transcriptWithin = (t: unknown): unknown => {
    if (t === null || budget <= 0) return t === null ? null : { omitted: `left in the results store: this report holds ${TRANSCRIPT_BUDGET_BYTES / 2 ** 20} MiB of transcripts at most` };
    budget -= Buffer.byteLength(JSON.stringify(t));
    return t;
  };
  const groups = new Map<string, { group: ReportGroup; id: number }>();
  const kinds = new Set<string>();
  const tags = new Set<string>();
  const rows: ReportRow[] = [];
  const details: CaseDetail[] = [];
  cases.forEach((c, position) => {
    const status = c.skipped ? "skip" : c.passed ? "pass" : "fail";
    const cause = failureCause(c);
    let groupId = -1;
    if (cause && status === "fail") {
      let g = groups.get(cause.groupKey);
      if (!g) {
        g = { group: { label: cause.groupLabel, kind: cause.kind, check: cause.checks[0]!.check, count: 0 }, id: groups.size };
        groups.set(cause.groupKey, g);
      }
      g.group.count++;
      groupId = g.id;
    }
    if (cause?.kind) kinds.add(cause.kind);
    for (const t of c.tags) tags.add(t);
    const reason = cause ? cause.reason : "";
    rows.push([position, c.index, c.name, status, cut(reason, REASON_LIMIT), cause?.kind ?? "", c.tags, c.toolsCalled.join(", "), c.durationSeconds, c.attempts, groupId]);
    const { report, output, ...rest } = c;
    const text = output ?? null;
    const outputCut = text !== null && text.length > OUTPUT_LIMIT ? text.length - OUTPUT_LIMIT : 0;
    const kept = outputCut > 0 ? text!.slice(0, OUTPUT_LIMIT) : text;
    details.push({
      record: { ...rest, output: kept, outputCut },
      json: report && typeof report === "object" ? { ...report, output: kept } : report,
      checks: cause ? cause.checks : [],
      transcript: transcriptWithin(transcriptOf(c) ?? null),
    });
  });
  // Largest groups first; a group's id is its position in this order.
  const ordered = [...groups.values()].sort((a, b) => b.group.count - a.group.count || a.id - b.id);
  const renumber = new Map<number, number>();
  ordered.forEach((g, i) => renumber.set(g.id, i < GROUP_LIMIT ? i : -2));
  for (const r of rows) if (r[10] >= 0) r[10] = renumber.get(r[10])!;
  const kept = ordered.slice(0, GROUP_LIMIT).map((g) => g.group);
  const chunks: string[] = [];
  for (let i = 0; i < details.length; i += CHUNK_CASES) chunks.push(gzipSync(JSON.stringify(details.slice(i, i + CHUNK_CASES)), { level: 6 }).toString("base64"));
  return {
    rows,
    groups: kept,
    otherFailures: ordered.slice(GROUP_LIMIT).reduce((n, g) => n + g.group.count, 0),
    kinds: [...kinds].sort(),
    tags: [...tags].sort(),
    chunks,
  };
}

/** JSON safe inside a `<script type="application/json">` element: no `<` can close it. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function cut(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}\u2026` : s;
}
