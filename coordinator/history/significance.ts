import { CONVENTIONAL_CONFIDENCE, CONVENTIONAL_ALPHA } from "../../shared/stats/conventional-levels.ts";
import { mcnemarExact } from "../../shared/stats/binomial-test.ts";
import { fisherExact } from "../../shared/stats/fisher-exact.ts";
import type { Interval } from "../../shared/stats/interval.ts";
import { taroneHolm } from "../../shared/stats/multiple-testing.ts";
import { newcombePairedInterval, pairedDifferenceTest } from "../../shared/stats/paired-tests.ts";

/**
 * The decision of the significance-aware `compare A B` and `--fail-on-regression`: given the
 * cases of a baseline run A and a candidate run B, paired, whether B regressed, improved, or
 * neither beyond what chance explains. Pure; no I/O (the store reads the runs, the CLI prints).
 *
 * What it tests, and how the false-alarm rate stays at most alpha:
 * - The run level: the difference in pass rate, B - A, over the cases compared (quarantined cases
 *   left out). Every case ran once on both sides: exact McNemar on the discordant cases, with
 *   Newcombe's paired interval; otherwise the paired test of the per-case pass rates (exact
 *   sign-flip up to 20 changed cases, paired t beyond: shared/stats/paired-tests.ts). It is
 *   tested at alpha x GATE_RUN_LEVEL_ALPHA_SHARE (0.025 of 0.05).
 * - Per case: Fisher's exact test of its trials in A (with its history, when given) against its
 *   trials in B, every compared case in one family at the rest of alpha, corrected by Tarone-Holm
 *   (Holm's step-down, dividing alpha only by the cases that could be significant at all:
 *   shared/stats/multiple-testing.ts), which keeps the chance of any false per-case verdict at
 *   most its share.
 * - Splitting alpha between the two (Bonferroni) bounds the chance that either raises a false
 *   alarm by their sum: two runs of the same agent are called `regressed` at most alpha of the
 *   time, whatever the dependence between the two tests.
 * - The mean score (judge or scorer) gets its own paired test, reported beside the pass rate; it
 *   does not move the verdict.
 */

/**
 * The share of the gate's alpha spent on the run-level test; the per-case tests get the rest.
 * How the gate splits its false-alarm budget (part of its method), not a setting.
 */
const GATE_RUN_LEVEL_ALPHA_SHARE = 0.5;

/** One side of a case: its trials that passed, failed, and ended in an infrastructure error (left out). */
export interface SideTrials {
  passed: number;
  failed: number;
  /** Trials whose failure was `error_kind: infra`: not a verdict on the agent. Default 0. */
  infra?: number;
}

/** One case of both runs, paired (by dataset id, else name: {@link pairingKey}). */
export interface PairedCase {
  /** The pairing key. */
  key: string;
  /** The case's name, for the report. */
  name: string;
  /** Its trials in the baseline run A (one trial without `--repeat`). */
  a: SideTrials;
  /** Its trials in the candidate run B. */
  b: SideTrials;
  /** Its mean score in A and in B (judge 1-10 or scorer 0-1), when it has one. Default none. */
  scoreA?: number | null;
  scoreB?: number | null;
  /**
   * Its trials in runs before A with the same checks, pooled with A's for the per-case test (not
   * for the run level): a case that passed 30 nights running and fails 0/5 tonight is
   * significant where 1 night against 5 trials is not. Default none.
   */
  history?: { passed: number; failed: number } | null;
  /** The fingerprints of its checks in A and B; when both are known and differ it is not compared. Default unknown. */
  checksA?: string | null;
  checksB?: string | null;
  /** A known-flaky (quarantined) case: reported, left out of the run level, never failing the gate. Default false. */
  quarantined?: boolean;
}

/** How the comparison is made. */
export interface SignificanceOptions {
  /** The false-alarm bound of the verdict, 0 < alpha < 1; default {@link CONVENTIONAL_ALPHA}. */
  alpha?: number;
  /** Two-sided confidence of the intervals reported; default {@link CONVENTIONAL_CONFIDENCE}. */
  confidence?: number;
}

/** A case's verdict. */
export type CaseVerdict =
  | "regressed"
  | "improved"
  | "changed, not significant"
  | "unchanged"
  | "checks changed: not compared"
  | "infra error: not compared"
  | "not run: not compared";

