// A SuiteResult over a ResultSource (shared/result/result-source.ts): a source that reads copies
// (a distributed run's spool) is walked once for every figure of the run, whatever is read and how
// often; its results are held only once `results` is read, and from then on the figures follow
// changes made to them; redacting it walks it without holding it; the figures are those of the same
// results held in memory; `release()` closes the source and keeps the figures.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import type { ResultSource } from "../../../shared/result/result-source.ts";
import { redactSuite, registerSecret } from "../../../shared/redaction/secrets.ts";
import { exitCodeFor } from "../../../coordinator/run/exit-code.ts";

/** Results of a small run: passed, failed, errored (infra), skipped, repeated. */
function results(): CaseResult[] {
  return [
    new CaseResult({ name: "a", index: 0, judgePassed: true, judgeScore: 8, usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.001 }, modelCache: { hits: 1, misses: 2 } }),
    new CaseResult({ name: "b", index: 1, judgePassed: false, judgeScore: 2, score: { value: 0.4, passed: false, reason: "low" } }),
    new CaseResult({ name: "c", index: 2, error: "worker: lost", errorKind: "infra" }),
    new CaseResult({ name: "d", index: 3, skipped: true, error: "skipped: run cancelled (test)" }),
  ];
}

/** A source that builds fresh copies of `results()` at each walk, counting the walks; closed once. */
function copies(): ResultSource<CaseResult> & { walks: number; closed: number } {
  const src = {
    walks: 0,
    closed: 0,
    size: 4,
    readsCopies: true,
    *[Symbol.iterator]() {
      src.walks++;
      for (const r of results()) yield CaseResult.fromData(r.toData());
    },
    close() {
      src.closed++;
    },
  };
  return src;
}

const meta = { runId: "r", durationSeconds: 2, passThreshold: 0.5, repeat: 1 } as const;

describe("SuiteResult over a ResultSource", () => {
  test("every figure from one walk of a source that reads copies, equal to the same results in memory", () => {
    const src = copies();
    const spooled = new SuiteResult(src, meta);
    const memory = new SuiteResult(results(), meta);
    assert.equal(spooled.spooled, true);
    assert.equal(memory.spooled, false);
    const figures = (s: SuiteResult) => [s.total, s.passed, s.failed, s.skipped, s.infraErrors, s.onlyInfraFailures, s.status, s.passRate, s.thresholdMet, s.passAtK, s.usage, s.modelCache, s.adaptiveRepeats, s.statistics, exitCodeFor(s), s.summaryJSON()];
    assert.deepEqual(figures(spooled), figures(memory));
    figures(spooled);
    assert.equal(src.walks, 1, "one walk for every figure, read twice");
    assert.deepEqual([...spooled.casesJSON()], memory.toJSON().cases);
    assert.equal(src.walks, 2, "the cases' entries are one more walk");
    assert.deepEqual(spooled.toJSON(), memory.toJSON());
  });

  test("results read back once and held: the figures then follow changes to them", () => {
    const src = copies();
    const s = new SuiteResult(src, meta);
    assert.equal(s.passed, 1);
    const held = s.results;
    assert.equal(s.results, held, "held from the first read");
    assert.equal(s.spooled, false);
    const walks = src.walks;
    held[1]!.judgePassed = true;
    held[1]!.score = null;
    assert.equal(s.passed, 2, "a change to a held result counts");
    assert.equal(src.walks, walks, "nothing read back again");
    assert.equal([...s.cases()][1], held[1], "cases() walks what is held");
  });

  test("a copy of an in-memory source is not taken for a spool; release() closes a source and keeps its figures", () => {
    const src = copies();
    const s = new SuiteResult(src, meta);
    s.release();
    assert.equal(src.closed, 1);
    const walks = src.walks;
    assert.equal(s.passed, 1);
    assert.equal(s.statistics.trialPassRate, 0.25);
    assert.equal(src.walks, walks, "computed before the close, kept");
    new SuiteResult(results(), meta).release();
  });

  test("redacting a spooled run walks it: nothing held, each result redacted as it is read", () => {
    const key = "source-key-Q7f2LmX9vT4wZ1bN8c";
    registerSecret(key);
    const base = copies();
    const leaky: ResultSource<CaseResult> = {
      size: 1,
      readsCopies: true,
      *[Symbol.iterator]() {
        base.walks++;
        yield new CaseResult({ name: "leaky", index: 0, output: `the key ${key}`, judgePassed: true });
      },
    };
    const s = new SuiteResult(leaky, meta);
    const clean = redactSuite(s);
    assert.equal(clean.spooled, true);
    assert.equal(s.spooled, true, "the run's results are not held by redacting it");
    const [r] = [...clean.cases()];
    assert.equal(r!.output, "the key [REDACTED]");
    assert.equal(clean.passed, 1);
  });
});
