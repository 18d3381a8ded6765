// A run's statistics (shared/result/run-statistics.ts) and the JSON keys they fill: the pass rate's
// interval (Wilson once, cluster-robust with repeats), pass^k, mean scores with intervals, and the
// per-case pass rule (shared/trials/case-pass-rule.ts) — against published and hand-computed values.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult, SuiteResult } from "../../../index.ts";
import { aggregateRepeats } from "../../../shared/trials/fold-repeats.ts";
import { caseTrials, casePassRateInterval, runStatistics } from "../../../shared/result/run-statistics.ts";
import { meetsCasePassRate, casePassRateOf } from "../../../shared/trials/case-pass-rule.ts";
import { expectationResult as result } from "../../support/results.ts";

const round4 = (xs: readonly number[]): number[] => xs.map((x) => Number(x.toFixed(4)));

/** A case run `passes.length` times, trial i passing when passes[i]; `extra` goes on every run. */
function repeated(name: string, passes: readonly boolean[], extra: (i: number) => Partial<ConstructorParameters<typeof CaseResult>[0]> = () => ({})): CaseResult {
  return aggregateRepeats(passes.map((p, i) => result(name, p, extra(i))));
}

/** A suite of `passed` passing then `failed` failing single-trial cases. */
function singles(passed: number, failed: number): CaseResult[] {
  return [...Array.from({ length: passed }, (_, i) => result(`p${i}`, true)), ...Array.from({ length: failed }, (_, i) => result(`f${i}`, false))];
}

describe("the run's pass rate interval", () => {
  test("each case once: Wilson's interval of passed / total, Newcombe 1998's published values (method 3)", () => {
    // Newcombe (Stat Med 17:857-872), table II, the score method: 81/263, 15/148, 0/20, 1/29.
    for (const [x, n, low, high] of [[81, 263, 0.2553, 0.3662], [15, 148, 0.0624, 0.1605], [0, 20, 0, 0.1611], [1, 29, 0.0061, 0.1718]] as const) {
      const s = runStatistics(singles(x, n - x));
      assert.equal(s.method, "wilson");
      assert.equal(s.trialPassRate, x / n);
      assert.deepEqual(round4(s.passRateInterval), [low, high], `${x}/${n}`);
    }
  });

  test("the summary carries it, around pass_rate exactly, at the run's confidence", () => {
    const summary = new SuiteResult(singles(81, 182)).toJSON().summary;
    assert.equal(summary.confidence, 0.95);
    assert.equal(summary.pass_rate_method, "wilson");
    assert.equal(summary.trial_pass_rate, summary.pass_rate);
    assert.deepEqual(round4(summary.pass_rate_ci), [0.2553, 0.3662]);
    // At 99% the interval widens: Wilson 81/263, z = 2.5758: center (0.30798 + z^2/526) / 1.02523 =
    // 0.31271, half (z / 1.02523) sqrt(0.30798 * 0.69202 / 263 + z^2 / 276676) = 0.07257.
    const wide = new SuiteResult(singles(81, 182), { confidence: 0.99 }).toJSON().summary;
    assert.equal(wide.confidence, 0.99);
    assert.deepEqual(round4(wide.pass_rate_ci), [0.2401, 0.3853]);
  });

  test("with repeats: the mean of per-case pass rates, cases as clusters (not trials as independent draws)", () => {
    // Two cases, 4/4 and 0/4: mean 0.5; CR0 variance ((0.5)^2 + (0.5)^2) / 2^2 = 0.125, so 2
    // effective trials (not 8); Wilson at p = 0.5, n = 2: 0.5 +- (1.96 / 2.9208) sqrt(0.125 + 0.2401).
    const cases = [repeated("a", [true, true, true, true]), repeated("b", [false, false, false, false])];
    const s = runStatistics(cases);
    assert.equal(s.method, "clustered");
    assert.equal(s.trialPassRate, 0.5);
    assert.deepEqual(round4(s.passRateInterval), [0.0945, 0.9055]);
    const summary = new SuiteResult(cases, { repeat: 4 }).toJSON().summary;
    assert.equal(summary.pass_rate_method, "clustered");
    assert.deepEqual(summary.pass_rate_ci, [s.passRateInterval[0], s.passRateInterval[1]]);
    // The same 8 trials counted as independent would give Wilson 4/8: [0.2152, 0.7848], far too narrow.
    assert.ok(summary.pass_rate_ci[0] < 0.2152 && summary.pass_rate_ci[1] > 0.7848);
  });

  test("an empty run: rate 0, interval [0, 1]; a confidence outside (0, 1) is refused", () => {
    const s = runStatistics([]);
    assert.deepEqual([s.trialPassRate, ...s.passRateInterval], [0, 0, 1]);
    assert.throws(() => runStatistics(singles(1, 1), 1), RangeError);
  });
});

