import { safeText } from "../../shared/text.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { ExitCode } from "../run/exit-code.ts";
import { matchRerun } from "../run/rerun.ts";
import type { SelectedCase } from "../run/select.ts";
import { applySubset, drawSeed, hasSubset } from "../run/subset.ts";
import type { RunConfig } from "./config.ts";
import type { ResolvedIO } from "./io.ts";

/**
 * The selection of a run command narrowed by a re-run from the results store and by the quick
 * subsets (`--grep`, `--filter-metadata`, `--sample`, `--limit`), with what is worth saying about
 * it on the console: which run the cases come from, which of them the suite no longer has, the
 * seed of a sample. The store's modules load only for a re-run.
 */

/** The narrowed selection and the settings to record with the run, or the exit code when there is nothing to run. */
export type Narrowed = { selected: SelectedCase[]; settings: Record<string, unknown> } | { exit: number };

const KIND_WORDS = { failed: "failed", errors: "errored", incomplete: "skipped or lost" } as const;

/** A regrade's narrowing (coordinator/history/regrade-source.ts): the cases whose stored outputs can be graded again. */
export interface RegradeNarrowing {
  run: { id: string; startedAt: string };
  narrow(selected: readonly SelectedCase[]): Promise<{ selected: SelectedCase[]; skipped: Array<{ name: string; reason: string }> }>;
}

/** Skipped cases listed one per line before the rest are summed up. */
const SKIPS_LISTED = 50;

/** True when the config asks for a re-run or a subset. */
export function narrowsSelection(config: RunConfig): boolean {
  return config.rerun !== null || hasSubset(config.subset);
}

/** See the module comment. */
export async function narrowSelection(suite: LoadedSuite, config: RunConfig, selected: readonly SelectedCase[], io: ResolvedIO, regrade: RegradeNarrowing | null = null): Promise<Narrowed> {
  const out = (line: string): void => void io.stdout.write(`${safeText(line)}\n`);
  let narrowed = [...selected];
  const settings: Record<string, unknown> = {};
  if (regrade) {
    const { selected: kept, skipped } = await regrade.narrow(narrowed);
    settings.regradedFrom = regrade.run.id;
    out(`regrade: ${kept.length} of ${narrowed.length} selected case${narrowed.length === 1 ? "" : "s"} of run ${regrade.run.id} (${regrade.run.startedAt}), graded from their stored outputs; no agent runs`);
    for (const s of skipped.slice(0, SKIPS_LISTED)) out(`regrade: skipped ${s.name}: ${s.reason}`);
    if (skipped.length > SKIPS_LISTED) out(`regrade: ... and ${skipped.length - SKIPS_LISTED} more skipped`);
    if (skipped.length > 0) settings.regradeSkipped = skipped.length;
    narrowed = kept;
  }
  if (config.rerun) {
    const { readRerunSource } = await import("../history/rerun-source.ts");
    const source = await readRerunSource(config.rerun, { db: config.store.db!, timeoutSeconds: config.store.timeoutSeconds, suite: { name: suite.name, path: suite.path || null } });
    const words = KIND_WORDS[source.kind];
    settings.rerunOf = source.run.id;
    settings.rerunKind = source.kind;
    if (source.targets.length === 0) {
      out(`nothing to re-run: run ${source.run.id} has no ${words} cases`);
      return { exit: ExitCode.Ok };
    }
    const all = suite.cases.map((c, index) => ({ index, case: c }));
    const match = matchRerun(narrowed, all, source.targets);
    narrowed = match.selected;
    out(`re-run: ${match.selected.length} of the ${source.targets.length} ${words} case${source.targets.length === 1 ? "" : "s"} of run ${source.run.id} (${source.run.startedAt})`);
    if (match.missing.length > 0) out(`re-run: left out, not in the suite any more: ${match.missing.join(", ")}`);
  }
  const subset = config.subset;
  if (hasSubset(subset)) {
    const seed = subset.sample ? (subset.seed ?? drawSeed()) : null;
    const before = narrowed.length;
    narrowed = applySubset(narrowed, { ...subset, seed });
    if (seed !== null) {
      settings.seed = seed;
      out(`sample: ${Math.min(subset.sample!, before)} of ${before} cases, seed ${seed} (--seed ${seed} draws the same ones again)`);
    }
  }
  return { selected: narrowed, settings };
}
