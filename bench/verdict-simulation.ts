// The verdict simulation of `npm run bench` (bench/run.ts runs it in a fresh process; it prints
// one JSON line). A suite of 2,000 cases with seeded pass probabilities (four in five stable, near
// 0.98; one in five flaky, between 0.3 and 0.9) is run again and again through the statistics
// the CLI uses: the gate's decision (coordinator/history/significance.ts) and the adaptive
// repeats' stopping rule (shared/trials/adaptive-repeats.ts). No agent, no I/O: seconds.
//
//   node --import tsx bench/verdict-simulation.ts
//
// - gate_false_alarm_rate: 1,000 pairs of runs of the same agent (--repeat 10 on both sides): the
//   share the gate calls `regressed`. gate_false_alarm_rate_raw_flips: the share today's rule
//   fails (a case that passed every trial in A and not in B).
// - gate_power: 1,000 pairs where the candidate drops 40 cases (drawn anew each pair) by 0.5:
//   the share called `regressed`.
// - The same with one trial per case (`*_single_trial`): what a nightly run without repeats can
//   and cannot see.
// - adaptive_trials_ratio: trials spent by --repeat 3..20 --case-pass-rate 0.8 over those of a
//   fixed --repeat 20, over 5 runs of the suite; adaptive_agreement: the share of cases whose
//   verdict is the fixed run's, on the same trials (the adaptive run stops early on a prefix of
//   the trials the fixed run makes). fixed_repeat_self_agreement: how often two independent fixed
//   runs of 20 agree, the noise any verdict on these cases lives with.
import { compareSignificance, type PairedCase } from "../coordinator/history/significance.ts";
import { adaptiveStep, type AdaptiveRule } from "../shared/trials/adaptive-repeats.ts";
import { binomialPmf } from "../shared/stats/binomial-test.ts";
import { seededRandom } from "../shared/seeded-random.ts";
import { DEFAULT_ADAPTIVE_CONFIDENCE, DEFAULT_REGRESSION_ALPHA } from "../shared/defaults.ts";

const CASES = 2000;
const PAIRS = 1000;
const GATE_REPEAT = 10;
const DROPPED_CASES = 40;
const DROP = 0.5;
const ADAPTIVE: AdaptiveRule = { min: 3, max: 20, passRate: 0.8, confidence: DEFAULT_ADAPTIVE_CONFIDENCE };
const ADAPTIVE_SUITE_RUNS = 5;

const random = seededRandom(28);
/** Per-case pass probabilities: 80% stable (0.96-1.0, around 0.98), 20% flaky (0.3-0.9). */
const rates = Array.from({ length: CASES }, () => (random() < 0.8 ? 0.96 + random() * 0.04 : 0.3 + random() * 0.6));

/** The binomial CDF of `trials` trials at `p`, for drawing a case's passes with one random number. */
function cdf(p: number, trials: number): Float64Array {
  const out = new Float64Array(trials + 1);
  let sum = 0;
  for (let k = 0; k <= trials; k++) {
    sum += binomialPmf(k, trials, p);
    out[k] = sum;
  }
  out[trials] = 1;
  return out;
}

/** Passes drawn from a CDF made by {@link cdf} (inverse transform: the same law as `trials` coin flips). */
function draw(table: Float64Array): number {
  const u = random();
  let k = 0;
  while (u > table[k]!) k++;
  return k;
}

/** 40 distinct case indices, drawn anew. */
function dropped(): Set<number> {
  const out = new Set<number>();
  while (out.size < DROPPED_CASES) out.add(Math.floor(random() * CASES));
  return out;
}

interface GateFigures {
  regressedShare: number;
  rawFlipShare: number;
}

/** The binomial CDFs of every case at its rate and at its rate less the drop, by trials per case. */
const tablesByRepeat = new Map([1, GATE_REPEAT].map((n) => [n, { same: rates.map((p) => cdf(p, n)), dropped: rates.map((p) => cdf(Math.max(0, p - DROP), n)) }]));

/**
 * PAIRS comparisons of a baseline run against a candidate of the same agent, or (`worse`) one
 * whose DROPPED_CASES cases, drawn anew each pair, pass DROP less often.
 */