/** The gate's verdict. */
export type GateVerdict = "regressed" | "improved" | "no significant change";

/** A run-level paired test: pass rate or mean score. */
export interface RunLevelTest {
  /** Cases in the test. */
  cases: number;
  /** A's and B's mean over those cases (the pass rate: of per-case pass rates). */
  a: number;
  b: number;
  /** B - A. */
  difference: number;
  /** Its interval at the confidence asked for. */
  differenceCi: Interval;
  pValue: number;
  method: "mcnemar exact" | "sign-flip exact" | "paired t";
  /** The level it was tested at (the pass rate: its share of alpha; the score: alpha, for the record). */
  alpha: number;
  /** pValue <= alpha, with a difference that is not 0. */
  significant: boolean;
}

/** One case's comparison. */
export interface CaseComparison {
  key: string;
  name: string;
  verdict: CaseVerdict;
  quarantined: boolean;
  /** Trials that ran (infra errors left out) and passed, on each side. */
  a: { passed: number; trials: number };
  b: { passed: number; trials: number };
  /** The per-case test's baseline: A's trials with the history's. */
  baseline: { passed: number; trials: number };
  /** Fisher's two-sided p-value, baseline against B; null when the case was not compared. */
  pValue: number | null;
  /** Whether the case could have been significant (counted in Tarone's divisor). */
  testable: boolean;
  /** Trials left out as infrastructure errors, both sides. */
  infraTrials: number;
}

/** The outcome of {@link compareSignificance}. */
export interface SignificanceResult {
  verdict: GateVerdict;
  alpha: number;
  confidence: number;
  /** The run-level test of the pass rate, over the compared, non-quarantined cases. */
  passRate: RunLevelTest;
  /** The run-level test of the mean score, over those of them with a score on both sides; null with none. */
  score: RunLevelTest | null;
  /** The per-case family: its level and how many cases alpha was divided by. */
  perCase: { alpha: number; correction: "tarone-holm"; compared: number; divisor: number };
  /** Every case, in the input's order. */
  cases: CaseComparison[];
  counts: Record<CaseVerdict, number> & { quarantined: number; infraTrials: number };
}

/** The key cases are paired by: the dataset row's id when the case has one, else its name. */
export function pairingKey(c: { caseId?: string | null; name: string }): string {
  return c.caseId ? `id:${c.caseId}` : `name:${c.name}`;
}

/**
 * Pairs the cases of runs A and B by `keyOf`: the pairs in B's order, then what only one side
 * has. Keys are unique within a run (a suite's names are); a repeated key pairs its first case.
 */
export function pairCases<T>(a: readonly T[], b: readonly T[], keyOf: (c: T) => string): { pairs: Array<{ key: string; a: T; b: T }>; onlyInA: T[]; onlyInB: T[] } {
  const before = new Map<string, T>();
  const onlyInA: T[] = [];
  for (const c of a) {
    const key = keyOf(c);
    if (before.has(key)) onlyInA.push(c);
    else before.set(key, c);
  }
  const pairs: Array<{ key: string; a: T; b: T }> = [];
  const onlyInB: T[] = [];
  for (const c of b) {
    const key = keyOf(c);
    const was = before.get(key);
    if (was === undefined) onlyInB.push(c);
    else {
      pairs.push({ key, a: was, b: c });
      before.delete(key);
    }
  }
  onlyInA.push(...before.values());
  return { pairs, onlyInA, onlyInB };
}

function checkSide(side: SideTrials, where: string): void {
  for (const [field, v] of [["passed", side.passed], ["failed", side.failed], ["infra", side.infra ?? 0]] as const) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`compareSignificance: ${where}.${field} must be an integer >= 0, got ${v}`);
  }
}

const SINGLE_TRIAL_DIFFERENCE_CI: Interval = [-1, 1];