describe("per case: pass_rate_ci and the pass rule", () => {
  test("a repeated case gets Wilson's interval of its trials; a single one gets none", () => {
    const c = repeated("a", [true, false, true, true]);
    assert.deepEqual(caseTrials(c), { passed: 3, trials: 4 });
    // Wilson 3/4 at 95%: [0.3006, 0.9544].
    assert.deepEqual(round4(casePassRateInterval(c)!), [0.3006, 0.9544]);
    const json = new SuiteResult([c, result("b", true)], { repeat: 4 }).toJSON().cases;
    assert.deepEqual(round4(json[0]!.pass_rate_ci!), [0.3006, 0.9544]);
    assert.equal(json[0]!.case_pass_rate, 1);
    assert.equal(json[1]!.pass_rate_ci, null);
    assert.equal(json[1]!.case_pass_rate, null);
  });

  test("the default rule (1) is every trial; a rule R passes a case whose pass rate is at least R", () => {
    const c = repeated("a", [true, true, true, true, false]);
    assert.equal(c.passed, false);
    c.casePassRate = 0.8;
    assert.equal(c.passed, true, "4 of 5 meets 0.8 despite float rounding");
    c.casePassRate = 0.81;
    assert.equal(c.passed, false);
    assert.equal(meetsCasePassRate([], 0), false, "no trial never passes");
    assert.equal(meetsCasePassRate([{ passed: false }], 0), true);
    assert.equal(casePassRateOf(0.5, 0.9), 0.5);
    assert.equal(casePassRateOf(null, 0.9), 0.9);
  });

  test("the rule round-trips through the result data and shows in the JSON", () => {
    const c = repeated("a", [true, false, true, true]);
    c.casePassRate = 0.7;
    const back = CaseResult.fromData(JSON.parse(JSON.stringify(c.toData())));
    assert.equal(back.passed, true);
    const summary = new SuiteResult([back], { repeat: 4, casePassRate: 0.7 }).toJSON();
    assert.equal(summary.summary.case_pass_rate, 0.7);
    assert.equal(summary.cases[0]!.case_pass_rate, 0.7);
    assert.equal(summary.summary.passed, 1);
  });
});

describe("pass^k beside pass@k", () => {
  test("the unbiased estimator C(c, k) / C(n, k), averaged over cases, up to the fewest trials", () => {
    // a: 3 of 4 -> pass^1 0.75, pass^2 C(3,2)/C(4,2) = 0.5, pass^3 0.25, pass^4 0; b: 4 of 4 -> 1 for every k.
    const cases = [repeated("a", [true, false, true, true]), repeated("b", [true, true, true, true])];
    const json = new SuiteResult(cases, { repeat: 4 }).toJSON().summary;
    assert.deepEqual(json.pass_hat_k, { "1": 0.875, "2": 0.75, "3": 0.625, "4": 0.5 });
    // pass@k never falls below pass^k: at least one passes vs all pass.
    for (const k of ["1", "2", "3", "4"] as const) assert.ok(json.pass_at_k![k]! >= json.pass_hat_k![k]!);
    assert.equal(new SuiteResult(singles(2, 1)).toJSON().summary.pass_hat_k, null);
  });
});

describe("mean scores with intervals", () => {
  test("the numeric judge's score: Student t over cases, clipped to [1, 10]", () => {
    // 7, 8, 9: mean 8, s 1, t(0.975, 2) = 4.3027: 8 +- 2.4841 -> [5.5159, 10] after the clip.
    const cases = [7, 8, 9].map((v, i) => result(`c${i}`, true, { judgeScore: v }));
    const s = runStatistics(cases);
    assert.equal(s.judgeScore!.mean, 8);
    assert.deepEqual(round4(s.judgeScore!.interval), [5.5159, 10]);
    assert.equal(s.scoreValue, null);
    const summary = new SuiteResult(cases).toJSON().summary;
    assert.equal(summary.judge_score_mean, 8);
    assert.deepEqual(round4(summary.judge_score_ci!), [5.5159, 10]);
  });

  test("scorer values with repeats: each case counts once, by its trials' mean", () => {
    // Case a's trials 0.2 and 0.4 (mean 0.3), case b's 0.9 once per trial (mean 0.9): mean 0.6,
    // s = 0.4243, se 0.3, t(0.975, 1) = 12.7062: the interval is the whole [0, 1].
    const a = repeated("a", [true, true], (i) => ({ score: { value: [0.2, 0.4][i]!, passed: true } }));
    const b = repeated("b", [true, true], () => ({ score: { value: 0.9, passed: true } }));
    const s = runStatistics([a, b]);
    assert.equal(Number(s.scoreValue!.mean.toFixed(10)), 0.6);
    assert.equal(s.scoreValue!.cases, 2);
    assert.deepEqual(s.scoreValue!.interval, [0, 1]);
    // Six cases at 0.5, 0.6, 0.7, 0.5, 0.6, 0.7: mean 0.6, s 0.0894, t(0.975, 5) = 2.5706: [0.5061, 0.6939].
    const six = [0.5, 0.6, 0.7, 0.5, 0.6, 0.7].map((v, i) => result(`s${i}`, true, { score: { value: v, passed: true } }));
    assert.deepEqual(round4(runStatistics(six).scoreValue!.interval), [0.5061, 0.6939]);
  });
});
