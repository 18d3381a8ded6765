import { outcomeOf, type HistoryCase, type Outcome } from "./outcome.ts";

/**
 * `evalfleet flaky`: per case, over the last N runs of a suite, how often it passed and how often
 * its outcome flipped between pass and fail. A case that fails every time is broken, not flaky;
 * one that flips is. Pure; no I/O.
 */

/** One run of the window, oldest first. */
export interface HistoryRun {
  runId: string;
  cases: readonly HistoryCase[];
}

/** The flakiness of one case over the window. */
export interface CaseFlakiness {
  name: string;
  /** Runs in which the case ran (skipped runs are not counted). */
  runs: number;
  passes: number;
  /** passes / runs, 0-1 (0 when it never ran). */
  passRate: number;
  /** Changes between pass and fail from one run to the next it ran in. */
  flips: number;
  /** Outcome per run of the window, oldest first (`null`: the case was not in that run). */
  outcomes: Array<Outcome | null>;
  /** The outcome in the newest run it ran in, or null. */
  last: Outcome | null;
}

/**
 * Flakiness of every case seen in `runs` (oldest first). Sorted: most flips first, then lowest
 * pass rate, then name.
 */
export function flakiness(runs: readonly HistoryRun[]): CaseFlakiness[] {
  const names: string[] = [];
  const seen = new Set<string>();
  // Newest run's order first, so the table reads like the suite.
  for (const run of [...runs].reverse()) {
    for (const c of run.cases) {
      if (!seen.has(c.name)) {
        seen.add(c.name);
        names.push(c.name);
      }
    }
  }
  const byRun = runs.map((r) => new Map(r.cases.map((c) => [c.name, outcomeOf(c)])));
  const out = names.map((name): CaseFlakiness => {
    const outcomes = byRun.map((m) => m.get(name) ?? null);
    const ran = outcomes.filter((o): o is "pass" | "fail" => o === "pass" || o === "fail");
    const passes = ran.filter((o) => o === "pass").length;
    let flips = 0;
    for (let i = 1; i < ran.length; i++) if (ran[i] !== ran[i - 1]) flips++;
    const last = [...outcomes].reverse().find((o) => o !== null) ?? null;
    return { name, runs: ran.length, passes, passRate: ran.length ? passes / ran.length : 0, flips, outcomes, last };
  });
  return out.sort((x, y) => y.flips - x.flips || x.passRate - y.passRate || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** A case is flaky when it both passed and failed in the window. */
export function isFlaky(c: CaseFlakiness): boolean {
  return c.flips > 0;
}
