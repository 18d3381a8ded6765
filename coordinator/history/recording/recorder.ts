import { createHash } from "node:crypto";
import type { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import { errorMessage } from "../../../shared/errors.ts";
import { STORE_HEARTBEAT_SECONDS } from "../store/run-heartbeat.ts";
import { redactJson, redactResult, redactText } from "../../../shared/redaction/secrets.ts";
import type { CaseInput } from "../../../shared/case/agent.ts";
import { withTimeout } from "../store/driver.ts";
import type { RunRecordStatus, RunStart } from "../store/run-record.ts";
import { CASE_COLUMNS, caseRow, inputText, type CaseRow } from "../store/case-row.ts";
import type { ResultsStore } from "../store/store.ts";

/**
 * Records one run while it runs (Agno's spec N, applied to a whole run):
 *
 * - the run's record is written when it starts (awaited: a store that cannot take it stops the
 *   run before any case runs) and when it ends, and its heartbeat every STORE_HEARTBEAT_SECONDS in
 *   between (a run whose process died is told by its heartbeat, and closed as `abandoned`);
 * - each case result is queued the moment it is known and written by one background writer, in
 *   batches; a case never waits for the database, so a slow or hung write cannot hold a case
 *   past its timeout, and a failed write never fails a case;
 * - a failed write is a warning, said once; later failures are counted and summed up at the end;
 * - at the end, every result is compared with what was queued (a hook error appended after the
 *   case ended, a write that failed, a result dropped from a full queue) and written again where
 *   it differs, so the records match the report; all of it bounded by the store's timeout;
 * - a case's transcript (its full run output) is written with its row, then let go of;
 * - nothing is written with a secret in it: the run's records and each result pass the process's
 *   redactor (shared/redaction/secrets.ts) first, as the reports do.
 */

/** Options of {@link RunRecorder.begin}. */
export interface RecorderOptions {
  /** The fingerprint of the checks of the case at an index (recorded with its result); default: none known (null). */
  checksOf?: (index: number) => string | null;
  /**
   * The input of the case at an index (recorded as text with its result, for search); default:
   * none known (null). Read once per row written: a dataset case reads its row from the file.
   */
  inputOf?: (index: number) => CaseInput | null;
  /** Told each warning as one line (without a `warning:` prefix). */
  onWarning: (message: string) => void;
  /** Results queued at most before new ones are dropped (and written at the end). Default 10000. */
  queueLimit?: number;
  /** Results per write. Default 200. */
  batchSize?: number;
  /** Bound, in seconds, on writing the rest at the end (and, again, on the run's final record): the recording's store bound, compiled by its caller (`--db-timeout`, `dbTimeout`). */
  flushTimeoutSeconds: number;
  /** Reopen a run already recorded (a resumed distributed run) instead of refusing its id. */
  resume?: boolean;
  /** The confidence of a repeated case's `pass_rate_ci` in its row (`--confidence`). Default: the statistics' (0.95). */
  confidence?: number;
}

/** What the recorder managed to write. */
export interface RecordingOutcome {
  /** Case results written. */
  recorded: number;
  /** Case results not written (failed, or still waiting when the bound passed). */
  notRecorded: number;
  /** The run's final record was written. */
  runRecorded: boolean;
}

/** Records one run; see the module comment. */
export class RunRecorder {
  readonly store: ResultsStore;
  readonly runId: string;
  readonly #o: Required<Omit<RecorderOptions, "resume" | "confidence">>;
  readonly #queue: CaseRow[] = [];
  /** Hash of the last row queued per case index; removed when its write fails. */
  readonly #sent = new Map<number, string>();
  /** Hash of the last row written per case index. */
  readonly #written = new Map<number, string>();
  #writing: Promise<void> | null = null;
  #failures = 0;
  #firstFailure: string | null = null;
  #dropped = 0;
  #warnedDrop = false;
  #finished = false;
  #heartbeat: NodeJS.Timeout | undefined;

  readonly #confidence: number | undefined;

  private constructor(store: ResultsStore, runId: string, options: RecorderOptions) {
    this.#confidence = options.confidence;
    this.store = store;
    this.runId = runId;
    this.#o = {
      onWarning: options.onWarning,
      queueLimit: options.queueLimit ?? 10_000,
      batchSize: options.batchSize ?? 200,
      flushTimeoutSeconds: options.flushTimeoutSeconds,
      checksOf: options.checksOf ?? (() => null),
      inputOf: options.inputOf ?? (() => null),
    };
  }

  /** Writes the run's start record, then returns a recorder for its cases. Throws when the store refuses it. */
  static async begin(store: ResultsStore, run: RunStart, options: RecorderOptions): Promise<RunRecorder> {
    await store.beginRun(redactJson(run), { resume: options.resume });
    const recorder = new RunRecorder(store, run.id, options);
    recorder.#heartbeat = setInterval(() => void store.heartbeat(run.id).catch(() => undefined), STORE_HEARTBEAT_SECONDS * 1000);
    recorder.#heartbeat.unref?.();
    return recorder;
  }

  /**
   * Queues one finished case. Never throws, never waits. The case's transcript goes with its row
   * and is dropped from the result: the run keeps only the compact result in memory, the
   * transcript lives until it is written.
   */
  record(result: CaseResult): void {
    if (this.#finished) return;
    try {
      this.#enqueue(caseRow(this.runId, redactResult(result), new Date().toISOString(), this.#o.checksOf(result.index), this.#confidence, this.#input(result.index)), false);
    } catch (err) {
      this.#fail(1, err);
    } finally {
      result.transcript = null;
    }
  }

  /**
   * Writes what is left and the run's final record, within the bound (twice the flush timeout at
   * most: once for the cases, once for the run record). Never throws: what could not be written
   * is warned about and counted.
   */
  async finish(suite: SuiteResult, status: RunRecordStatus): Promise<RecordingOutcome> {
    this.#finished = true;
    clearInterval(this.#heartbeat);
    const boundMs = this.#o.flushTimeoutSeconds * 1000;
    const deadline = Date.now() + boundMs;
    const recordedAt = new Date().toISOString();
    const final = new Map<number, string>();
    const confidence = suite.statistics.confidence;
    // The final form of every result: what changed after it was queued, or never reached the database.
    // Walked, not held: a spooled run's results are read back one at a time.
    for (const r of suite.cases()) {
      try {
        // Compared without its input (the hash leaves it out): the input is read again only for a row written again.
        const row = caseRow(this.runId, redactResult(r), recordedAt, this.#o.checksOf(r.index), confidence);
        const hash = hashRow(row);
        final.set(row.index, hash);
        if (this.#written.get(row.index) !== hash && this.#sent.get(row.index) !== hash) {
          this.#enqueue(caseRow(this.runId, redactResult(r), recordedAt, this.#o.checksOf(r.index), confidence, this.#input(r.index)), true);
        }
      } catch (err) {
        this.#fail(1, err);
      }
    }
    const drained = await this.#drain(deadline);
    let notRecorded = 0;
    for (const [index, hash] of final) if (this.#written.get(index) !== hash) notRecorded++;
    // A result whose row could not even be built is not recorded either.
    notRecorded += suite.total - final.size;
    if (!drained) {
      this.#o.onWarning(`results store ${this.store.display}: ${notRecorded} case result${notRecorded === 1 ? "" : "s"} of run ${this.runId} not recorded: the database did not answer within ${this.#o.flushTimeoutSeconds}s`);
    } else if (notRecorded > 0 && this.#failures > 0) {
      this.#o.onWarning(`results store ${this.store.display}: ${notRecorded} of ${suite.total} case results of run ${this.runId} not recorded (first error: ${this.#firstFailure})`);
    }
    let runRecorded = false;
    try {
      await withTimeout(
        this.store.finishRun(this.runId, redactJson({
          finishedAt: new Date().toISOString(),
          status,
          total: suite.total,
          passed: suite.passed,
          failed: suite.failed,
          skipped: suite.skipped,
          durationSeconds: suite.durationSeconds,
          summary: suite.summaryJSON() as unknown as Record<string, unknown>,
          startedAt: suite.startedAt,
        })),
        boundMs,
        () => new Error(`no answer within ${this.#o.flushTimeoutSeconds}s`),
      );
      runRecorded = true;
    } catch (err) {
      this.#o.onWarning(`results store ${this.store.display}: could not record the end of run ${this.runId}: ${oneLine(err)}`);
    }
    return { recorded: suite.total - notRecorded, notRecorded, runRecorded };
  }

  /** The case's input as redacted text, or null (unknown, or it could not be read: a dataset file that changed must not fail the recording). */
  #input(index: number): string | null {
    try {
      const text = inputText(this.#o.inputOf(index));
      return text === null ? null : redactText(text);
    } catch {
      return null;
    }
  }

  #enqueue(row: CaseRow, final: boolean): void {
    if (!final && this.#queue.length >= this.#o.queueLimit) {
      // The end of the run writes it (it is not in #sent): memory stays bounded if the database is slow.
      this.#dropped++;
      if (!this.#warnedDrop) {
        this.#warnedDrop = true;
        this.#o.onWarning(`results store ${this.store.display}: the database is falling behind (${this.#o.queueLimit} results waiting); the rest are written when the run ends`);
      }
      return;
    }
    this.#sent.set(row.index, hashRow(row));
    this.#queue.push(row);
    this.#kick();
  }

  #kick(): void {
    if (this.#writing) return;
    this.#writing = this.#writeLoop().finally(() => {
      this.#writing = null;
      // A row queued while the last write was finishing.
      if (this.#queue.length > 0) this.#kick();
    });
  }

  async #writeLoop(): Promise<void> {
    while (this.#queue.length > 0) {
      // The same case queued twice in one batch (its final form): keep the latest only.
      const batch = dedupe(this.#queue.splice(0, this.#o.batchSize));
      try {
        await this.store.writeCases(batch);
        for (const row of batch) this.#written.set(row.index, hashRow(row));
      } catch (err) {
        for (const row of batch) if (this.#sent.get(row.index) === hashRow(row)) this.#sent.delete(row.index);
        this.#fail(batch.length, err);
      }
    }
  }

  /** Resolves true once the queue is written, false if the deadline passes first. */
  async #drain(deadline: number): Promise<boolean> {
    for (;;) {
      const pending = this.#writing;
      if (!pending && this.#queue.length === 0) return true;
      if (!pending) this.#kick();
      const left = deadline - Date.now();
      if (left <= 0) return false;
      try {
        await withTimeout(this.#writing ?? Promise.resolve(), left, () => new Error("timeout"));
      } catch {
        return false;
      }
    }
  }

  #fail(count: number, err: unknown): void {
    this.#failures += count;
    if (this.#firstFailure !== null) return;
    this.#firstFailure = oneLine(err).replace(/^results store \S+: /, "");
    this.#o.onWarning(`results store ${this.store.display}: could not record case results of run ${this.runId}: ${this.#firstFailure}; the cases are not affected; later failures are counted, not shown`);
  }
}

function hashRow(row: CaseRow): string {
  // recorded_at changes every time a row is built; it is not part of what a case is. The input is
  // the case's, not its result's: it does not change, and finish() compares rows built without it.
  const values = row.values.filter((_, i) => i !== RECORDED_AT && i !== INPUT);
  return createHash("sha1").update(JSON.stringify(values)).digest("base64");
}
const RECORDED_AT = CASE_COLUMNS.indexOf("recorded_at");
const INPUT = CASE_COLUMNS.indexOf("input");

function dedupe(rows: CaseRow[]): CaseRow[] {
  const last = new Map<number, CaseRow>();
  for (const r of rows) last.set(r.index, r);
  return [...last.values()];
}

function oneLine(err: unknown): string {
  return (errorMessage(err).split("\n")[0] ?? "").trim();
}
