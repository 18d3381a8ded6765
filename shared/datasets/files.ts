// runs in: both
import { createHash } from "node:crypto";
import { closeSync, createReadStream, openSync, readFileSync, readSync, statSync } from "node:fs";
import { csvParse, csvParseSync, yaml } from "./parsers.ts";
import { csvRecordToRow } from "./csv-rows.ts";
import type { DatasetFormat } from "./dataset.ts";
import type { RowProblem } from "./problem-text.ts";
import { jsonErrorText } from "./expected-output-methods.ts";

/**
 * Reading dataset files row by row. JSONL, JSON and CSV are streamed: each row is parsed,
 * handed over with its line and byte range, and let go, so a file of any size is validated in
 * bounded memory, and a row is read again from its byte range when its case runs. YAML is parsed
 * as one document (it is meant for hand-written sets) and its rows are kept.
 */

/** One row found in a file: where it is, and its parsed value or why it could not be parsed. */
export interface ScannedRow {
  /** 1-based line of the row's first character. */
  line: number;
  /** Byte range of the row in the file (what {@link readRowAt} reads again). */
  offset: number;
  length: number;
  /** The parsed row (an object for a valid row; a CSV record is already read into fields). */
  raw?: unknown;
  /** Problems of the row's syntax or cells. */
  problems: RowProblem[];
}

/** A problem that stops reading a file (it is not a sequence of rows, or its syntax is broken). */
export class DatasetFileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** What reading a whole file found besides its rows. */
export interface ScanSummary {
  /** sha256 (hex) of the file's bytes: part of the suite fingerprint. */
  digest: string;
  size: number;
  mtimeMs: number;
  /** CSV: the header row. */
  csvHeader: string[] | null;
  /** YAML: every row, kept (by position in the sequence). */
  heldRows: boolean;
}

/**
 * Reads every row of a file, in order, calling `onRow` for each. Resolves with the file's digest
 * and header; rejects with a {@link DatasetFileError} when the file cannot be read as rows.
 */
export async function scanDataset(path: string, format: DatasetFormat, onRow: (row: ScannedRow) => void): Promise<ScanSummary> {
  const stat = statSync(path);
  const hash = createHash("sha256");
  let csvHeader: string[] | null = null;
  if (format === "yaml") {
    const bytes = readFileSync(path);
    hash.update(bytes);
    scanYaml(bytes.toString("utf8"), onRow);
  } else if (format === "jsonl") {
    await scanJsonl(path, hash, onRow);
  } else if (format === "json") {
    await scanJson(path, hash, onRow);
  } else {
    csvHeader = await scanCsv(path, hash, onRow);
  }
  return { digest: hash.digest("hex"), size: stat.size, mtimeMs: stat.mtimeMs, csvHeader, heldRows: format === "yaml" };
}

const CHUNK = 1 << 20;

async function scanJsonl(path: string, hash: ReturnType<typeof createHash>, onRow: (row: ScannedRow) => void): Promise<void> {
  let carry: Buffer = Buffer.alloc(0);
  let carryOffset = 0;
  let line = 1;
  const emit = (bytes: Buffer, offset: number, lineNo: number): void => {
    let start = 0;
    let end = bytes.length;
    if (offset === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
    if (end > start && bytes[end - 1] === 0x0d) end--;
    const text = bytes.toString("utf8", start, end);
    if (text.trim() === "") return;
    onRow(parsedRow(text, lineNo, offset + start, end - start));
  };
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      emit(buf.subarray(start, nl), carryOffset + start, line++);
      start = nl + 1;
    }
    // Copy the unfinished line: a subarray would keep the whole chunk alive.
    carry = Buffer.from(buf.subarray(start));
    carryOffset += start;
  }
  if (carry.length > 0) emit(carry, carryOffset, line);
}

/** Parses one JSON row; a syntax error is a problem of that row, with the line it is on. */
function parsedRow(text: string, line: number, offset: number, length: number): ScannedRow {
  try {
    return { line, offset, length, raw: JSON.parse(text), problems: [] };
  } catch (err) {
    const message = (err as Error).message;
    // "... at position 12": report the line of the position inside a multi-line element.
    const at = /position (\d+)/.exec(message);
    const errorLine = at ? line + countNewlines(text, Number(at[1])) : line;
    return { line: errorLine, offset, length, problems: [{ field: null, message: `invalid JSON: ${jsonErrorText(err)}` }] };
  }
}

