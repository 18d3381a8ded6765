// The significance-aware compare and gate (coordinator/history/significance.ts), on scripted runs.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { compareSignificance, pairCases, pairingKey, significanceJson, type PairedCase } from "../../../coordinator/history/significance.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";

/** A case with `passed` of `trials` in A and in B. */
function trials(name: string, a: [number, number], b: [number, number], extra: Partial<PairedCase> = {}): PairedCase {
  return { key: `name:${name}`, name, a: { passed: a[0], failed: a[1] - a[0] }, b: { passed: b[0], failed: b[1] - b[0] }, ...extra };
}

/** Single-trial cases: outcome strings of A and B, one letter per case (P passed, F failed). */
function singles(a: string, b: string): PairedCase[] {
  return [...a].map((x, i) => trials(`case_${i}`, [x === "P" ? 1 : 0, 1], [b[i] === "P" ? 1 : 0, 1]));
}

function run(failing: Set<number>, n: number): string {
  return Array.from({ length: n }, (_, i) => (failing.has(i) ? "F" : "P")).join("");
}

describe("the verdicts the issue asks for", () => {
  test("10 of 200 failed last night, a different 10 tonight: the same rate, no significant change", () => {
    const lastNight = new Set(Array.from({ length: 10 }, (_, i) => i));
    const tonight = new Set(Array.from({ length: 10 }, (_, i) => 100 + i));
    const r = compareSignificance(singles(run(lastNight, 200), run(tonight, 200)));
    assert.equal(r.verdict, "no significant change");
    assert.equal(r.passRate.method, "mcnemar exact");
    assert.equal(r.passRate.pValue, 1);
    assert.equal(r.passRate.difference, 0);
    assert.equal(r.counts["changed, not significant"], 20);
    assert.equal(r.counts.regressed, 0);
    // The interval says how big a change the data cannot rule out.
    assert.ok(r.passRate.differenceCi[0] < 0 && r.passRate.differenceCi[1] > 0);
  });

  test("a swapped handful of flips is noise", () => {
    const r = compareSignificance(singles(run(new Set([1, 5, 9]), 50), run(new Set([20, 30]), 50)));
    assert.equal(r.verdict, "no significant change");
    assert.ok(r.passRate.pValue > 0.5);
  });

  test("20 new failures of 200 is a regression (exact McNemar: p = 2 / 2^20)", () => {
    const r = compareSignificance(singles(run(new Set(), 200), run(new Set(Array.from({ length: 20 }, (_, i) => i * 10)), 200)));
    assert.equal(r.verdict, "regressed");
    assert.ok(Math.abs(r.passRate.pValue - 2 / 2 ** 20) < 1e-18);
    assert.equal(r.passRate.difference, -0.1);
    assert.ok(r.passRate.differenceCi[1] < 0);
    // One flip a case cannot be significant on its own: the run level carries it.
    assert.equal(r.counts.regressed, 0);
    assert.equal(r.counts["changed, not significant"], 20);
  });

  test("one case from 10/10 to 0/10 trials is a regression, in a suite of 10 cases as of 2,000", () => {
    for (const size of [10, 2000]) {
      const cases = Array.from({ length: size }, (_, i) => trials(`c${i}`, [10, 10], i === 3 ? [0, 10] : [10, 10]));
      const r = compareSignificance(cases);
      assert.equal(r.verdict, "regressed", `${size} cases`);
      assert.equal(r.cases[3]!.verdict, "regressed");
      assert.equal(r.counts.regressed, 1);
      assert.equal(r.perCase.divisor, 1, "the cases that cannot be significant cost nothing");
      // The run level alone does not see one case in many.
      assert.equal(r.passRate.significant, false);
    }
  });
});

