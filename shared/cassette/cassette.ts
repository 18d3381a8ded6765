// runs in: both
import * as z from "zod";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The cassette of one case and trial (`--record DIR`, `--replay DIR`): every HTTP exchange the case
 * made through `context.fetch` and the built-in model clients, and every tool call it wrapped with
 * `context.tool(name, fn)`, in the order they were made. One readable JSON file per case and trial
 * ({@link cassetteFileName}). Requests are stored redacted (the secrets redactor; no `Authorization`
 * value), so a cassette can be committed. Pure: schemas and names, no I/O.
 */

/** What `--record` / `--replay` say for the fleet's bucket (a distributed run) instead of a folder. */
export const FLEET_CASSETTES = "nats";

/** The version written in every cassette file; another one is refused with a clear error. */
export const CASSETTE_VERSION = 1;

/** A body as text: UTF-8 as is, anything else base64 (`encoding: "base64"`). */
const BodySchema = () => z.object({ text: z.string(), encoding: z.enum(["utf8", "base64"]) });

/** One HTTP exchange: the request as sent (redacted) and the answer as received. */
export const CassetteExchangeSchema = lazySchema(() =>
  z.strictObject({
    /** 1-based position among the case's requests, as recorded (what an error names). */
    request: z.int().positive(),
    method: z.string().min(1),
    url: z.string().min(1),
    /** Request headers, lower-case names, values redacted (`Authorization` and API-key headers always). */
    headers: z.record(z.string(), z.string()),
    /** The request body; null: none. */
    body: BodySchema().nullable(),
    response: z.strictObject({
      status: z.int().min(100).max(599),
      statusText: z.string(),
      /** Answer headers, lower-case names (set-cookie and the like redacted). */
      headers: z.record(z.string(), z.string()),
      body: BodySchema(),
    }),
  }),
);
/** One recorded HTTP exchange. */
export type CassetteExchange = z.infer<typeof CassetteExchangeSchema>;

/** One tool call a suite wrapped with `context.tool(name, fn)`: its arguments and what it returned or threw. */
export const CassetteToolCallSchema = lazySchema(() =>
  z.strictObject({
    name: z.string().min(1),
    /** The arguments as JSON data (absent: called with none). */
    args: z.unknown().optional(),
    /** The returned value as JSON data; absent when it threw. */
    result: z.unknown().optional(),
    /** The thrown error's message; null: it returned. */
    error: z.string().nullable(),
  }),
);
/** One recorded tool call. */
export type CassetteToolCall = z.infer<typeof CassetteToolCallSchema>;

/** A cassette file: one case, one trial. */
export const CassetteSchema = lazySchema(() =>
  z.strictObject({
    version: z.literal(CASSETTE_VERSION, { error: `must be ${CASSETTE_VERSION} (a cassette of another evalfleet version)` }),
    /** The case's name, as declared. */
    case: z.string(),
    /** Which run of a repeated case (1-based; `--repeat`). */
    trial: z.int().positive(),
    /** ISO 8601 time the cassette was last written. */
    recordedAt: z.string(),
    exchanges: z.array(CassetteExchangeSchema),
    tools: z.array(CassetteToolCallSchema),
  }),
);
/** A cassette file's content. */
export type Cassette = z.infer<typeof CassetteSchema>;

/** An empty cassette for `caseName`, trial `trial`. */
export function emptyCassette(caseName: string, trial: number): Cassette {
  return { version: CASSETTE_VERSION, case: caseName, trial, recordedAt: new Date(0).toISOString(), exchanges: [], tools: [] };
}

/** Longest readable part of a file name (the case name's safe characters), before its hash. */
const MAX_SLUG = 60;

/**
 * The file name of a case's cassette: the case name's letters, digits, `-`, `_` and `.` (others
 * become `_`, cut to 60), then 8 hex digits of a hash of the whole name (two names that read the
 * same stay apart; FNV-1a, no crypto needed), then the trial: `paris-1a2b3c4d.t1.json`. Safe on
 * every file system for any case name (slashes, spaces, unicode, `..`).
 */
export function cassetteFileName(caseName: string, trial: number): string {
  return `${safeName(caseName, "case")}.t${trial}.json`;
}

/**
 * The folder of a suite's cassettes in the fleet's bucket (`--record nats`; EVALFLEET_CASSETTES of
 * shared/broker/subjects.ts), named as a case's file is: the suite name's safe characters and a
 * hash of the whole name, so two suites never share a folder. A cassette recorded under a suite's
 * name replays under that name, whatever cases the suite has gained since (its fingerprint would
 * change). An object is `<folder>/<file>`.
 */
export function cassetteFolder(suiteName: string): string {
  return safeName(suiteName, "suite");
}

/** `name`'s letters, digits, `-`, `_` and `.` (others `_`, no leading dot, cut to {@link MAX_SLUG}; `empty` when none), then `-` and its hash. */
function safeName(name: string, empty: string): string {
  const slug = name.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^\.+/, "_").slice(0, MAX_SLUG) || empty;
  return `${slug}-${fnv1a(name)}`;
}

/** 32-bit FNV-1a of `text`'s UTF-16 code units, as 8 hex digits. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
