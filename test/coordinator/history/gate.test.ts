// The gate's pure parts: a case's trials from its report (coordinator/history/case-trials.ts),
// pairing two runs with history and fingerprints (paired-runs.ts), the decision with quarantine
// (gate.ts), and the fingerprint of a case's checks (recording/checks-fingerprint.ts).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Case } from "../../../index.ts";
import { trialCase, trialsOfReport, type TrialCase, type TrialReport } from "../../../coordinator/history/case-trials.ts";
import { pairRuns } from "../../../coordinator/history/paired-runs.ts";
import { decideGate } from "../../../coordinator/history/gate.ts";
import { checksFingerprint } from "../../../coordinator/history/recording/checks-fingerprint.ts";
import type { CaseRecord } from "../../../coordinator/history/store/case-record.ts";
import { StubAgent } from "../../support/doubles.ts";

/** A report entry of `outcomes` trials: P passed, F failed (a check), I infra error, S skipped; one letter is a run without repeats. */
function report(outcomes: string, score: number | null = null): TrialReport {
  const one = (o: string) => ({ passed: o === "P", skipped: o === "S", error_kind: o === "I" ? ("infra" as const) : o === "F" ? ("check" as const) : null, judge_score: score, score_value: null });
  const runs = [...outcomes].map(one);
  return { ...runs.find((r) => !r.passed) ?? runs[0]!, passed: runs.every((r) => r.passed), repeats: outcomes.length > 1 ? runs : null };
}
const tc = (name: string, outcomes: string, checks: string | null = "k", caseId: string | null = null): TrialCase => trialCase(name, caseId, report(outcomes), checks);
/** A recorded case (what the gate reads of the baseline and its history). */
function record(name: string, outcomes: string, checks: string | null = "k"): CaseRecord {
  const r = report(outcomes);
  return { name, passed: r.passed, skipped: r.skipped, judgeScore: null, scoreValue: null, durationSeconds: 0.1, report: r, checksFingerprint: checks, caseId: null } as unknown as CaseRecord;
}

describe("a case's trials", () => {
  test("each repeat counts; infrastructure errors apart; skipped trials not at all", () => {
    assert.deepEqual(trialsOfReport(report("PPFIS")), { passed: 2, failed: 1, infra: 1 });
    assert.deepEqual(trialsOfReport(report("P")), { passed: 1, failed: 0, infra: 0 });
    assert.deepEqual(trialsOfReport(report("I")), { passed: 0, failed: 0, infra: 1 });
    assert.deepEqual(trialsOfReport(report("S")), { passed: 0, failed: 0, infra: 0 });
    assert.equal(trialCase("x", null, report("PP", 7), null).score, 7);
  });
});

describe("pairing two runs", () => {
  test("by dataset id, else by name; history with the same checks joins; quarantine by name", () => {
    const a = [tc("renamed_before", "P", "k", "row-1"), tc("same", "P"), tc("gone", "P")];
    const b = [tc("same", "F"), tc("renamed_after", "F", "k", "row-1"), tc("new", "P")];
    const history = [[tc("same", "P"), tc("renamed_before", "F", "k", "row-1")], [tc("same", "F", "old-checks")]];
    const paired = pairRuns({ a, b, history, quarantined: new Set(["same"]) });
    assert.deepEqual(paired.cases.map((c) => [c.key, c.name]), [["name:same", "same"], ["id:row-1", "renamed_after"]]);
    assert.deepEqual(paired.onlyInA, ["gone"]);
    assert.deepEqual(paired.onlyInB, ["new"]);
    // `same`: the run graded by other checks is left out of its history.
    assert.deepEqual(paired.cases[0]!.history, { passed: 1, failed: 0 });
    assert.equal(paired.cases[0]!.quarantined, true);
    assert.deepEqual(paired.cases[1]!.history, { passed: 0, failed: 1 });
    assert.equal(paired.cases[1]!.quarantined, false);
  });
});

