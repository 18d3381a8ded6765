import * as z from "zod";
import { CASE_SORTS, type CasesQuery, type RunsQuery } from "../history/store/viewer-store.ts";

/**
 * The viewer API's query parameters, checked with zod and bounded (lengths, page sizes), and its
 * cursors: opaque base64url JSON of the last row's sort key. Pure; no I/O. A bad parameter is a
 * {@link ParamError}, which the API answers with 400 naming the parameter and its value.
 */

/** Largest page of cases. */
export const MAX_CASES_LIMIT = 500;
/** Page of cases when `limit` is not given. */
export const DEFAULT_CASES_LIMIT = 50;
/** Largest page of runs. */
export const MAX_RUNS_LIMIT = 200;
/** Page of runs when `limit` is not given. */
export const DEFAULT_RUNS_LIMIT = 50;
/** Longest text parameter (a suite name, a search), in characters. */
export const MAX_TEXT_PARAM = 200;

/** A query parameter the API refuses. */
export class ParamError extends Error {
  constructor(readonly param: string, readonly value: string, why: string) {
    super(`bad parameter ${param}=${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value)}: ${why}`);
  }
}

const text = z.string().min(1).max(MAX_TEXT_PARAM);
const limit = (max: number) => z.string().regex(/^\d{1,4}$/, "a whole number").transform(Number).pipe(z.number().int().min(1).max(max));

/** Encodes a cursor (a row's sort key). */
export function encodeCursor(key: readonly unknown[] | null): string | null {
  return key ? Buffer.from(JSON.stringify(key), "utf8").toString("base64url") : null;
}

function decodeCursor<T>(raw: string, schema: z.ZodType<T>): T {
  if (raw.length > 1000) throw new ParamError("cursor", raw, "too long");
  try {
    return schema.parse(JSON.parse(Buffer.from(raw, "base64url").toString("utf8")));
  } catch {
    throw new ParamError("cursor", raw, "not a cursor this API returned");
  }
}

function parse<T>(schema: z.ZodType<T>, name: string, value: string | undefined): T | undefined {
  if (value === undefined || value === "") return undefined;
  const r = schema.safeParse(value);
  if (!r.success) throw new ParamError(name, value, r.error.issues[0]?.message ?? "invalid");
  return r.data;
}

/** Refuses parameters the endpoint does not know (a typo would otherwise filter nothing). */
function known(query: Record<string, string>, names: readonly string[]): void {
  for (const key of Object.keys(query)) if (!names.includes(key) && key !== "token") throw new ParamError(key, query[key] ?? "", `unknown parameter (known: ${names.join(", ")})`);
}

const RUN_STATUSES = ["running", "passed", "failed", "cancelled", "incomplete", "abandoned"] as const;

/** `GET /api/runs` parameters. */
export function runsParams(query: Record<string, string>): Omit<RunsQuery, "scope"> {
  known(query, ["suite", "branch", "status", "limit", "cursor"]);
  return {
    suite: parse(text, "suite", query.suite),
    branch: parse(text, "branch", query.branch),
    status: parse(z.enum(RUN_STATUSES), "status", query.status),
    limit: parse(limit(MAX_RUNS_LIMIT), "limit", query.limit) ?? DEFAULT_RUNS_LIMIT,
    cursor: query.cursor ? decodeCursor(query.cursor, z.tuple([z.string(), z.string()])) : null,
  };
}

/** `GET /api/runs/:id/cases` parameters. */
export function casesParams(query: Record<string, string>): CasesQuery {
  known(query, ["status", "error_kind", "tag", "set", "q", "sort", "limit", "cursor"]);
  return {
    status: parse(z.enum(["passed", "failed", "error", "skipped"]), "status", query.status),
    errorKind: parse(text, "error_kind", query.error_kind),
    tag: parse(text, "tag", query.tag),
    set: parse(text, "set", query.set),
    q: parse(text, "q", query.q?.trim()),
    sort: parse(z.enum(CASE_SORTS), "sort", query.sort) ?? "index",
    limit: parse(limit(MAX_CASES_LIMIT), "limit", query.limit) ?? DEFAULT_CASES_LIMIT,
    cursor: query.cursor ? decodeCursor(query.cursor, z.tuple([z.union([z.string().max(MAX_TEXT_PARAM * 10), z.number()]), z.number().int().min(0)])) : null,
  };
}

/** A case index in a path. */
export function caseIndexParam(raw: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw new ParamError("index", raw, "a case index (a whole number)");
  return Number(raw);
}

/** A run id in a path or a parameter. */
export function runIdParam(name: string, raw: string | undefined): string {
  if (!raw) throw new ParamError(name, "", "required");
  if (raw.length > MAX_TEXT_PARAM) throw new ParamError(name, raw, "too long");
  return raw;
}

/** `GET /api/compare` parameters. */
export function compareParams(query: Record<string, string>): { a: string; b: string } {
  known(query, ["a", "b"]);
  return { a: runIdParam("a", query.a), b: runIdParam("b", query.b) };
}

/** `GET /api/flaky` parameters. */
export function flakyParams(query: Record<string, string>): { suite: string; branch?: string; last: number } {
  known(query, ["suite", "branch", "last"]);
  const suite = parse(text, "suite", query.suite);
  if (!suite) throw new ParamError("suite", "", "required");
  return { suite, branch: parse(text, "branch", query.branch), last: parse(limit(100), "last", query.last) ?? 10 };
}

/** `GET /api/events` parameters. */
export function eventsParams(query: Record<string, string>): { run: string; since?: string } {
  known(query, ["run", "since"]);
  return { run: runIdParam("run", query.run), since: parse(z.iso.datetime(), "since", query.since) };
}
