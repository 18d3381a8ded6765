import type { Case } from "../shared/case.ts";
import { pyRepr } from "../shared/py-format.ts";

/**
 * Case selection. Pure; keeps declaration order (spec B).
 */

/** A selector: each filter is exact and case-sensitive; a list matches any of its values; both filters are ANDed. */
export interface Selector {
  /** Keep cases whose name is this (or one of these). */
  name?: string | readonly string[] | null;
  /** Keep cases carrying this tag (or any of these). */
  tag?: string | readonly string[] | null;
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
  const selected: SelectedCase[] = [];
  cases.forEach((c, index) => {
    if (names && !names.includes(c.name)) return;
    if (tags && !c.tags.some((t) => tags.includes(t))) return;
    selected.push({ index, case: c });
  });
  return selected;
}

/** `name=None, tag='nope'`: the selector as Agno prints it in `no cases selected (...)`. */
export function describeSelector(selector: Selector): string {
  return `name=${reprFilter(selector.name)}, tag=${reprFilter(selector.tag)}`;
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
