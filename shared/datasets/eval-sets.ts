// runs in: both
import { readFileSync } from "node:fs";
import * as z from "zod";
import type { Node as YamlNode } from "yaml";
import { yaml } from "./parsers.ts";
import { EvalfleetError, ErrorCode, type DatasetProblem } from "../errors.ts";
import { pyRepr } from "../py-format.ts";
import { EXULU_FIELD_SCHEMAS, withExuluMetadata } from "./exulu-fields.ts";
import { formatPath, shortRepr, type RowProblem } from "./problem-text.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * Eval sets: named groups of cases (by name or id) that `--set` selects, as Exulu groups test
 * cases into eval sets. Declared in the suite (`defineSuite({ evalSets })`) or in a JSON, JSONL or
 * YAML file, in either of two shapes: a mapping of set names to members (`{ smoke: [...] }`), or a
 * list of sets in Exulu's `eval_sets` shape (`[{ id, name, description, test_case_ids, createdAt,
 * updatedAt, RBAC }]`). Pure, except {@link loadEvalSetsFile}.
 */

/** One eval set. */
export interface EvalSet {
  name: string;
  /** Exulu's set id (list shape), or null. `--set` takes it as well as the name. */
  id: string | null;
  description: string | null;
  /** Case names or ids, as declared (`test_case_ids`). */
  members: readonly string[];
  /** Exulu's `createdAt`/`updatedAt`/`RBAC` under `exulu`, or null. */
  metadata: Readonly<Record<string, unknown>> | null;
}

/** Eval sets by name. */
export type EvalSets = ReadonlyMap<string, EvalSet>;

/** One set in Exulu's list shape (`test_case_ids`, or evalfleet's `cases`). `null` fields are absent ones. */
export interface EvalSetRecord {
  readonly id?: string | number | null;
  readonly name: string;
  readonly description?: string | null;
  readonly test_case_ids?: readonly (string | number)[] | null;
  readonly cases?: readonly (string | number)[] | null;
  readonly createdAt?: string | number | null;
  readonly updatedAt?: string | number | null;
  readonly RBAC?: Readonly<Record<string, unknown>> | null;
}

/**
 * How a suite declares its eval sets: `{ smoke: ["case_a", "row-17"], nightly: { description,
 * cases: [...] } }`, or a list in Exulu's shape (`[{ id: "es-1", name: "smoke", test_case_ids: [...] }]`).
 */
export type EvalSetsDefinition =
  | Readonly<Record<string, readonly string[] | { readonly description?: string; readonly cases: readonly string[] }>>
  | readonly EvalSetRecord[];

/** zod schema of the mapping shape. */
export const EvalSetsDefinitionSchema = lazySchema(() => z.record(
  z.string().min(1, { error: "an eval set needs a name" }),
  z.union([z.array(z.string()), z.strictObject({ description: z.string().optional(), cases: z.array(z.string()) })], {
    error: "must be a list of case names or ids, or { description, cases }",
  }),
));

const member = lazySchema(() => z.union([z.string().min(1, { error: "must not be empty" }), z.number()], { error: "must be a case name or id (text)" }));
const memberList = lazySchema(() => z.array(member, { error: "must be a list of case names or ids" }));

/** zod schema of one set of the list shape, once its `null` fields are dropped. */
export const EvalSetRecordSchema = lazySchema(() => z.strictObject({
  id: z.union([z.string().min(1, { error: "must not be empty" }), z.number()], { error: "must be text or a number" }).optional(),
  name: z.string({ error: "is required (text)" }).min(1, { error: "must not be empty" }),
  description: z.string({ error: "must be text" }).optional(),
  test_case_ids: memberList.optional(),
  cases: memberList.optional(),
  ...EXULU_FIELD_SCHEMAS,
}));

/** The sets of a list-shaped declaration, and the problems of each entry (`index`: its position). */
export function evalSetsFromList(list: readonly unknown[]): { sets: Map<string, EvalSet>; problems: (RowProblem & { index: number })[] } {
  const sets = new Map<string, EvalSet>();
  const problems: (RowProblem & { index: number })[] = [];
  const names = new Set<string>();
  const ids = new Map<string, string>();
  list.forEach((raw, index) => {
    const add = (field: string | null, message: string): void => void problems.push({ index, field, message });
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return add(null, `an eval set must be an object {id, name, test_case_ids, ...}, got ${shortRepr(raw)}`);
    // A null field is an absent one, as in rows: exports write every column.
    const entry = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null && v !== undefined));
    // Names and ids are claimed first, so a duplicate is reported even next to an entry's other problems.
    const name = typeof entry.name === "string" && entry.name ? entry.name : null;
    const id = typeof entry.id === "string" || typeof entry.id === "number" ? String(entry.id) : null;
    if (name !== null && names.has(name)) return add("name", `duplicate eval set name ${pyRepr(name)}`);
    if (id !== null && ids.has(id)) return add("id", `duplicate eval set id ${pyRepr(id)} (also eval set ${pyRepr(ids.get(id))})`);
    if (name !== null) names.add(name);
    if (id !== null && name !== null) ids.set(id, name);
    const parsed = EvalSetRecordSchema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === "unrecognized_keys") {
          for (const key of issue.keys) add(key, "unknown field (an eval set has id, name, description, test_case_ids, createdAt, updatedAt, RBAC)");
        } else add(formatPath(issue.path), `${issue.message}, got ${shortRepr(issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], entry))}`);
      }
      return;
    }
    const r = parsed.data;
    if (r.test_case_ids && r.cases) return add("cases", "set test_case_ids or cases, not both");
    const exulu = withExuluMetadata(undefined, { createdAt: r.createdAt, updatedAt: r.updatedAt, RBAC: r.RBAC });
    sets.set(
      r.name,
      Object.freeze({
        name: r.name,
        id,
        description: r.description ?? null,
        members: Object.freeze((r.test_case_ids ?? r.cases ?? []).map(String)),
        metadata: exulu.metadata ? Object.freeze(exulu.metadata) : null,
      }),
    );
  });
  return { sets, problems };
}

/** A definition (either shape), or already-built sets, as a map by name. Throws a usage error for a malformed definition. */
export function normalizeEvalSets(input: EvalSetsDefinition | EvalSets | null | undefined): EvalSets {
  if (!input) return new Map();
  if (input instanceof Map) return input as EvalSets;
  if (Array.isArray(input)) {
    const { sets, problems } = evalSetsFromList(input);
    const p = problems[0];
    if (p) throw new EvalfleetError(ErrorCode.Usage, `evalSets[${p.index}]${p.field ? `.${p.field}` : ""}: ${p.message}`, { field: "evalSets" });
    return sets;
  }
  const parsed = EvalSetsDefinitionSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new EvalfleetError(ErrorCode.Usage, `evalSets.${issue.path.join(".")}: ${issue.message}`, { field: "evalSets" });
  }
  const sets = new Map<string, EvalSet>();
  for (const [name, value] of Object.entries(parsed.data)) {
    const cases = Array.isArray(value) ? value : (value as { cases: string[] }).cases;
    const description = Array.isArray(value) ? null : ((value as { description?: string }).description ?? null);
    sets.set(name, Object.freeze({ name, id: null, description, members: Object.freeze([...cases]), metadata: null }));
  }
  return sets;
}

/** `'smoke' (id 'es-1')`: a set as messages name it. */
export function describeEvalSet(set: EvalSet): string {
  return set.id !== null ? `${pyRepr(set.name)} (id ${pyRepr(set.id)})` : pyRepr(set.name);
}

/**
 * The set a `--set` value names: by name or by id. A value that is one set's name and another's
 * id is a usage error naming both; an unknown value one listing the suite's sets.
 */
export function findEvalSet(sets: EvalSets, value: string): EvalSet {
  const byName = sets.get(value);
  const byId = [...sets.values()].find((s) => s.id === value);
  if (byName && byId && byName !== byId) {
    throw new EvalfleetError(
      ErrorCode.Usage,
      `eval set ${pyRepr(value)} is ambiguous: it is the name of eval set ${describeEvalSet(byName)} and the id of eval set ${describeEvalSet(byId)}; rename one of them`,
      { field: "set", value },
    );
  }
  const set = byName ?? byId;
  if (set) return set;
  const available = [...sets.values()].map((s) => (s.id !== null ? `${s.name} (id ${s.id})` : s.name));
  throw new EvalfleetError(
    ErrorCode.Usage,
    `unknown eval set ${pyRepr(value)} (${available.length > 0 ? `the suite has: ${available.join(", ")}` : "the suite defines no eval sets: declare them with defineSuite({ evalSets })"})`,
    { field: "set", value },
  );
}

/**
 * The members of the sets named (by name or id; their union). An unknown or ambiguous value is a
 * usage error (exit 2), see {@link findEvalSet}.
 */
export function evalSetMembers(sets: EvalSets, names: readonly string[]): ReadonlySet<string> {
  const members = new Set<string>();
  for (const name of names) for (const m of findEvalSet(sets, name).members) members.add(m);
  return members;
}

/**
 * Checks that every member of every set names a case (by name or id). Returns one problem per
 * unknown member, with the set and the member's position.
 */
export function evalSetProblems(sets: EvalSets, known: (member: string) => boolean): { set: string; index: number; member: string }[] {
  const problems: { set: string; index: number; member: string }[] = [];
  for (const set of sets.values()) set.members.forEach((m, index) => (known(m) ? undefined : problems.push({ set: set.name, index, member: m })));
  return problems;
}

/**
 * Reads eval sets from a file: JSON or YAML (a mapping of set names to members or to
 * `{ description, cases }`, or a list of sets in Exulu's shape), or JSONL (one Exulu set per
 * line). Problems carry the file and line; `lineOf(set, i)` gives the line of a member for later
 * checks.
 */
export function loadEvalSetsFile(path: string, display: string): { sets: EvalSets; problems: DatasetProblem[]; lineOf: (set: string, index: number) => number } {
  const problems: DatasetProblem[] = [];
  const lines = new Map<string, number[]>();
  const lineOf = (set: string, index: number): number => lines.get(set)?.[index] ?? 1;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    problems.push({ file: display, line: 1, field: null, message: `cannot read the eval sets file: ${(err as Error).message}` });
    return { sets: new Map(), problems, lineOf };
  }
  if (/\.(jsonl|ndjson)$/i.test(path)) return { ...jsonlSets(text, display, problems, lines), problems, lineOf };
  const { isMap, isSeq, LineCounter, parseDocument } = yaml();
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) problems.push({ file: display, line: counter.linePos(e.pos[0]).line, field: null, message: `invalid YAML/JSON: ${e.message.split("\n")[0]}` });
    return { sets: new Map(), problems, lineOf };
  }
  const line = (node: unknown): number => counter.linePos((node as { range?: [number] } | null)?.range?.[0] ?? 0).line;
  if (isSeq(doc.contents)) {
    const items = doc.contents.items;
    const { sets, problems: listProblems } = evalSetsFromList(doc.toJS({ maxAliasCount: 10_000 }) as unknown[]);
    for (const p of listProblems) problems.push({ file: display, line: line(items[p.index]), field: p.field, message: p.message });
    for (const item of items) {
      if (!isMap(item)) continue;
      const name = item.get("name");
      const list = item.get("test_case_ids", true) ?? item.get("cases", true);
      if (typeof name === "string" && isSeq(list) && !lines.has(name)) lines.set(name, list.items.map(line));
    }
    return { sets, problems, lineOf };
  }
  if (!isMap(doc.contents)) {
    problems.push({ file: display, line: line(doc.contents), field: null, message: "expected a mapping of eval set names to lists of case names or ids, or a list of eval sets ({ id, name, test_case_ids })" });
    return { sets: new Map(), problems, lineOf };
  }
  const sets = new Map<string, EvalSet>();
  for (const pair of doc.contents.items) {
    const name = String((pair.key as { value?: unknown })?.value ?? pair.key);
    let list: YamlNode | null = pair.value as YamlNode | null;
    let description: string | null = null;
    if (isMap(list)) {
      description = (list.get("description") as string | undefined) ?? null;
      list = (list.get("cases", true) as YamlNode | undefined) ?? null;
    }
    if (!isSeq(list)) {
      problems.push({ file: display, line: line(pair.value ?? pair.key), field: name, message: "must be a list of case names or ids, or { description, cases }" });
      continue;
    }
    const members: string[] = [];
    const memberLines: number[] = [];
    for (const item of list.items) {
      const value = (item as { value?: unknown })?.value;
      if (typeof value !== "string" && typeof value !== "number") {
        problems.push({ file: display, line: line(item), field: `${name}[${members.length}]`, message: `must be a case name or id (text), got ${pyRepr(value)}` });
        continue;
      }
      members.push(String(value));
      memberLines.push(line(item));
    }
    lines.set(name, memberLines);
    sets.set(name, Object.freeze({ name, id: null, description, members: Object.freeze(members), metadata: null }));
  }
  return { sets, problems, lineOf };
}

/** One Exulu set per line; a set's members are all on its line. */
function jsonlSets(text: string, display: string, problems: DatasetProblem[], lines: Map<string, number[]>): { sets: EvalSets } {
  const entries: unknown[] = [];
  const entryLines: number[] = [];
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    try {
      entries.push(JSON.parse(raw));
      entryLines.push(i + 1);
    } catch (err) {
      problems.push({ file: display, line: i + 1, field: null, message: `invalid JSON: ${(err as Error).message.replace(/ at position \d+.*$/s, "")}` });
    }
  });
  const { sets, problems: listProblems } = evalSetsFromList(entries);
  for (const p of listProblems) problems.push({ file: display, line: entryLines[p.index]!, field: p.field, message: p.message });
  for (const [i, e] of entries.entries()) {
    const set = sets.get((e as { name?: string } | null)?.name ?? "");
    if (set && !lines.has(set.name)) lines.set(set.name, set.members.map(() => entryLines[i]!));
  }
  return { sets };
}
