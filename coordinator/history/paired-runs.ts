import type { TrialCase } from "./case-trials.ts";
import { pairCases, pairingKey, type PairedCase } from "./significance.ts";

/**
 * Two runs of a suite, paired case by case for the significance-aware `compare` and
 * `--fail-on-regression` (significance.ts decides): by dataset id, else by name; each case with
 * its trials on both sides, its history (earlier runs graded by the same checks as A's), its
 * fingerprints and whether it is quarantined. Pure; no I/O.
 */

/** What {@link pairRuns} pairs. */
export interface PairingInput {
  /** The baseline run's cases. */
  a: readonly TrialCase[];
  /** The candidate run's cases. */
  b: readonly TrialCase[];
  /** Runs before A, any order; their trials of a case join A's in the per-case test. Default none. */
  history?: ReadonlyArray<readonly TrialCase[]>;
  /** Names of known-flaky cases (`--quarantine-flaky`): reported, never failing the gate. Default none. */
  quarantined?: ReadonlySet<string>;
}

/** The pairs, and the names of the cases only one side has. */
export interface PairedRuns {
  cases: PairedCase[];
  onlyInA: string[];
  onlyInB: string[];
}

const keyOf = (c: TrialCase): string => pairingKey({ caseId: c.caseId, name: c.name });

/** Fingerprints agree unless both are known and differ (a run recorded before fingerprints counts as the same). */
const sameChecks = (x: string | null, y: string | null): boolean => x === null || y === null || x === y;

/** Pairs the cases of A and B; see {@link PairingInput}. */
export function pairRuns(input: PairingInput): PairedRuns {
  const { pairs, onlyInA, onlyInB } = pairCases(input.a, input.b, keyOf);
  const history = new Map<string, TrialCase[]>();
  for (const run of input.history ?? []) {
    for (const c of run) {
      const key = keyOf(c);
      const list = history.get(key);
      if (list) list.push(c);
      else history.set(key, [c]);
    }
  }
  const cases = pairs.map(({ key, a, b }): PairedCase => {
    // Only history graded as A was: a case whose checks changed since starts its history again.
    const earlier = (history.get(key) ?? []).filter((h) => sameChecks(h.checks, a.checks));
    const passed = earlier.reduce((s, h) => s + h.trials.passed, 0);
    const failed = earlier.reduce((s, h) => s + h.trials.failed, 0);
    return {
      key,
      name: b.name,
      a: a.trials,
      b: b.trials,
      scoreA: a.score,
      scoreB: b.score,
      history: passed + failed > 0 ? { passed, failed } : null,
      checksA: a.checks,
      checksB: b.checks,
      quarantined: input.quarantined?.has(b.name) ?? false,
    };
  });
  return { cases, onlyInA: onlyInA.map((c) => c.name), onlyInB: onlyInB.map((c) => c.name) };
}