function gate(repeat: number, worse: boolean): GateFigures {
  const tables = tablesByRepeat.get(repeat)!;
  let regressed = 0;
  let rawFlips = 0;
  for (let k = 0; k < PAIRS; k++) {
    const drop = worse ? dropped() : new Set<number>();
    const cases: PairedCase[] = rates.map((_, i) => {
      const passedA = draw(tables.same[i]!);
      const passedB = draw(drop.has(i) ? tables.dropped[i]! : tables.same[i]!);
      return { key: String(i), name: `case_${i}`, a: { passed: passedA, failed: repeat - passedA }, b: { passed: passedB, failed: repeat - passedB } };
    });
    if (compareSignificance(cases, { alpha: DEFAULT_REGRESSION_ALPHA }).verdict === "regressed") regressed++;
    // Today's --fail-on-regression: a case passes only when every trial passed, and any case that
    // passed in the baseline and fails now fails the run.
    if (cases.some((c) => c.a.failed === 0 && c.b.failed > 0)) rawFlips++;
  }
  return { regressedShare: regressed / PAIRS, rawFlipShare: rawFlips / PAIRS };
}

interface AdaptiveFigures {
  ratio: number;
  agreement: number;
  undecided: number;
}

/** The adaptive rule against a fixed run of MAX trials, on the same trials. */
function adaptive(rule: AdaptiveRule): AdaptiveFigures {
  const local = seededRandom(2028);
  let spent = 0;
  let fixed = 0;
  let agree = 0;
  let undecided = 0;
  let cases = 0;
  for (let r = 0; r < ADAPTIVE_SUITE_RUNS; r++) {
    for (const p of rates) {
      const trials = Array.from({ length: rule.max }, () => local() < p);
      const fixedPasses = trials.filter(Boolean).length;
      const fixedVerdict = fixedPasses / rule.max >= rule.passRate - 1e-12;
      let passed = 0;
      let ran = 0;
      for (;;) {
        const step = adaptiveStep(passed, ran, rule);
        if (step.done) {
          if (step.passed === fixedVerdict) agree++;
          if (!step.decided) undecided++;
          break;
        }
        for (let k = 0; k < step.next; k++) if (trials[ran++]) passed++;
      }
      spent += ran;
      fixed += rule.max;
      cases++;
    }
  }
  return { ratio: spent / fixed, agreement: agree / cases, undecided: undecided / cases };
}

/** How often two independent fixed runs of MAX trials give a case the same verdict. */
function fixedSelfAgreement(rule: AdaptiveRule): number {
  const local = seededRandom(99);
  let agree = 0;
  let cases = 0;
  for (let r = 0; r < ADAPTIVE_SUITE_RUNS; r++) {
    for (const p of rates) {
      const verdict = (): boolean => {
        let passed = 0;
        for (let t = 0; t < rule.max; t++) if (local() < p) passed++;
        return passed / rule.max >= rule.passRate - 1e-12;
      };
      if (verdict() === verdict()) agree++;
      cases++;
    }
  }
  return agree / cases;
}

const started = performance.now();
const nullRepeat = gate(GATE_REPEAT, false);
const powerRepeat = gate(GATE_REPEAT, true);
const nullSingle = gate(1, false);
const powerSingle = gate(1, true);
const adaptiveDefault = adaptive(ADAPTIVE);
const adaptive95 = adaptive({ ...ADAPTIVE, confidence: 0.95 });
const selfAgreement = fixedSelfAgreement(ADAPTIVE);

console.log(
  JSON.stringify({
    verdict_cases: CASES,
    verdict_pairs: PAIRS,
    verdict_gate_repeat: GATE_REPEAT,
    gate_false_alarm_rate: nullRepeat.regressedShare,
    gate_false_alarm_rate_raw_flips: nullRepeat.rawFlipShare,
    gate_power: powerRepeat.regressedShare,
    gate_power_raw_flips: powerRepeat.rawFlipShare,
    gate_false_alarm_rate_single_trial: nullSingle.regressedShare,
    gate_false_alarm_rate_raw_flips_single_trial: nullSingle.rawFlipShare,
    gate_power_single_trial: powerSingle.regressedShare,
    adaptive_trials_ratio: adaptiveDefault.ratio,
    adaptive_agreement: adaptiveDefault.agreement,
    adaptive_undecided_share: adaptiveDefault.undecided,
    adaptive_confidence: DEFAULT_ADAPTIVE_CONFIDENCE,
    adaptive_trials_ratio_confidence_95: adaptive95.ratio,
    adaptive_agreement_confidence_95: adaptive95.agreement,
    fixed_repeat_self_agreement: selfAgreement,
    verdict_simulation_s: (performance.now() - started) / 1000,
  }),
);