describe("what is left out, and what is reported without failing", () => {
  test("infrastructure errors are left out and counted; a case with no trial left is not compared", () => {
    const cases = [
      trials("ok", [3, 3], [3, 3]),
      { ...trials("flaky_infra", [2, 2], [1, 1]), b: { passed: 1, failed: 0, infra: 2 } },
      { key: "name:down", name: "down", a: { passed: 3, failed: 0 }, b: { passed: 0, failed: 0, infra: 3 } },
      { key: "name:skipped", name: "skipped", a: { passed: 3, failed: 0 }, b: { passed: 0, failed: 0 } },
    ];
    const r = compareSignificance(cases);
    assert.equal(r.cases[1]!.verdict, "unchanged");
    assert.deepEqual(r.cases[1]!.b, { passed: 1, trials: 1 });
    assert.equal(r.cases[2]!.verdict, "infra error: not compared");
    assert.equal(r.cases[2]!.pValue, null);
    assert.equal(r.cases[3]!.verdict, "not run: not compared");
    assert.equal(r.counts["infra error: not compared"], 1);
    assert.equal(r.counts.infraTrials, 5);
    assert.equal(r.passRate.cases, 2);
  });

  test("a case whose checks changed is listed, not compared; an unknown fingerprint is compared", () => {
    const r = compareSignificance([
      trials("new_criteria", [10, 10], [0, 10], { checksA: "sha-1", checksB: "sha-2" }),
      trials("old_run", [10, 10], [0, 10], { checksA: null, checksB: "sha-2" }),
    ]);
    assert.equal(r.cases[0]!.verdict, "checks changed: not compared");
    assert.equal(r.cases[1]!.verdict, "regressed");
    assert.equal(r.counts["checks changed: not compared"], 1);
  });

  test("a known-flaky (quarantined) case is reported as it is, but does not fail the gate or move the run level", () => {
    const cases = [trials("quarantined", [10, 10], [0, 10], { quarantined: true }), ...Array.from({ length: 20 }, (_, i) => trials(`c${i}`, [10, 10], [10, 10]))];
    const r = compareSignificance(cases);
    assert.equal(r.cases[0]!.verdict, "regressed");
    assert.equal(r.cases[0]!.quarantined, true);
    assert.equal(r.counts.quarantined, 1);
    assert.equal(r.verdict, "no significant change");
    assert.equal(r.passRate.cases, 20);
    assert.equal(r.passRate.difference, 0);
  });
});

describe("repeats, history and scores", () => {
  test("many cases each a little worse: the run level catches what no case shows alone", () => {
    const cases = Array.from({ length: 100 }, (_, i) => trials(`c${i}`, [10, 10], i < 60 ? [9, 10] : [10, 10]));
    const r = compareSignificance(cases);
    assert.equal(r.verdict, "regressed");
    assert.equal(r.passRate.method, "paired t");
    assert.ok(Math.abs(r.passRate.difference - -0.06) < 1e-12);
    assert.ok(r.passRate.differenceCi[1] < 0);
    assert.equal(r.counts.regressed, 0);
  });

  test("a few cases better on the run level with an exact sign-flip p-value; improved", () => {
    const cases = Array.from({ length: 30 }, (_, i) => trials(`c${i}`, [5, 10], i < 8 ? [10, 10] : [5, 10]));
    const r = compareSignificance(cases);
    assert.equal(r.passRate.method, "sign-flip exact");
    assert.ok(Math.abs(r.passRate.pValue - 2 / 2 ** 8) < 1e-15);
    assert.equal(r.verdict, "improved");
  });

  test("history pooled with A makes a case significant that three trials a side could not", () => {
    const without = compareSignificance([trials("c", [3, 3], [0, 3])]);
    assert.equal(without.cases[0]!.verdict, "changed, not significant");
    assert.ok(Math.abs(without.cases[0]!.pValue! - 0.1) < 1e-12);
    const withHistory = compareSignificance([trials("c", [3, 3], [0, 3], { history: { passed: 20, failed: 0 } })]);
    assert.equal(withHistory.cases[0]!.verdict, "regressed");
    assert.deepEqual(withHistory.cases[0]!.baseline, { passed: 23, trials: 23 });
    // History that disagrees with A (the case got better yesterday) never turns a rise into a regression.
    const disagreeing = compareSignificance([trials("c", [0, 10], [5, 10], { history: { passed: 30, failed: 0 } })]);
    assert.equal(disagreeing.cases[0]!.verdict, "changed, not significant");
    assert.equal(disagreeing.verdict, "no significant change");
  });

  test("mean scores get their own paired test, reported beside the pass rate and not moving the verdict", () => {
    const cases = Array.from({ length: 40 }, (_, i) => trials(`c${i}`, [1, 1], [1, 1], { scoreA: 8 + (i % 3) * 0.5, scoreB: 7 + (i % 3) * 0.5 }));
    const r = compareSignificance(cases);
    assert.equal(r.verdict, "no significant change");
    assert.ok(r.score);
    assert.equal(r.score.cases, 40);
    assert.ok(Math.abs(r.score.difference - -1) < 1e-12);
    assert.equal(r.score.significant, true);
    assert.equal(compareSignificance([trials("c", [1, 1], [1, 1])]).score, null);
  });
});

