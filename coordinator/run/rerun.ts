import type { SelectedCase } from "./select.ts";

/**
 * Which cases a re-run selects from a recorded run (`--rerun-failed`, `--rerun-errors`,
 * `--rerun-incomplete`, `--last-failed`), and matching them to the suite as it is now. Pure: the
 * records are handed in (the store reads them; coordinator/history/rerun-source.ts).
 */

/** What a re-run takes from a recorded run: failed cases (errors included), errored cases only, or the skipped and lost ones. */
export type RerunKind = "failed" | "errors" | "incomplete";

/** A recorded case as a re-run needs it. */
export interface RecordedOutcome {
  name: string;
  /** The case's id (a dataset row's), when it had one. */
  caseId?: string | null;
  passed: boolean;
  skipped: boolean;
  error: string | null;
}

/** A case to run again: its name, and its id when the record had one. */
export interface RerunTarget {
  name: string;
  caseId: string | null;
}

/**
 * The recorded cases `kind` takes, in the record's order. `failed`: every case that ran and did not
 * pass (an error, a timeout, a failed check); `errors`: those with an error only; `incomplete`: the
 * skipped ones and the run's selected cases that have no record at all (lost with a crashed
 * process). `selectedNames` is the run's recorded selection (null when it was not recorded).
 */
export function rerunTargets(kind: RerunKind, records: readonly RecordedOutcome[], selectedNames: readonly string[] | null): RerunTarget[] {
  const target = (r: RecordedOutcome): RerunTarget => ({ name: r.name, caseId: r.caseId ?? null });
  switch (kind) {
    case "failed":
      return records.filter((r) => !r.skipped && !r.passed).map(target);
    case "errors":
      return records.filter((r) => !r.skipped && r.error !== null).map(target);
    case "incomplete": {
      const recorded = new Set(records.map((r) => r.name));
      const lost = (selectedNames ?? []).filter((n) => !recorded.has(n)).map((name) => ({ name, caseId: null }));
      return [...records.filter((r) => r.skipped).map(target), ...lost];
    }
  }
}

/** The selection narrowed to the targets, in declaration order, and the targets no case of the suite matches any more. */
export interface RerunMatch {
  selected: SelectedCase[];
  /** `name` (or `name (id X)`) of each target the suite no longer has, in the record's order. */
  missing: string[];
}

/**
 * The cases of `selected` that are targets: matched by name, and by id when the record has one (a
 * dataset row whose id changed is another case). Declaration order is the suite's, as it is now.
 * A target not in the whole suite is listed in `missing`; one the other filters (`--tag`, ...) left
 * out is simply not run (AND across kinds). `all` is every case of the suite (for `missing`).
 */
export function matchRerun(selected: readonly SelectedCase[], all: readonly SelectedCase[], targets: readonly RerunTarget[]): RerunMatch {
  const byName = new Map<string, RerunTarget[]>();
  for (const t of targets) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  const matches = (s: SelectedCase): boolean => (byName.get(s.case.name) ?? []).some((t) => t.caseId === null || t.caseId === (s.case.id ?? null));
  const found = new Set<RerunTarget>();
  for (const s of all) for (const t of byName.get(s.case.name) ?? []) if (t.caseId === null || t.caseId === (s.case.id ?? null)) found.add(t);
  return {
    selected: selected.filter(matches),
    missing: targets.filter((t) => !found.has(t)).map((t) => (t.caseId ? `${t.name} (id ${t.caseId})` : t.name)),
  };
}
