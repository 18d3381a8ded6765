import { CONVENTIONAL_CONFIDENCE } from "../../shared/stats/conventional-levels.ts";
import type { Interval } from "../../shared/stats/interval.ts";
import { wilsonInterval } from "../../shared/stats/wilson.ts";
import { trialsOfReport, type TrialReport } from "./case-trials.ts";
import { outcomeOf, type HistoryCase, type Outcome } from "./outcome.ts";

/**
 * `evalfleet flaky` and `--quarantine-flaky`: per case, over the last N runs of a suite, its
 * trials (each repeat of `--repeat` counts, infrastructure errors do not), its pass rate with a
 * Wilson interval, and how often its outcome flipped between runs. A case is flaky when that
 * interval lies inside (m, 1 - m), m = {@link FLAKY_RATE_MARGIN}: the trials are evidence that it
 * passes sometimes and fails sometimes, not a good case with one blip or a broken one that once
 * passed. Pure; no I/O.
 */

/**
 * The margin m of the flaky rule: a case is flaky when the interval of its pass rate over its
 * trials lies inside (0.05, 0.95): evidence that it passes and fails, where one failure in 30 good
 * runs (interval up to 0.99) or one pass in 30 bad ones is not. Part of what "flaky" means here
 * (`flaky`, `--quarantine-flaky`), not a setting.
 */
export const FLAKY_RATE_MARGIN = 0.05;

/** One run of the window, oldest first. A case with its report entry (`report`) counts each of its repeats. */
export interface HistoryRun {
  runId: string;
  cases: ReadonlyArray<HistoryCase & { report?: TrialReport | null }>;
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
  /** Its trials over the window (a run without repeats is one; infrastructure errors left out) and those that passed. */
  trials: number;
  trialPasses: number;
  /** The Wilson interval of trialPasses / trials at the confidence asked for ([0, 1] with no trials). */
  passRateCi: Interval;
  /** Whether passRateCi lies inside (FLAKY_RATE_MARGIN, 1 - FLAKY_RATE_MARGIN). */
  flaky: boolean;
}

/**
 * Flakiness of every case seen in `runs` (oldest first), intervals at `confidence` (default
 * {@link CONVENTIONAL_CONFIDENCE}). Sorted: flaky first, then most flips, then lowest pass rate, then name.
 */
export function flakiness(runs: readonly HistoryRun[], confidence: number = CONVENTIONAL_CONFIDENCE): CaseFlakiness[] {
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
  const trialsByName = new Map<string, { passed: number; trials: number }>();
  for (const run of runs) {
    for (const c of run.cases) {
      const t = c.report ? trialsOfReport({ ...c.report, passed: c.passed, skipped: c.skipped }) : { passed: outcomeOf(c) === "pass" ? 1 : 0, failed: outcomeOf(c) === "fail" ? 1 : 0 };
      const sum = trialsByName.get(c.name) ?? { passed: 0, trials: 0 };
      sum.passed += t.passed;
      sum.trials += t.passed + t.failed;
      trialsByName.set(c.name, sum);
    }
  }
  const out = names.map((name): CaseFlakiness => {
    const outcomes = byRun.map((m) => m.get(name) ?? null);
    const t = trialsByName.get(name) ?? { passed: 0, trials: 0 };
    const passRateCi = wilsonInterval(t.passed, t.trials, confidence);
    const flaky = t.trials > 0 && passRateCi[0] > FLAKY_RATE_MARGIN && passRateCi[1] < 1 - FLAKY_RATE_MARGIN;
    const ran = outcomes.filter((o): o is "pass" | "fail" => o === "pass" || o === "fail");
    const passes = ran.filter((o) => o === "pass").length;
    let flips = 0;
    for (let i = 1; i < ran.length; i++) if (ran[i] !== ran[i - 1]) flips++;
    const last = [...outcomes].reverse().find((o) => o !== null) ?? null;
    return { name, runs: ran.length, passes, passRate: ran.length ? passes / ran.length : 0, flips, outcomes, last, trials: t.trials, trialPasses: t.passed, passRateCi, flaky };
  });
  return out.sort((x, y) => Number(y.flaky) - Number(x.flaky) || y.flips - x.flips || x.passRate - y.passRate || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** A case is flaky when the interval of its pass rate over its trials is clear of both "always fails" and "always passes" (see the module). */
export function isFlaky(c: CaseFlakiness): boolean {
  return c.flaky;
}