describe("the false-alarm rate", () => {
  test("two runs of the same agent are gated as regressions at most alpha of the time (seeded simulation)", () => {
    const random = seededRandom(5);
    const rates = Array.from({ length: 150 }, () => (random() < 0.8 ? 0.97 + random() * 0.03 : 0.3 + random() * 0.6));
    const draw = (p: number, n: number): number => {
      let passed = 0;
      for (let t = 0; t < n; t++) if (random() < p) passed++;
      return passed;
    };
    let alarms = 0;
    let rawFlipAlarms = 0;
    const pairs = 300;
    for (let k = 0; k < pairs; k++) {
      const cases = rates.map((p, i) => trials(`c${i}`, [draw(p, 5), 5], [draw(p, 5), 5]));
      if (compareSignificance(cases).verdict === "regressed") alarms++;
      // Today's rule: any case that passed every trial in A and not in B fails the run.
      if (cases.some((c) => c.a.failed === 0 && c.b.failed > 0)) rawFlipAlarms++;
    }
    // At most 0.05, give or take three standard errors of 300 draws (0.038).
    assert.ok(alarms / pairs <= 0.05 + 0.038, `false alarms ${alarms / pairs}`);
    assert.ok(rawFlipAlarms / pairs > 0.9, `today's rule cries wolf: ${rawFlipAlarms / pairs}`);
  });
});

describe("pairing, JSON and bad input", () => {
  test("cases pair by dataset id, else name, in B's order; the rest is listed", () => {
    const a = [{ name: "x" }, { name: "row", caseId: "r1" }, { name: "gone" }];
    const b = [{ name: "renamed row", caseId: "r1" }, { name: "x" }, { name: "new" }];
    const paired = pairCases(a, b, pairingKey);
    assert.deepEqual(
      paired.pairs.map((p) => [p.key, p.a.name, p.b.name]),
      [
        ["id:r1", "row", "renamed row"],
        ["name:x", "x", "x"],
      ],
    );
    assert.deepEqual(paired.onlyInA, [{ name: "gone" }]);
    assert.deepEqual(paired.onlyInB, [{ name: "new" }]);
    // A name that looks like an id is still a name.
    assert.notEqual(pairingKey({ name: "r1" }), pairingKey({ name: "x", caseId: "r1" }));
  });

  test("compare --json's keys: verdict, p_value, difference, difference_ci, per-case verdicts", () => {
    const json = significanceJson(compareSignificance([trials("a", [10, 10], [0, 10]), trials("b", [10, 10], [10, 10])]));
    assert.equal(json.verdict, "regressed");
    assert.equal(typeof json.p_value, "number");
    assert.equal(json.difference, -0.5);
    assert.equal(json.difference_ci.length, 2);
    assert.deepEqual(
      json.cases.map((c) => [c.name, c.verdict]),
      [["a", "regressed"]],
    );
    assert.equal(json.counts.unchanged, 1);
    assert.deepEqual(JSON.parse(JSON.stringify(json)).per_case, { alpha: 0.025, correction: "tarone-holm", compared: 2, divisor: 1 });
  });

  test("bad counts and levels name the case, the field and the value; an empty comparison is no change", () => {
    assert.throws(() => compareSignificance([trials("broken", [1, 1], [1, 1], { b: { passed: -1, failed: 0 } })]), /broken.b.passed must be an integer >= 0, got -1/);
    assert.throws(() => compareSignificance([], { alpha: 0 }), /alpha must be between 0 and 1 \(exclusive\), got 0/);
    assert.throws(() => compareSignificance([], { confidence: 1.5 }), /confidence must be between 0 and 1 \(exclusive\), got 1.5/);
    const empty = compareSignificance([]);
    assert.equal(empty.verdict, "no significant change");
    assert.equal(empty.passRate.pValue, 1);
  });
});