/** The run-level test of the pass rate over `compared` (each with trials on both sides). */
function passRateTest(compared: readonly CaseComparison[], alpha: number, confidence: number): RunLevelTest {
  const n = compared.length;
  if (n === 0) return { cases: 0, a: 0, b: 0, difference: 0, differenceCi: SINGLE_TRIAL_DIFFERENCE_CI, pValue: 1, method: "mcnemar exact", alpha, significant: false };
  const rateA = compared.reduce((s, c) => s + c.a.passed / c.a.trials, 0) / n;
  const rateB = compared.reduce((s, c) => s + c.b.passed / c.b.trials, 0) / n;
  if (compared.every((c) => c.a.trials === 1 && c.b.trials === 1)) {
    const table = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
    for (const c of compared) {
      if (c.a.passed && c.b.passed) table.both++;
      else if (c.a.passed) table.onlyA++;
      else if (c.b.passed) table.onlyB++;
      else table.neither++;
    }
    const pValue = mcnemarExact(table.onlyA, table.onlyB);
    const difference = (table.onlyB - table.onlyA) / n;
    return { cases: n, a: rateA, b: rateB, difference, differenceCi: newcombePairedInterval(table, confidence), pValue, method: "mcnemar exact", alpha, significant: pValue <= alpha && difference !== 0 };
  }
  const t = pairedDifferenceTest(
    compared.map((c) => c.b.passed / c.b.trials - c.a.passed / c.a.trials),
    confidence,
  );
  return { cases: n, a: rateA, b: rateB, difference: t.mean, differenceCi: t.interval, pValue: t.pValue, method: t.method, alpha, significant: t.pValue <= alpha && t.mean !== 0 };
}

/**
 * Compares the paired cases of A (baseline) and B (candidate); see the module's comment for the
 * tests. Throws a RangeError on counts that are not integers >= 0 or an alpha or confidence
 * outside (0, 1), naming the case and field.
 */
