import type { Case } from "../../shared/case/case.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import type { SelectedCase } from "./select.ts";
import { seededRandom } from "../../shared/seeded-random.ts";

/**
 * Quick subsets of a large suite, applied after the selection (`--name`, `--tag`, `--set`, a
 * re-run): `--grep REGEX` on names, `--filter-metadata key=value` on the cases' metadata (the same
 * key ORs, different keys AND), `--sample N` (a seeded random subset, so it can be drawn again),
 * then `--limit N` (the first N). Pure; declaration order is kept throughout.
 */

/** What to narrow the selection to; every field is optional. */
export interface Subset {
  /** Keep cases whose name matches this regular expression (JavaScript syntax, searched, case-sensitive). */
  grep?: string | null;
  /** `key=value` pairs: a case's `metadata[key]` (a dotted path reaches into objects) must equal one value of each key. */
  filterMetadata?: readonly string[] | null;
  /** Keep a random N of them, drawn with `seed`. */
  sample?: number | null;
  /** The seed of `sample` (an unsigned 32-bit integer). Required with `sample` (the caller draws one and prints it). */
  seed?: number | null;
  /** Keep the first N (after the sample). */
  limit?: number | null;
}

/** True when `subset` narrows anything. */
export function hasSubset(subset: Subset | null | undefined): boolean {
  return Boolean(subset && (subset.grep || subset.filterMetadata?.length || subset.sample || subset.limit));
}

/** A `--grep` pattern as a RegExp; a bad one is a usage error naming the flag and the pattern. */
export function grepPattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new EvalfleetError(ErrorCode.Usage, `--grep: not a regular expression: '${pattern}' (${(err as Error).message.replace(/^Invalid regular expression: /, "")})`, { field: "grep", value: pattern });
  }
}

/** `--filter-metadata` pairs by key (same key ORs); a pair without `=` or with an empty key is a usage error. */
export function metadataFilters(pairs: readonly string[]): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    const key = at > 0 ? pair.slice(0, at).trim() : "";
    if (!key) throw new EvalfleetError(ErrorCode.Usage, `--filter-metadata must be key=value, got '${pair}'`, { field: "filterMetadata", value: pair });
    const list = byKey.get(key) ?? [];
    list.push(pair.slice(at + 1));
    byKey.set(key, list);
  }
  return byKey;
}

/** The cases of `selected` in `subset`, in declaration order. */
export function applySubset(selected: readonly SelectedCase[], subset: Subset): SelectedCase[] {
  let out = [...selected];
  if (subset.grep) {
    const re = grepPattern(subset.grep);
    out = out.filter((s) => re.test(s.case.name));
  }
  if (subset.filterMetadata && subset.filterMetadata.length > 0) {
    const filters = metadataFilters(subset.filterMetadata);
    out = out.filter((s) => matchesMetadata(s.case, filters));
  }
  if (subset.sample) {
    if (subset.seed === null || subset.seed === undefined) throw new EvalfleetError(ErrorCode.Usage, "--sample needs a seed", { field: "seed" });
    out = sample(out, subset.sample, subset.seed);
  }
  if (subset.limit) out = out.slice(0, subset.limit);
  return out;
}

/** `n` of `items` drawn with `seed` (the same seed and items give the same draw), in their order. */
export function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  if (n >= items.length) return [...items];
  const next = seededRandom(seed);
  // A partial Fisher-Yates over the positions; the chosen positions are then sorted back into order.
  const positions = items.map((_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(next() * (positions.length - i));
    [positions[i], positions[j]] = [positions[j]!, positions[i]!];
  }
  return positions
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]!);
}

/** A seed for `--sample` when none is given: an unsigned 32-bit integer from `random` (default Math.random). */
export function drawSeed(random: () => number = Math.random): number {
  return Math.floor(random() * 0x1_0000_0000) >>> 0;
}

function matchesMetadata(c: Case, filters: Map<string, string[]>): boolean {
  let metadata: Readonly<Record<string, unknown>> | null;
  try {
    // A dataset case reads its row here; a row that cannot be read any more matches nothing (its run says why).
    metadata = c.metadata;
  } catch {
    return false;
  }
  if (!metadata) return false;
  for (const [key, values] of filters) {
    const found = lookup(metadata, key);
    if (!values.some((v) => equalsValue(found, v))) return false;
  }
  return true;
}

function lookup(metadata: Readonly<Record<string, unknown>>, key: string): unknown {
  if (Object.hasOwn(metadata, key)) return metadata[key];
  let value: unknown = metadata;
  for (const part of key.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A metadata value equals a flag's text when its text is the same (a list: when one of its items is). */
function equalsValue(found: unknown, text: string): boolean {
  if (found === undefined) return false;
  if (Array.isArray(found)) return found.some((item) => equalsValue(item, text));
  if (found === null) return text === "null";
  if (typeof found === "object") return JSON.stringify(found) === text;
  return String(found) === text;
}
