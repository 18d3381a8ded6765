import { closeSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { CaseResult } from "../../shared/result/result.ts";
import type { CaseResultData } from "../../shared/wire/result-data.ts";
import { privateTempDir } from "../../shared/runtime/user-temp-dir.ts";

/**
 * A run's case results on disk, not in the coordinator's heap (issue 29): each accepted result is
 * appended as one JSON record (its data, `CaseResult.toData()`) to a file of this user's temporary
 * folder, and read back by declaration index when a report walks the run. Per case the spool keeps
 * 12 bytes (the record's offset and length, in typed arrays). The file is unlinked as soon as it is
 * opened, so it goes with the process whatever happens (a crash, a kill); its descriptor is closed
 * by {@link ResultSpool.close}, or when the spool is collected. Where unlinking an open file is
 * refused, it is removed at close or at the process's exit.
 *
 * Writes go through a staging buffer written out when full (one write per
 * {@link STAGE_BYTES}); a record still staged is read from the buffer. A result that cannot be
 * written (a JSON-less value in it, a full disk) is kept in memory instead: nothing is lost.
 */

/** Bytes staged before a write to the file. */
const STAGE_BYTES = 256 * 1024;

/** Descriptors (and paths left to remove) of spools collected without a close. */
const collected = new FinalizationRegistry<{ fd: number; path: string | null }>((held) => release(held.fd, held.path));
/** Paths of spools whose file could not be unlinked while open, removed at exit. */
const leftovers = new Set<string>();
let exitHook = false;

function release(fd: number, path: string | null): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
  if (path !== null) {
    leftovers.delete(path);
    try {
      unlinkSync(path);
    } catch {
      // Already gone.
    }
  }
}

/** A run's results in a temporary file, by declaration index; see the module comment. */
export class ResultSpool {
  /** Where each index's record starts in the file, in bytes; -1 for none. */
  readonly #offsets: Float64Array;
  /** Each index's record length, in bytes. */
  readonly #lengths: Uint32Array;
  /** Results that could not be written, by index. */
  readonly #inMemory = new Map<number, CaseResult>();
  readonly #stage = Buffer.allocUnsafe(STAGE_BYTES);
  #staged = 0;
  /** Bytes in the file. */
  #flushed = 0;
  #read = Buffer.allocUnsafe(4096);
  #fd: number | null;
  #path: string | null;
  /** Set once a write failed: later results stay in memory. */
  #broken = false;
  readonly #token = {};

  /** A spool for declaration indexes 0..capacity-1, in `dir` (default: this user's temporary folder); throws when the file cannot be opened. */
  constructor(capacity: number, dir: string | null = privateTempDir("results")) {
    if (dir === null) throw new Error("no private temporary folder for the result spool");
    this.#offsets = new Float64Array(capacity).fill(-1);
    this.#lengths = new Uint32Array(capacity);
    const path = join(dir, `run-${process.pid}-${randomBytes(6).toString("hex")}.jsonl`);
    this.#fd = openSync(path, "w+", 0o600);
    try {
      unlinkSync(path);
      this.#path = null;
    } catch {
      this.#path = path;
      leftovers.add(path);
      if (!exitHook) {
        exitHook = true;
        process.once("exit", () => {
          for (const p of leftovers) {
            try {
              unlinkSync(p);
            } catch {
              // Already gone.
            }
          }
        });
      }
    }
    collected.register(this, { fd: this.#fd, path: this.#path }, this.#token);
  }

  /** Bytes written to the spool so far (staged ones included). */
  get bytes(): number {
    return this.#flushed + this.#staged;
  }

  /** Keeps `result` as it is now (a copy: later changes to the object are not seen); a later put for its index replaces it. */
  put(result: CaseResult): void {
    const index = result.index;
    if (!(index >= 0 && index < this.#offsets.length)) throw new RangeError(`result index ${index} outside the spool (0-${this.#offsets.length - 1})`);
    let json: string;
    try {
      if (this.#broken || this.#fd === null) throw new Error("spool unusable");
      json = JSON.stringify(result.toData());
    } catch {
      this.#keepInMemory(result);
      return;
    }
    try {
      // A UTF-16 unit is at most 3 bytes of UTF-8: room for that is room enough.
      if (this.#staged + json.length * 3 > STAGE_BYTES) this.#flush();
      const at = this.#flushed + this.#staged;
      let length: number;
      if (json.length * 3 > STAGE_BYTES) {
        const bytes = Buffer.from(json, "utf8");
        writeAll(this.#fd, bytes, at);
        this.#flushed += bytes.length;
        length = bytes.length;
      } else {
        length = this.#stage.write(json, this.#staged, "utf8");
        this.#staged += length;
      }
      this.#offsets[index] = at;
      this.#lengths[index] = length;
      this.#inMemory.delete(index);
    } catch {
      this.#broken = true;
      this.#keepInMemory(result);
    }
  }

  /** The result kept for an index, as a fresh object, or undefined. Throws once the spool is closed. */
  get(index: number): CaseResult | undefined {
    const held = this.#inMemory.get(index);
    if (held) return held;
    const at = this.#offsets[index];
    if (at === undefined || at < 0) return undefined;
    if (this.#fd === null) throw new Error("the result spool is closed");
    const length = this.#lengths[index]!;
    let text: string;
    if (at >= this.#flushed) {
      const from = at - this.#flushed;
      text = this.#stage.toString("utf8", from, from + length);
    } else {
      if (this.#read.length < length) this.#read = Buffer.allocUnsafe(Math.max(length, this.#read.length * 2));
      let got = 0;
      while (got < length) {
        const n = readSync(this.#fd, this.#read, got, length - got, at + got);
        if (n === 0) throw new Error(`the result spool ended inside the record of case ${index}`);
        got += n;
      }
      text = this.#read.toString("utf8", 0, length);
    }
    return CaseResult.fromData(JSON.parse(text) as CaseResultData);
  }

  /** Closes the file (idempotent): nothing can be read afterwards. */
  close(): void {
    if (this.#fd === null) return;
    collected.unregister(this.#token);
    release(this.#fd, this.#path);
    this.#fd = null;
    this.#path = null;
  }

  #keepInMemory(result: CaseResult): void {
    this.#inMemory.set(result.index, result);
    this.#offsets[result.index] = -1;
  }

  #flush(): void {
    if (this.#staged === 0) return;
    writeAll(this.#fd!, this.#stage.subarray(0, this.#staged), this.#flushed);
    this.#flushed += this.#staged;
    this.#staged = 0;
  }
}

/** Writes every byte of `bytes` at `position` (a write may take fewer). */
function writeAll(fd: number, bytes: Buffer, position: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** A spool for the declaration indexes of `selected`, or null (`onError` told why) when none can be opened. */
export function openResultSpool(selected: readonly { index: number }[], onError: (err: unknown) => void): ResultSpool | null {
  try {
    return new ResultSpool(selected.reduce((n, s) => Math.max(n, s.index + 1), 0));
  } catch (err) {
    onError(err);
    return null;
  }
}
