// runs in: both
import * as z from "zod";
import { EvalfleetError, ErrorCode } from "../errors.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * Provider limits as people write them: `--limit KEY=rpm:600,tpm:200000,concurrency:64`
 * (repeatable), `EVALFLEET_LIMITS` (the same, `;`-separated) and a suite's `limits`. Pure; no I/O.
 *
 * `--limit` is one repeatable option with two kinds of value: one with `=` is a provider limit;
 * a bare whole number is the size of a quick subset of the selection (`--limit 20`, the first N
 * selected cases). {@link splitLimitValues} tells them apart.
 */

/** The limits of one provider key. Every field is optional: an absent one is not limited (or learnt). */
export const LimitSpecSchema = lazySchema(() => z.strictObject({
  /** Requests per minute, > 0. */
  rpm: z.number().positive().optional(),
  /** Tokens per minute (prompt + completion), > 0. */
  tpm: z.number().positive().optional(),
  /** Requests in flight at once, whole, >= 1. */
  concurrency: z.int().min(1).optional(),
}));
/** The limits of one provider key. */
export type LimitSpec = z.infer<typeof LimitSpecSchema>;

/** Limits by provider key (`openai:gpt-5-mini`, or a name the user chose). */
export const LimitTableSchema = lazySchema(() => z.record(z.string().min(1), LimitSpecSchema));
/** Limits by provider key. */
export type LimitTable = z.infer<typeof LimitTableSchema>;

/** The raw `--limit` values split by kind. */
export interface LimitValues {
  /** The provider limits, by key, later values winning field by field. */
  limits: LimitTable;
  /** `--limit N`: run only the first N selected cases; null when not given (the last one given wins). */
  firstN: number | null;
}

const FIELDS = ["rpm", "tpm", "concurrency"] as const;

/** A limit key: no spaces, `=`, `;` or `,`; `openai:gpt-5-mini`, `anthropic/claude`, `my-key`. */
const KEY = /^[^\s=;,]+$/;

function bad(source: string, value: string, why: string): never {
  throw new EvalfleetError(ErrorCode.Usage, `${source} ${why}, got '${value}'`, { field: source, value });
}

/**
 * One provider limit, `KEY=rpm:600,tpm:200000,concurrency:64` (any subset of the fields, in any
 * order). `source` names the flag or variable in the error (exit 2).
 */
export function parseLimitSpec(value: string, source = "--limit"): { key: string; spec: LimitSpec } {
  const eq = value.indexOf("=");
  if (eq < 0) bad(source, value, "must be KEY=rpm:N,tpm:N,concurrency:N");
  const key = value.slice(0, eq).trim();
  if (!KEY.test(key)) bad(source, value, "needs a key before '=' without spaces, ';' or ','");
  const body = value.slice(eq + 1).trim();
  if (body === "") bad(source, value, `needs at least one of ${FIELDS.join(", ")} after '='`);
  const spec: LimitSpec = {};
  for (const part of body.split(",")) {
    const m = /^\s*([a-z]+)\s*:\s*([^\s]+)\s*$/.exec(part);
    if (!m) bad(source, value, `has '${part}' where FIELD:NUMBER was expected (fields: ${FIELDS.join(", ")})`);
    const [, field, raw] = m;
    if (!(FIELDS as readonly string[]).includes(field!)) bad(source, value, `has an unknown field '${field}' (fields: ${FIELDS.join(", ")})`);
    const n = Number(raw);
    if (field === "concurrency") {
      if (!/^\d+$/.test(raw!) || n < 1) bad(source, value, "concurrency must be a whole number >= 1");
    } else if (!/^\d+(\.\d+)?$/.test(raw!) || !(n > 0)) bad(source, value, `${field} must be a number > 0`);
    spec[field as (typeof FIELDS)[number]] = n;
  }
  return { key, spec };
}

/** `EVALFLEET_LIMITS`: limits separated by `;` (blank parts ignored). */
export function parseLimitList(text: string, source = "EVALFLEET_LIMITS"): LimitTable {
  const out: LimitTable = {};
  for (const part of text.split(";")) {
    if (part.trim() === "") continue;
    const { key, spec } = parseLimitSpec(part.trim(), source);
    out[key] = { ...out[key], ...spec };
  }
  return out;
}

/**
 * Splits the raw values of the repeatable `--limit` option: `KEY=...` values are provider limits
 * (merged by key, later fields winning), a bare whole number >= 1 is the subset size (the last
 * one wins). Anything else is a usage error naming the value.
 */
export function splitLimitValues(values: readonly string[] | undefined, source = "--limit"): LimitValues {
  const limits: LimitTable = {};
  let firstN: number | null = null;
  for (const raw of values ?? []) {
    const value = raw.trim();
    if (/^\d+$/.test(value)) {
      const n = Number(value);
      if (n < 1) bad(source, raw, "must be a whole number >= 1 (the first N cases) or KEY=rpm:N,tpm:N,concurrency:N");
      firstN = n;
      continue;
    }
    if (!value.includes("=")) bad(source, raw, "must be a whole number >= 1 (the first N cases) or KEY=rpm:N,tpm:N,concurrency:N");
    const { key, spec } = parseLimitSpec(value, source);
    limits[key] = { ...limits[key], ...spec };
  }
  return { limits, firstN };
}

/**
 * The limits that apply, field by field: the suite's, then `EVALFLEET_LIMITS`, then `--limit`
 * (the command line wins, as everywhere).
 */
export function mergeLimitTables(...tables: ReadonlyArray<LimitTable | null | undefined>): LimitTable {
  const out: LimitTable = {};
  for (const t of tables) for (const [key, spec] of Object.entries(t ?? {})) out[key] = { ...out[key], ...spec };
  return out;
}

/** A suite's `limits`, validated (a bad one names the key and field). */
export function checkSuiteLimits(limits: unknown, source = "defineSuite({ limits })"): LimitTable {
  if (limits === undefined || limits === null) return {};
  const parsed = LimitTableSchema.safeParse(limits);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new EvalfleetError(ErrorCode.SuiteInvalid, `${source}: ${issue.path.map(String).join(".") || "limits"} ${issue.message}`, { field: "limits" });
  }
  return parsed.data;
}

/** `KEY=rpm:600,tpm:200000,concurrency:64`: a spec as people write it (for messages and `status`). */
export function formatLimitSpec(key: string, spec: LimitSpec): string {
  const fields = FIELDS.filter((f) => spec[f] !== undefined).map((f) => `${f}:${spec[f]}`);
  return `${key}=${fields.join(",")}`;
}