function countNewlines(text: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/**
 * A JSON array of rows, streamed: a byte-level scanner finds where each element starts and ends
 * (tracking strings and nesting), and each element is parsed on its own.
 */
async function scanJson(path: string, hash: ReturnType<typeof createHash>, onRow: (row: ScannedRow) => void): Promise<void> {
  const WS = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
  let phase: "start" | "array" | "done" = "start";
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let afterComma = false;
  let elemStart = -1;
  let elemLine = 0;
  let lastNonWs = -1;
  // Bytes from `bufOffset` on (the unfinished element, if any).
  let buf: Buffer = Buffer.alloc(0);
  let bufOffset = 0;
  let first = true;

  const finishElement = (): void => {
    const bytes = buf.subarray(elemStart - bufOffset, lastNonWs + 1 - bufOffset);
    onRow(parsedRow(bytes.toString("utf8"), elemLine, elemStart, lastNonWs + 1 - elemStart));
    elemStart = -1;
  };

  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    const scanFrom = bufOffset + buf.length;
    buf = buf.length > 0 ? Buffer.concat([buf, chunk]) : chunk;
    for (let abs = scanFrom; abs < bufOffset + buf.length; abs++) {
      const b = buf[abs - bufOffset]!;
      if (first) {
        first = false;
        if (b === 0xef && buf[abs - bufOffset + 1] === 0xbb) {
          abs += 2; // a UTF-8 byte order mark
          continue;
        }
      }
      if (b === 0x0a) line++;
      if (phase === "start") {
        if (WS(b)) continue;
        if (b !== 0x5b) throw new DatasetFileError(line, `expected a JSON array of test cases ([{...}, ...]), found ${JSON.stringify(String.fromCharCode(b))}`);
        phase = "array";
        continue;
      }
      if (phase === "done") {
        if (!WS(b)) throw new DatasetFileError(line, "unexpected content after the array's closing ]");
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (b === 0x5c) escaped = true;
        else if (b === 0x22) inString = false;
        lastNonWs = abs;
        continue;
      }
      if (depth === 0 && (b === 0x2c || b === 0x5d)) {
        if (elemStart >= 0) finishElement();
        else if (b === 0x2c) onRow({ line, offset: abs, length: 1, problems: [{ field: null, message: "invalid JSON: a ',' with no row before it" }] });
        // "[1,]": a trailing comma. "[]" is an empty dataset.
        else if (afterComma) onRow({ line, offset: abs, length: 1, problems: [{ field: null, message: "invalid JSON: a trailing ',' before ']'" }] });
        afterComma = b === 0x2c;
        if (b === 0x5d) phase = "done";
        continue;
      }
      if (WS(b)) continue;
      // A value after a complete one without a comma stays in the element, and its parse says so.
      if (depth === 0 && elemStart < 0) {
        elemStart = abs;
        elemLine = line;
        afterComma = false;
      }
      lastNonWs = abs;
      if (b === 0x22) inString = true;
      else if (b === 0x7b || b === 0x5b) depth++;
      else if (b === 0x7d || b === 0x5d) depth = Math.max(0, depth - 1);
    }
    // Keep only the unfinished element: rows already parsed are let go.
    const keepFrom = elemStart >= 0 ? elemStart : bufOffset + buf.length;
    buf = Buffer.from(buf.subarray(keepFrom - bufOffset));
    bufOffset = keepFrom;
  }
  if (phase === "array") throw new DatasetFileError(line, "the JSON array is not closed (missing ])");
}

/** CSV: a header row, then one record per row; records may span lines (quoted newlines). */
async function scanCsv(path: string, hash: ReturnType<typeof createHash>, onRow: (row: ScannedRow) => void): Promise<string[] | null> {
  const lines = new LineIndex();
  const input = createReadStream(path, { highWaterMark: CHUNK });
  input.on("data", (chunk) => {
    hash.update(chunk as Buffer);
    lines.push(chunk as Buffer);
  });
  const parser = input.pipe(csvParse().parse({ ...CSV_OPTIONS, bom: true, info: true }));
  let header: string[] | null = null;
  let prevEnd = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { bytes: number } }>) {
      const start = lines.contentStart(prevEnd);
      const line = lines.lineAt(start);
      const end = item.info.bytes;
      if (header === null) {
        header = item.record.map((c) => c.trim());
        onRow({ line, offset: start, length: end - start, raw: header, problems: [] });
      } else {
        const { row, problems } = csvRecordToRow(header, item.record);
        onRow({ line, offset: prevEnd, length: end - prevEnd, raw: row, problems });
      }
      prevEnd = end;
    }
  } catch (err) {
    const e = err as { message?: string; lines?: number };
    throw new DatasetFileError(e.lines ?? lines.lineAt(prevEnd), `invalid CSV: ${String(e.message ?? err).replace(/ on line \d+$/, "")}`);
  }
  return header;
}

/** The options every CSV read uses, at load and when a row is read again. */
const CSV_OPTIONS = { skip_empty_lines: true, relax_column_count: true } as const;

/**
 * Line numbers of byte offsets in a file read in chunks, for offsets asked in increasing order:
 * chunks behind the last offset asked are dropped.
 */
class LineIndex {
  readonly #chunks: { base: number; bytes: Buffer }[] = [];
  #next = 0;
  #cursor = 0;
  #line = 1;

  push(bytes: Buffer): void {
    this.#chunks.push({ base: this.#next, bytes });
    this.#next += bytes.length;
  }

  #byte(offset: number): number | undefined {
    while (this.#chunks.length > 0 && this.#chunks[0]!.base + this.#chunks[0]!.bytes.length <= offset) this.#chunks.shift();
    const c = this.#chunks[0];
    return c && offset >= c.base ? c.bytes[offset - c.base] : undefined;
  }