export function compareSignificance(cases: readonly PairedCase[], options: SignificanceOptions = {}): SignificanceResult {
  const alpha = options.alpha ?? CONVENTIONAL_ALPHA;
  const confidence = options.confidence ?? CONVENTIONAL_CONFIDENCE;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`compareSignificance: alpha must be between 0 and 1 (exclusive), got ${alpha}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`compareSignificance: confidence must be between 0 and 1 (exclusive), got ${confidence}`);
  const runAlpha = alpha * GATE_RUN_LEVEL_ALPHA_SHARE;
  const caseAlpha = alpha - runAlpha;

  const out: CaseComparison[] = [];
  /** The compared cases (trials on both sides, same checks), with their input. */
  const compared: Array<{ input: PairedCase; result: CaseComparison }> = [];
  for (const c of cases) {
    checkSide(c.a, `${c.name}.a`);
    checkSide(c.b, `${c.name}.b`);
    if (c.history) checkSide(c.history, `${c.name}.history`);
    const a = { passed: c.a.passed, trials: c.a.passed + c.a.failed };
    const b = { passed: c.b.passed, trials: c.b.passed + c.b.failed };
    const history = c.history ?? { passed: 0, failed: 0 };
    const baseline = { passed: a.passed + history.passed, trials: a.trials + history.passed + history.failed };
    const infraTrials = (c.a.infra ?? 0) + (c.b.infra ?? 0);
    let verdict: CaseVerdict = "unchanged";
    if (c.checksA && c.checksB && c.checksA !== c.checksB) verdict = "checks changed: not compared";
    else if (a.trials === 0 || b.trials === 0) verdict = infraTrials > 0 ? "infra error: not compared" : "not run: not compared";
    const result: CaseComparison = { key: c.key, name: c.name, verdict, quarantined: c.quarantined ?? false, a, b, baseline, pValue: null, testable: false, infraTrials };
    out.push(result);
    if (verdict === "unchanged") compared.push({ input: c, result });
  }

  // Per case: Fisher, baseline against B, all compared cases in one Tarone-Holm family.
  // Cases with the same counts get the same test: a suite has few distinct tables, so each is computed once.
  const tables = new Map<string, ReturnType<typeof fisherExact>>();
  const fisher = compared.map(({ result: c }) => {
    const key = `${c.baseline.passed}/${c.baseline.trials}/${c.b.passed}/${c.b.trials}`;
    let f = tables.get(key);
    if (!f) {
      f = fisherExact([[c.baseline.passed, c.baseline.trials - c.baseline.passed], [c.b.passed, c.b.trials - c.b.passed]]);
      tables.set(key, f);
    }
    return f;
  });
  const family = taroneHolm(
    fisher.map((f) => f.pValue),
    fisher.map((f) => f.minimumPValue),
    caseAlpha,
  );
  compared.forEach(({ result: c }, i) => {
    c.pValue = fisher[i]!.pValue;
    c.testable = family.testable[i]!;
    // A against B says whether the case changed and which way; the test (with history) whether
    // that is significant. A significant test the other way (history disagreeing with A) is not.
    const direction = Math.sign(c.b.passed * c.a.trials - c.a.passed * c.b.trials);
    const tested = Math.sign(c.b.passed * c.baseline.trials - c.baseline.passed * c.b.trials);
    if (direction === 0) c.verdict = "unchanged";
    else if (family.rejected[i] && tested === direction) c.verdict = direction < 0 ? "regressed" : "improved";
    else c.verdict = "changed, not significant";
  });

  const gated = compared.filter(({ result }) => !result.quarantined);
  const passRate = passRateTest(
    gated.map(({ result }) => result),
    runAlpha,
    confidence,
  );
  const scored = gated.flatMap(({ input }) => (Number.isFinite(input.scoreA) && Number.isFinite(input.scoreB) ? [{ a: input.scoreA!, b: input.scoreB! }] : []));
  let score: RunLevelTest | null = null;
  if (scored.length > 0) {
    const t = pairedDifferenceTest(
      scored.map((x) => x.b - x.a),
      confidence,
    );
    const mean = (xs: number[]): number => xs.reduce((sum, x) => sum + x, 0) / xs.length;
    score = { cases: scored.length, a: mean(scored.map((x) => x.a)), b: mean(scored.map((x) => x.b)), difference: t.mean, differenceCi: t.interval, pValue: t.pValue, method: t.method, alpha, significant: t.pValue <= alpha && t.mean !== 0 };
  }

  const regressed = (passRate.significant && passRate.difference < 0) || gated.some(({ result }) => result.verdict === "regressed");
  const improved = (passRate.significant && passRate.difference > 0) || gated.some(({ result }) => result.verdict === "improved");
  const counts = {
    regressed: 0,
    improved: 0,
    "changed, not significant": 0,
    unchanged: 0,
    "checks changed: not compared": 0,
    "infra error: not compared": 0,
    "not run: not compared": 0,
    quarantined: 0,
    infraTrials: 0,
  } satisfies SignificanceResult["counts"];
  for (const c of out) {
    counts[c.verdict]++;
    if (c.quarantined) counts.quarantined++;
    counts.infraTrials += c.infraTrials;
  }
  return {
    verdict: regressed ? "regressed" : improved ? "improved" : "no significant change",
    alpha,
    confidence,
    passRate,
    score,
    perCase: { alpha: caseAlpha, correction: "tarone-holm", compared: compared.length, divisor: family.divisor },
    cases: out,
    counts,
  };
}

/** A run-level test as `compare --json` writes it. */
function testJson(t: RunLevelTest) {
  return { cases: t.cases, a: t.a, b: t.b, difference: t.difference, difference_ci: [...t.differenceCi], p_value: t.pValue, method: t.method, alpha: t.alpha, significant: t.significant };
}

/**
 * The significance keys of `compare --json` (snake_case, as the JSON report's): `verdict`,
 * `p_value`, `difference` and `difference_ci` of the pass rate at the top, the two run-level
 * tests, the per-case family, the counts, and every case whose verdict is not `unchanged`. An
 * infinite interval end (fewer than two cases) is written as null, as JSON does.
 */
export function significanceJson(r: SignificanceResult) {
  const c = r.counts;
  return {
    verdict: r.verdict,
    alpha: r.alpha,
    confidence: r.confidence,
    p_value: r.passRate.pValue,
    difference: r.passRate.difference,
    difference_ci: [...r.passRate.differenceCi],
    method: r.passRate.method,
    pass_rate: testJson(r.passRate),
    score: r.score ? testJson(r.score) : null,
    per_case: { alpha: r.perCase.alpha, correction: r.perCase.correction, compared: r.perCase.compared, divisor: r.perCase.divisor },
    counts: {
      regressed: c.regressed,
      improved: c.improved,
      changed_not_significant: c["changed, not significant"],
      unchanged: c.unchanged,
      checks_changed: c["checks changed: not compared"],
      infra_errors: c["infra error: not compared"],
      not_run: c["not run: not compared"],
      quarantined: c.quarantined,
      infra_trials: c.infraTrials,
    },
    cases: r.cases
      .filter((x) => x.verdict !== "unchanged")
      .map((x) => ({ name: x.name, verdict: x.verdict, quarantined: x.quarantined, p_value: x.pValue, a: x.a, b: x.b, baseline: x.baseline, infra_trials: x.infraTrials })),
  };
}
