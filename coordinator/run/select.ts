import type { Case } from "../../shared/case/case.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { evalSetMembers, normalizeEvalSets, type EvalSets, type EvalSetsDefinition } from "../../shared/datasets/eval-sets.ts";

/**
 * Case selection. Pure; keeps declaration order (spec B).
 */

/** A selector: each filter is exact and case-sensitive; a list matches any of its values; both filters are ANDed. */
export interface Selector {
  /** Keep cases whose name is this (or one of these). */
  name?: string | readonly string[] | null;
  /** Keep cases carrying this tag (or any of these). */
  tag?: string | readonly string[] | null;
  /** Keep cases in this eval set (or any of these), by set name or id; ANDed with `name` and `tag`. A set's members are case ids, else names. */
  set?: string | readonly string[] | null;
  /** The eval sets `set` names (a suite's `evalSets`). An unknown set name throws a usage error. */
  evalSets?: EvalSets | EvalSetsDefinition | null;
}

/** A selected case and its declaration index in the suite. */
export interface SelectedCase {
  index: number;
  case: Case;
}

/** The cases matching `selector`, in declaration order, with their indices. */
export function selectCases(cases: readonly Case[], selector: Selector = {}): SelectedCase[] {
  const names = toList(selector.name);
  const tags = toList(selector.tag);
  const sets = toList(selector.set);
  const members = sets ? evalSetMembers(normalizeEvalSets(selector.evalSets), sets) : null;
  // A member is a case id when a case has that id (Exulu's test_case_ids), else a case name.
  const ids = members ? new Set(cases.map((c) => c.id).filter((id): id is string => Boolean(id))) : null;
  const inSet = (c: Case): boolean => (c.id !== null && c.id !== undefined && members!.has(c.id)) || (members!.has(c.name) && !ids!.has(c.name));
  const selected: SelectedCase[] = [];
  cases.forEach((c, index) => {
    if (names && !names.includes(c.name)) return;
    if (tags && !c.tags.some((t) => tags.includes(t))) return;
    if (members && !inSet(c)) return;
    selected.push({ index, case: c });
  });
  return selected;
}

/** `name=None, tag='nope'`: the selector as Agno prints it in `no cases selected (...)`. */
export function describeSelector(selector: Selector): string {
  // Agno's text, with the eval set only when one was asked for.
  const set = toList(selector.set) ? `, set=${reprFilter(selector.set)}` : "";
  return `name=${reprFilter(selector.name)}, tag=${reprFilter(selector.tag)}${set}`;
}

function toList(value: string | readonly string[] | null | undefined): readonly string[] | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return [value];
  return value.length > 0 ? value : null;
}

function reprFilter(value: string | readonly string[] | null | undefined): string {
  const list = toList(value);
  if (!list) return "None";
  return list.length === 1 ? pyRepr(list[0]) : pyRepr([...list]);
}
