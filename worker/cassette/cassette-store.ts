// node:fs, used when a call needs it (as file-cache.ts): a thread that never records pays nothing.
import * as fs from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { CassetteSchema, cassetteFileName, type Cassette } from "../../shared/cassette/cassette.ts";

/**
 * Where cassettes live: a folder (`--record DIR`, `--replay DIR`), one JSON file per case and trial
 * (`cassetteFileName`), pretty-printed so a person can read and review it. A file is written whole
 * (a temporary file renamed into place), so a reader never sees half a cassette.
 */

/** A place cassettes are read from and written to. */
export interface CassetteStore {
  /** The case's cassette for `trial`; null when there is none. Throws CASSETTE_INVALID for a file that is not one, or is another case's or trial's. */
  load(caseName: string, trial: number, signal?: AbortSignal): Promise<Cassette | null>;
  /** Writes (replaces) the cassette of its case and trial. */
  save(cassette: Cassette, signal?: AbortSignal): Promise<void>;
}

/** Cassettes in the folder `dir` (created on the first write). */
export class DirCassetteStore implements CassetteStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** The file of a case's cassette. */
  path(caseName: string, trial: number): string {
    return join(this.dir, cassetteFileName(caseName, trial));
  }

  async load(caseName: string, trial: number, signal?: AbortSignal): Promise<Cassette | null> {
    const path = this.path(caseName, trial);
    let text: string;
    signal?.throwIfAborted();
    try {
      // Read in one blocking call: a cassette is one case's exchanges (kilobytes), and the four
      // thread-pool round trips of an asynchronous read (open, stat, read, close) cost a replayed
      // case more than its whole replay otherwise does (bench/replay.ts: about 190 us of 500).
      text = fs.readFileSync(path, "utf8");
    } catch (err) {
      if ((err as { code?: unknown }).code === "ENOENT") return null;
      throw new EvalfleetError(ErrorCode.CassetteInvalid, `cannot read the cassette ${path}: ${errorMessage(err)}`, { path });
    }
    return ownCassette(parseCassette(text, path), caseName, trial, path);
  }

  async save(cassette: Cassette, signal?: AbortSignal): Promise<void> {
    const path = this.path(cassette.case, cassette.trial);
    await fs.promises.mkdir(this.dir, { recursive: true });
    const tmp = `${path}.${randomUUID()}.tmp`;
    await fs.promises.writeFile(tmp, cassetteText(cassette), signal ? { signal } : {});
    await fs.promises.rename(tmp, path);
  }
}

/**
 * `cassette`, when it is the one of `caseName` and `trial`. A file copied or renamed from another
 * case (or a name-hash collision) must not answer for this one: replay would hand the case another
 * case's recorded answers, and pass or fail on them. Throws CASSETTE_INVALID naming both.
 */
export function ownCassette(cassette: Cassette, caseName: string, trial: number, where: string): Cassette {
  if (cassette.case === caseName && cassette.trial === trial) return cassette;
  throw new EvalfleetError(
    ErrorCode.CassetteInvalid,
    `the cassette ${where} is case ${JSON.stringify(cassette.case)} trial ${cassette.trial}'s, not case ${JSON.stringify(caseName)} trial ${trial}'s: re-record it (--record)`,
    { path: where },
  );
}

/** A cassette's text as written to a file or the fleet's bucket: pretty-printed, so a person can review it. */
export function cassetteText(cassette: Cassette): string {
  return `${JSON.stringify(cassette, null, 2)}\n`;
}

/** A cassette file's text as a {@link Cassette}; `where` names it in the error (CASSETTE_INVALID) when it is not one. */
export function parseCassette(text: string, where: string): Cassette {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new EvalfleetError(ErrorCode.CassetteInvalid, `the cassette ${where} is not JSON: ${errorMessage(err)}`, { path: where });
  }
  const parsed = CassetteSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new EvalfleetError(ErrorCode.CassetteInvalid, `the cassette ${where} is invalid: ${issue.path.join(".") || "(root)"} ${issue.message}`, { path: where });
  }
  return parsed.data;
}