  /** The 1-based line of `offset`. */
  lineAt(offset: number): number {
    for (; this.#cursor < offset; this.#cursor++) if (this.#byte(this.#cursor) === 0x0a) this.#line++;
    return this.#line;
  }

  /** The first offset at or after `offset` that is not a line break or a byte order mark. */
  contentStart(offset: number): number {
    let o = offset;
    if (o === 0 && this.#byte(0) === 0xef && this.#byte(1) === 0xbb && this.#byte(2) === 0xbf) o = 3;
    for (let b = this.#byte(o); b === 0x0a || b === 0x0d; b = this.#byte(++o));
    return o;
  }
}

function scanYaml(text: string, onRow: (row: ScannedRow) => void): void {
  const { isSeq, LineCounter, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new DatasetFileError(counter.linePos(e.pos[0]).line, `invalid YAML: ${e.message.split("\n")[0]}${doc.errors.length > 1 ? ` (and ${doc.errors.length - 1} more YAML errors)` : ""}`);
  }
  if (doc.contents === null) return;
  if (!isSeq(doc.contents)) {
    throw new DatasetFileError(counter.linePos(doc.contents.range?.[0] ?? 0).line, "expected a YAML sequence of test cases (- name: ...)");
  }
  const rows = doc.toJS({ maxAliasCount: 10_000 }) as unknown[];
  doc.contents.items.forEach((item, i) => {
    const range = (item as { range?: [number, number, number] }).range ?? [0, 0, 0];
    onRow({ line: counter.linePos(range[0]).line, offset: range[0], length: range[1] - range[0], raw: rows[i], problems: [] });
  });
}

/** Raised when a dataset file changed after the suite was loaded (its rows' byte ranges no longer hold). */
export class DatasetChangedError extends Error {}

/** How long a check that a dataset file is unchanged holds, in ms: a stat per row read cost more than the read. */
const STAT_EVERY_MS = 500;

/** Each dataset file this process (or thread) reads rows from: one descriptor, kept open, and when it was last checked. */
const openFiles = new Map<string, { fd: number; checkedAt: number; size: number; mtimeMs: number }>();

function closeOpenDatasets(): void {
  for (const entry of openFiles.values()) {
    try {
      closeSync(entry.fd);
    } catch {
      // already closed
    }
  }
  openFiles.clear();
}

/**
 * The descriptor of a dataset file, after checking (at most every {@link STAT_EVERY_MS}) that
 * the file is the one that was loaded. A change in between is still caught when the row read
 * is not the row expected (a different name, or not a row at all).
 */
function openDataset(file: { path: string; size: number; mtimeMs: number }): number {
  const now = Date.now();
  let entry = openFiles.get(file.path);
  if (entry && entry.size === file.size && entry.mtimeMs === file.mtimeMs && now - entry.checkedAt < STAT_EVERY_MS) return entry.fd;
  const stat = statSync(file.path);
  if (stat.size !== file.size || stat.mtimeMs !== file.mtimeMs) {
    throw new DatasetChangedError(`the file changed since the suite was loaded (size ${file.size} -> ${stat.size} bytes): load the suite again`);
  }
  if (!entry || entry.size !== file.size || entry.mtimeMs !== file.mtimeMs) {
    // Descriptors are the process's, not the thread's: close them when this thread (or process) ends.
    if (openFiles.size === 0) process.once("exit", closeOpenDatasets);
    if (entry) closeSync(entry.fd);
    entry = { fd: openSync(file.path, "r"), checkedAt: now, size: file.size, mtimeMs: file.mtimeMs };
    openFiles.set(file.path, entry);
  }
  entry.checkedAt = now;
  return entry.fd;
}

/**
 * Reads one row again from its byte range (JSONL, JSON, CSV), after checking that the file is the
 * one that was loaded. Returns the raw row, as {@link scanDataset} gave it.
 */
export function readRowAt(
  file: { path: string; format: DatasetFormat; size: number; mtimeMs: number; csvHeader: readonly string[] | null },
  offset: number,
  length: number,
): { raw: unknown; problems: RowProblem[] } {
  const fd = openDataset(file);
  const bytes = Buffer.allocUnsafe(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, bytes, read, length - read, offset + read);
    if (n === 0) break;
    read += n;
  }
  if (read < length) throw new DatasetChangedError(`the file is shorter than when the suite was loaded: load the suite again`);
  if (file.format === "csv") {
    const records = csvParseSync().parse(bytes, { ...CSV_OPTIONS }) as string[][];
    if (records.length !== 1) throw new DatasetChangedError(`expected one CSV record at byte ${offset}, found ${records.length}`);
    const { row, problems } = csvRecordToRow(file.csvHeader ?? [], records[0]!);
    return { raw: row, problems };
  }
  const row = parsedRow(bytes.toString("utf8"), 0, offset, length);
  return { raw: row.raw, problems: row.problems };
}
