import { readFileSync } from "node:fs";
import { z } from "zod";
import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from "yaml";
import { EvalfleetError, ErrorCode, type DatasetProblem } from "./errors.ts";
import { pyRepr } from "./py-format.ts";

/**
 * Eval sets: named groups of cases (by name or id) that `--set NAME` selects, as Exulu groups
 * test cases into eval sets. Declared in the suite (`defineSuite({ evalSets })`) or in a JSON or
 * YAML file. Pure, except {@link loadEvalSetsFile}.
 */

/** One eval set. */
export interface EvalSet {
  name: string;
  description: string | null;
  /** Case names or ids, as declared. */
  members: readonly string[];
}

/** Eval sets by name. */
export type EvalSets = ReadonlyMap<string, EvalSet>;

/** How a suite declares its eval sets: `{ smoke: ["case_a", "row-17"], nightly: { description, cases: [...] } }`. */
export type EvalSetsDefinition = Readonly<Record<string, readonly string[] | { readonly description?: string; readonly cases: readonly string[] }>>;

/** zod schema of {@link EvalSetsDefinition}. */
export const EvalSetsDefinitionSchema = z.record(
  z.string().min(1, { error: "an eval set needs a name" }),
  z.union([z.array(z.string()), z.strictObject({ description: z.string().optional(), cases: z.array(z.string()) })], {
    error: "must be a list of case names or ids, or { description, cases }",
  }),
);

/** A definition (record), or already-built sets, as a map by name. Throws a usage error for a malformed definition. */
export function normalizeEvalSets(input: EvalSetsDefinition | EvalSets | null | undefined): EvalSets {
  if (!input) return new Map();
  if (input instanceof Map) return input as EvalSets;
  const parsed = EvalSetsDefinitionSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new EvalfleetError(ErrorCode.Usage, `evalSets.${issue.path.join(".")}: ${issue.message}`, { field: "evalSets" });
  }
  const sets = new Map<string, EvalSet>();
  for (const [name, value] of Object.entries(parsed.data)) {
    sets.set(
      name,
      Object.freeze(
        Array.isArray(value)
          ? { name, description: null, members: Object.freeze([...value]) }
          : { name, description: (value as { description?: string }).description ?? null, members: Object.freeze([...(value as { cases: string[] }).cases]) },
      ),
    );
  }
  return sets;
}

/**
 * The members of the named sets (their union). An unknown set name is a usage error (exit 2)
 * that lists the sets the suite has.
 */
export function evalSetMembers(sets: EvalSets, names: readonly string[]): ReadonlySet<string> {
  const members = new Set<string>();
  for (const name of names) {
    const set = sets.get(name);
    if (!set) {
      const available = [...sets.keys()];
      throw new EvalfleetError(
        ErrorCode.Usage,
        `unknown eval set ${pyRepr(name)} (${available.length > 0 ? `the suite has: ${available.join(", ")}` : "the suite defines no eval sets: declare them with defineSuite({ evalSets })"})`,
        { field: "set", value: name },
      );
    }
    for (const m of set.members) members.add(m);
  }
  return members;
}

/**
 * Checks that every member of every set names a case (by name or id). Returns one problem per
 * unknown member; `where(set, i)` says where the member was declared.
 */
export function evalSetProblems(sets: EvalSets, known: (member: string) => boolean): { set: string; index: number; member: string }[] {
  const problems: { set: string; index: number; member: string }[] = [];
  for (const set of sets.values()) set.members.forEach((m, index) => (known(m) ? undefined : problems.push({ set: set.name, index, member: m })));
  return problems;
}

/**
 * Reads eval sets from a JSON or YAML file (a mapping of set names to lists of case names or ids,
 * or to `{ description, cases }`). Problems carry the file and line; `lineOf(set, i)` gives the
 * line of a member for later checks.
 */
export function loadEvalSetsFile(path: string, display: string): { sets: EvalSets; problems: DatasetProblem[]; lineOf: (set: string, index: number) => number } {
  const counter = new LineCounter();
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
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) problems.push({ file: display, line: counter.linePos(e.pos[0]).line, field: null, message: `invalid YAML/JSON: ${e.message.split("\n")[0]}` });
    return { sets: new Map(), problems, lineOf };
  }
  const line = (node: unknown): number => counter.linePos((node as { range?: [number] } | null)?.range?.[0] ?? 0).line;
  if (!isMap(doc.contents)) {
    problems.push({ file: display, line: line(doc.contents), field: null, message: "expected a mapping of eval set names to lists of case names or ids" });
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
    sets.set(name, Object.freeze({ name, description, members: Object.freeze(members) }));
  }
  return { sets, problems, lineOf };
}