describe("the gate's decision", () => {
  const suite = (n: number, failing: Set<number>, trials = "P") => Array.from({ length: n }, (_, i) => (failing.has(i) ? trials.replace(/P/g, "F") : trials));
  const base = { alpha: 0.05, confidence: 0.95, quarantineFlaky: false, history: [] as CaseRecord[][] };

  test("a swapped handful is noise; twenty new failures of 200 are not", () => {
    const range = (from: number, to: number) => new Set(Array.from({ length: to - from }, (_, i) => from + i));
    const baseline = suite(200, range(0, 10)).map((o, i) => record(`c${i}`, o));
    const swapped = suite(200, range(10, 20)).map((o, i) => tc(`c${i}`, o));
    const noise = decideGate({ ...base, baseline, current: swapped });
    assert.equal(noise.failed, false);
    assert.equal(noise.result.verdict, "no significant change");
    const dropped = decideGate({ ...base, baseline, current: suite(200, range(0, 30)).map((o, i) => tc(`c${i}`, o)) });
    assert.equal(dropped.failed, true);
    assert.equal(dropped.result.passRate.significant, true);
  });

  test("a known-flaky case is reported, not failed on, with --quarantine-flaky; infra errors are left out and counted", () => {
    // `coin` passed half its trials in the baseline and the run before: flaky. Tonight it fails all ten.
    const baseline = [record("coin", "PFPFPFPFPF"), record("solid", "PPPPPPPPPP"), record("down", "PPPPPPPPPP")];
    const history = [[record("coin", "FPFPFPFPFP"), record("solid", "PPPPPPPPPP"), record("down", "PPPPPPPPPP")]];
    const current = [tc("coin", "FFFFFFFFFF"), tc("solid", "PPPPPPPPPP"), tc("down", "IIIIIIIIII")];
    const gated = decideGate({ ...base, baseline, history, current });
    assert.equal(gated.failed, true, "without quarantine, 10/20 -> 0/10 is a regression");
    assert.equal(gated.result.cases.find((c) => c.name === "coin")!.verdict, "regressed");
    const quarantined = decideGate({ ...base, baseline, history, current, quarantineFlaky: true });
    assert.deepEqual(quarantined.quarantined, ["coin"]);
    assert.equal(quarantined.failed, false);
    const coin = quarantined.result.cases.find((c) => c.name === "coin")!;
    assert.deepEqual([coin.quarantined, coin.verdict], [true, "regressed"], "still reported for what it is");
    assert.equal(quarantined.result.counts["infra error: not compared"], 1);
    assert.equal(quarantined.result.counts.infraTrials, 10);
  });
});

describe("the fingerprint of a case's checks", () => {
  const agent = new StubAgent();
  const scorer = { id: "exact", score: (run: { content?: unknown }, expected: unknown) => ({ value: run.content === expected ? 1 : 0, passed: run.content === expected }) };
  const make = (over: Record<string, unknown> = {}) => new Case({ name: "c", agent, input: "hi", criteria: "is polite", scorer, expected: "hello", ...over } as never);

  test("changes with what grades the case, not with what it runs", () => {
    const same = checksFingerprint(make());
    assert.match(same, /^[0-9a-f]{16}$/);
    assert.equal(checksFingerprint(make()), same, "stable");
    assert.equal(checksFingerprint(make({ input: "another input", tags: ["x"], timeoutSeconds: 5 })), same, "input, tags and timeouts do not grade");
    for (const [what, over] of [
      ["criteria", { criteria: "is rude" }],
      ["expected value", { expected: "bye" }],
      ["scorer", { scorer: { id: "other", score: scorer.score } }],
      ["tool expectations", { expectedToolCalls: ["lookup"] }],
      ["judge threshold", { judgeMode: "numeric", judgeThreshold: 9 }],
    ] as const) {
      assert.notEqual(checksFingerprint(make(over)), same, `${what} changes it`);
    }
    assert.notEqual(checksFingerprint(make(), "judge-a"), checksFingerprint(make(), "judge-b"), "the run's judge model grades a case that names none");
  });
});
