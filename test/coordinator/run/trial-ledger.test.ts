// TrialLedger (coordinator/run/trial-ledger.ts): trials of a distributed run's cases arrive in any
// order, any number of times; each case is folded once, its trials in trial order.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult } from "../../../shared/result/result.ts";
import { seededRandom } from "../../../shared/seeded-random.ts";
import { TrialLedger, deliveryKey } from "../../../coordinator/run/trial-ledger.ts";
import { mkCase } from "../../support/cases.ts";

const selected = ["a", "b", "c"].map((name, index) => ({ index, case: mkCase(name) }));
const trialResult = (index: number, passed: boolean, worker = "w/1"): CaseResult =>
  new CaseResult({ name: selected[index]!.case.name, index, judgePassed: passed, worker, output: `${passed}` });

describe("TrialLedger", () => {
  test("one trial per case: the trial's result is the case's, as it is", () => {
    const ledger = new TrialLedger(selected, 1);
    const r = trialResult(1, true);
    const out = ledger.record(1, r);
    assert.equal(out.kind, "accepted");
    assert.equal(out.kind === "accepted" && out.folded, r);
    assert.equal(ledger.isFolded(1), true);
    assert.deepEqual(ledger.missing().map((d) => deliveryKey(d.index, d.trial)), ["0:1", "2:1"]);
  });

  test("a case folds when its last trial arrives, in trial order whatever the arrival order", () => {
    const ledger = new TrialLedger(selected, 3);
    assert.deepEqual(ledger.record(3, trialResult(0, true, "w/3")), { kind: "accepted", folded: null });
    assert.deepEqual(ledger.record(1, trialResult(0, false, "w/1")), { kind: "accepted", folded: null });
    const out = ledger.record(2, trialResult(0, true, "w/2"));
    assert.ok(out.kind === "accepted" && out.folded);
    const folded = out.folded!;
    assert.deepEqual(folded.repeats!.map((r) => [r.repeat, r.worker, r.passed]), [[1, "w/1", false], [2, "w/2", true], [3, "w/3", true]]);
    assert.equal(folded.passed, false, "trial 1 failed: the case fails under the every-trial rule");
  });

  test("duplicates, unknown trials and other cases' names are refused", () => {
    const ledger = new TrialLedger(selected, 2);
    assert.equal(ledger.record(1, trialResult(0, true)).kind, "accepted");
    assert.equal(ledger.record(1, trialResult(0, false)).kind, "duplicate");
    assert.equal(ledger.record(3, trialResult(0, true)).kind, "unknown", "trial 3 is not planned");
    assert.equal(ledger.record(0, trialResult(0, true)).kind, "unknown");
    const misnamed = new CaseResult({ name: "b", index: 0 });
    assert.equal(ledger.record(2, misnamed).kind, "unknown");
    assert.equal(ledger.record(1, new CaseResult({ name: "z", index: 9 })).kind, "unknown");
  });

  test("fold: false leaves the case open; extend plans the next trials; a folded case takes no more", () => {
    const ledger = new TrialLedger(selected, 1);
    assert.deepEqual(ledger.record(1, trialResult(2, true), () => false), { kind: "accepted", folded: null });
    assert.deepEqual(ledger.extend(2, 2), [{ index: 2, trial: 2 }, { index: 2, trial: 3 }]);
    assert.equal(ledger.planned(2), 3);
    ledger.record(2, trialResult(2, true));
    const out = ledger.record(3, trialResult(2, false));
    assert.ok(out.kind === "accepted" && out.folded && out.folded.repeats!.length === 3);
    assert.throws(() => ledger.extend(2, 1), /folded already/);
    assert.throws(() => ledger.extend(1, 0), /more must be an integer >= 1/);
  });

  test("foldPartial fills the trials that never ran", () => {
    const ledger = new TrialLedger(selected, 3);
    ledger.record(2, trialResult(1, true));
    const folded = ledger.foldPartial(1, (trial) => Object.assign(new CaseResult({ name: "b", index: 1, skipped: true }), { error: `skipped trial ${trial}` }));
    assert.deepEqual(folded.repeats!.map((r) => [r.repeat, r.skipped]), [[1, true], [2, false], [3, true]]);
    assert.equal(ledger.isFolded(1), true);
    assert.equal(ledger.record(1, trialResult(1, true)).kind, "duplicate");
  });

  test("property: any arrival order with duplicates folds every case exactly once, trials in order", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rnd = seededRandom(seed);
      const trials = 1 + Math.floor(rnd() * 6);
      const ledger = new TrialLedger(selected, trials);
      const arrivals: Array<{ index: number; trial: number; passed: boolean }> = [];
      const truth = new Map<string, boolean>();
      for (const s of selected) for (let t = 1; t <= trials; t++) truth.set(deliveryKey(s.index, t), rnd() < 0.7);
      for (const [key, passed] of truth) {
        const [index, trial] = key.split(":").map(Number) as [number, number];
        const copies = 1 + Math.floor(rnd() * 3);
        for (let k = 0; k < copies; k++) arrivals.push({ index, trial, passed: k === 0 ? passed : !passed });
      }
      // Shuffle, keeping each trial's first copy first (the ledger keeps the first it sees).
      const order = arrivals.map((a, i) => ({ a, i, r: rnd() })).sort((x, y) => x.r - y.r);
      const seen = new Set<string>();
      const folded: CaseResult[] = [];
      for (const { a } of order) {
        const key = deliveryKey(a.index, a.trial);
        const first = !seen.has(key);
        seen.add(key);
        const out = ledger.record(a.trial, trialResult(a.index, first ? truth.get(key)! : !truth.get(key)!));
        assert.equal(out.kind, first ? "accepted" : "duplicate", `seed ${seed}`);
        if (out.kind === "accepted" && out.folded) folded.push(out.folded);
      }
      assert.deepEqual(folded.map((r) => r.index).sort(), [0, 1, 2], `seed ${seed}: every case folded once`);
      for (const r of folded) {
        const expected = Array.from({ length: trials }, (_, t) => truth.get(deliveryKey(r.index, t + 1))!);
        const got = trials === 1 ? [r.passed] : r.repeats!.map((x) => x.passed);
        assert.deepEqual(got, expected, `seed ${seed}: case ${r.index}'s trials in trial order, first copies kept`);
      }
      assert.deepEqual(ledger.missing(), []);
    }
  });
});
