// runs in: both
import * as z from "zod";
import type { RowProblem } from "./problem-text.ts";
import { shortRepr } from "./problem-text.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * Exulu's bookkeeping fields (`createdAt`, `updatedAt`, `RBAC`), which its `test_cases` and
 * `eval_sets` exports carry on every record. evalfleet accepts them so an export loads as it is,
 * and keeps them, ungraded, under the case's (or set's) `metadata.exulu`. Pure; no I/O.
 */

/** The fields, as Exulu spells them. */
export const EXULU_FIELDS = ["createdAt", "updatedAt", "RBAC"] as const;
/** One of {@link EXULU_FIELDS}. */
export type ExuluField = (typeof EXULU_FIELDS)[number];

/** What `metadata.exulu` holds: the fields a record had, as written. */
export interface ExuluMetadata {
  /** Exulu's `Date!`: ISO 8601 text (or epoch milliseconds), as written. */
  createdAt?: string | number;
  updatedAt?: string | number;
  /** Exulu's `RBACData`, kept as given. */
  RBAC?: Readonly<Record<string, unknown>>;
}

const date = lazySchema(() => z.union([z.string(), z.number()], { error: "must be a date (ISO 8601 text or epoch milliseconds)" }).refine(
  (v) => (typeof v === "number" ? Number.isFinite(v) : !Number.isNaN(Date.parse(v))),
  { error: "must be a date (ISO 8601 text or epoch milliseconds)" },
));

/** zod schemas of the fields, by name (a `null` field is an absent one, dropped before these run). */
export const EXULU_FIELD_SCHEMAS = lazySchema(() => ({
  createdAt: date.optional(),
  updatedAt: date.optional(),
  RBAC: z.record(z.string(), z.unknown(), { error: "must be an object (Exulu's RBACData)" }).optional(),
}) as const satisfies Record<ExuluField, z.ZodType>);

/** True for one of {@link EXULU_FIELDS}. */
export function isExuluField(key: string): key is ExuluField {
  return (EXULU_FIELDS as readonly string[]).includes(key);
}

/**
 * The record's metadata with its Exulu fields under `exulu`: `metadata` as given when the record
 * has none. A `metadata.exulu` already there is merged; it must be an object, and a field it
 * holds with another value than the record's is a problem (one of them would be lost).
 */
export function withExuluMetadata(
  metadata: Readonly<Record<string, unknown>> | undefined,
  fields: ExuluMetadata,
): { metadata: Readonly<Record<string, unknown>> | undefined; problems: RowProblem[] } {
  const present = EXULU_FIELDS.filter((f) => fields[f] !== undefined);
  if (present.length === 0) return { metadata, problems: [] };
  const existing = metadata?.exulu;
  if (existing !== undefined && (existing === null || typeof existing !== "object" || Array.isArray(existing))) {
    return { metadata, problems: [{ field: "metadata.exulu", message: `holds Exulu's ${present.join(", ")}: it must be an object, got ${shortRepr(existing)}` }] };
  }
  const merged: Record<string, unknown> = { ...(existing as Record<string, unknown> | undefined) };
  const problems: RowProblem[] = [];
  for (const f of present) {
    if (merged[f] !== undefined && JSON.stringify(merged[f]) !== JSON.stringify(fields[f])) {
      problems.push({ field: `metadata.exulu.${f}`, message: `is ${shortRepr(merged[f])} but the record's ${f} is ${shortRepr(fields[f])}: keep one` });
    }
    merged[f] = fields[f];
  }
  return { metadata: { ...metadata, exulu: merged }, problems };
}
