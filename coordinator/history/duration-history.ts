import type { ResultsStore } from "./store/store.ts";
import type { RunRecord } from "./store/run-record.ts";
import { HISTORY_SAMPLE_RUNS, type CaseHistory, type CaseSample } from "../run/schedule-order.ts";

/**
 * Reading what the suite's recorded runs spent per case (seconds, tokens, cost) for the start
 * order (`--order history`), the ETA and `--estimate`. Only finished suite runs count; a regrade
 * (which graded stored outputs, its agents did not run) does not.
 */

/** Runs asked of the store, so that regrades left out still leave {@link HISTORY_SAMPLE_RUNS}. */
const RUNS_READ = HISTORY_SAMPLE_RUNS * 4;

/** A recorded run's trials per case (`--repeat`, kept with its settings), default 1. */
function repeatOf(run: RunRecord): number {
  const r = Number(run.config.repeat);
  return Number.isInteger(r) && r >= 1 ? r : 1;
}

/**
 * The samples of each case of `suiteName` over its newest finished runs (at most `runs`, default
 * {@link HISTORY_SAMPLE_RUNS}), newest first, by case name; a repeated run's sums are divided
 * by its repeat (one sample is one trial). An empty map when the suite has no recorded run.
 */
export async function readCaseHistory(store: ResultsStore, suiteName: string, runs = HISTORY_SAMPLE_RUNS): Promise<CaseHistory> {
  const recorded = (await store.listRuns({ suiteName, kind: "suite", finishedOnly: true, limit: RUNS_READ }))
    .filter((r) => !r.regradedFrom && r.status !== "running")
    .slice(0, runs);
  const out = new Map<string, CaseSample[]>();
  if (recorded.length === 0) return out;
  const spent = await store.caseSpendOf(recorded.map((r) => r.id));
  // Newest first: listRuns's order.
  for (const run of recorded) {
    const repeat = repeatOf(run);
    for (const c of spent.get(run.id) ?? []) {
      let list = out.get(c.name);
      if (!list) out.set(c.name, (list = []));
      list.push({ seconds: c.seconds / repeat, tokens: c.tokens === null ? null : c.tokens / repeat, costUsd: c.costUsd === null ? null : c.costUsd / repeat });
    }
  }
  return out;
}
