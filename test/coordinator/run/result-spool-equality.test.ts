// A distributed run's results spooled to a file (coordinator/run/result-spool.ts) report exactly
// what the same results held in memory report: two collectors are fed the same result messages and
// trial results, one with the spool and one without, and the JSON report (written a case at a time,
// and whole), the JUnit XML, the console summary, the exit code and the results store's rows are
// compared byte for byte. The runs hold passed, failed, errored, timed-out, infra, hook-failed,
// cancelled-before-start (restated), never-run (skipped at the end), repeated, partly-run and
// adaptive cases, a secret to redact, a transcript the recorder lets go of, and non-ASCII text.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../../shared/logger.ts";
import { resultSubject } from "../../../shared/broker/subjects.ts";
import { NATS_PROTOCOL, type ResultMessage } from "../../../shared/wire/nats.ts";
import { RunTokens, newRunKey } from "../../../shared/wire/case-token.ts";
import { CANCELLED_BEFORE_START_ERROR, restateCancelledBeforeStart, resultShell } from "../../../shared/result/result-shell.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";
import { selectCases, type SelectedCase } from "../../../coordinator/run/select.ts";
import { RunCollector, type RunCollectorOptions } from "../../../coordinator/distributed/collect.ts";
import { CaseResult, SuiteResult, type SuiteResultMeta } from "../../../shared/result/result.ts";
import { jsonReportText } from "../../../coordinator/report/files.ts";
import { jsonReportChunks, writeJsonReport } from "../../../coordinator/report/json-report.ts";
import { toJUnitXml } from "../../../coordinator/report/junit.ts";
import { printSummary } from "../../../coordinator/report/console.ts";
import { exitCodeFor } from "../../../coordinator/run/exit-code.ts";
import { caseRow } from "../../../coordinator/history/store/case-row.ts";
import { redactResult, registerSecret } from "../../../shared/redaction/secrets.ts";
import { privateTempDir } from "../../../shared/runtime/user-temp-dir.ts";
import { ResultSpool } from "../../../coordinator/run/result-spool.ts";
import type { Case } from "../../../shared/case/case.ts";
import { mkCase } from "../../support/cases.ts";
import { TRANSCRIPT_VERSION } from "../../../shared/wire/transcript.ts";
import { MemoryStream } from "../../support/doubles.ts";

const SECRET = "spool-key-Q7f2LmX9vT4wZ1bN8c";
const runId = "run-spool";
const tokens = new RunTokens(newRunKey(), runId);
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
const timestamp = new Date("2026-01-02T03:04:05Z");

before(() => registerSecret(SECRET));

type Drive = (c: RunCollector, cases: readonly Case[]) => void;

/** A collector over `cases`, with the hooks a CLI run has: the recorder lets go of each transcript; one case's hook fails. */
function collector(cases: readonly Case[], spool: boolean, extra: Partial<RunCollectorOptions> = {}): RunCollector {
  return new RunCollector({
    runId,
    selected: selectCases(cases, {}),
    hooks: {
      onCaseEnd: (c, r) => {
        r.transcript = null;
        if (c.name === "hook-fails") throw new Error("the hook broke");
      },
    },
    logger: createLogger({ level: "silent" }),
    tokens,
    presence: () => true,
    listener: { onAccepted: () => undefined, onInFlightChanged: () => undefined, onWorkerActive: () => undefined },
    spool,
    ...extra,
  });
}

/** The result message a worker sends for trial `trial` of case `index`, its result shaped by `shape`. */
function message(cases: readonly Case[], index: number, shape: (r: CaseResult) => void, trial = 1): [Uint8Array, string] {
  const r = resultShell(cases[index]!, index);
  r.sessionId = `eval-${index}-${trial}`;
  r.durationSeconds = 0.25 * (index + 1);
  r.worker = "host.example/4242";
  r.attempts = 1;
  r.runStatus = "COMPLETED";
  shape(r);
  const m = { v: NATS_PROTOCOL, runId, index, trial, name: cases[index]!.name, workerId: "host.example/4242", token: tokens.token(index, trial), result: resultToWire(r, { response: false }) } as ResultMessage;
  return [bytes(m), resultSubject(runId, index, tokens.seal(index, trial), trial)];
}

/** Runs `drive` against a collector with and without the spool; both finish the same way. */
function both(cases: readonly Case[], drive: Drive, meta: SuiteResultMeta, extra: Partial<RunCollectorOptions> = {}, skipReason = "run cancelled (test)"): { memory: SuiteResult; spooled: SuiteResult } {
  const out = [false, true].map((spool) => {
    const c = collector(cases, spool, extra);
    drive(c, cases);
    return new SuiteResult(c.finish(skipReason, (r) => restateCancelledBeforeStart(r, skipReason)), meta);
  });
  return { memory: out[0]!, spooled: out[1]! };
}

/** Every view of a run a CLI run writes, as text. */
async function views(suite: SuiteResult, dir: string, name: string): Promise<Record<string, string>> {
  const confidence = suite.statistics.confidence;
  const summary = new MemoryStream();
  printSummary(summary, suite);
  const path = join(dir, `${name}.json`);
  await writeJsonReport(path, suite);
  return {
    chunks: [...jsonReportChunks(suite)].join(""),
    file: readFileSync(path, "utf8"),
    junit: toJUnitXml(suite, "spool suite", timestamp),
    summary: summary.chunks.join(""),
    exit: String(exitCodeFor(suite)),
    rows: JSON.stringify(Array.from(suite.cases(), (r) => caseRow(runId, redactResult(r), "2026-01-02T03:04:05.000Z", null, confidence))),
    summaryJSON: JSON.stringify(suite.summaryJSON()),
  };
}

async function assertSameReports(memory: SuiteResult, spooled: SuiteResult, secret = false): Promise<void> {
  assert.equal(memory.spooled, false);
  assert.equal(spooled.spooled, true, "the distributed collector spools by default");
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-spool-eq-"));
  // The reference: today's report, the whole document built in memory.
  const reference = jsonReportText(memory.toJSON());
  const a = await views(memory, dir, "memory");
  const b = await views(spooled, dir, "spooled");
  assert.equal(a.chunks, reference, "the streamed report is the whole document's text");
  assert.equal(a.file, reference);
  for (const k of Object.keys(a)) assert.equal(b[k], a[k], `${k} differs`);
  assert.equal(b.file!.includes(SECRET), false, "the secret is redacted in the streamed report");
  if (secret) assert.match(b.file!, /\[REDACTED\]/);
  // Materialising a spooled run's results gives the same document again (and holds them from then on).
  assert.equal(jsonReportText(spooled.toJSON()), reference);
  assert.equal(spooled.results.length, memory.total);
  assert.equal(spooled.spooled, false);
  assert.equal(jsonReportText(spooled.toJSON()), reference);
  spooled.release();
}

describe("a spooled run reports what the same run held in memory reports", () => {
  const cases = [
    mkCase("passes", { tags: ["t1", "t2"] }),
    mkCase("fails-check"),
    mkCase("errors"),
    mkCase("times-out"),
    mkCase("cancelled-before-start"),
    mkCase("lost"),
    mkCase("hook-fails"),
    mkCase("never-ran"),
    mkCase("ünïcødé ✓ 名前"),
  ];

  test("one trial per case: every kind of outcome, hooks, a restated cancel, a case never run", async () => {
    const drive: Drive = (c, cs) => {
      const feed = (i: number, shape: (r: CaseResult) => void) => c.onResult(...message(cs, i, shape));
      feed(8, (r) => {
        r.judgePassed = true;
        r.output = "naïve café ✓ — 名前\nline two\t\"quoted\"";
      });
      feed(0, (r) => {
        r.judgePassed = true;
        r.judgeScore = 9;
        r.output = `Paris, and the key ${SECRET}`;
        r.toolsCalled = ["search", "answer"];
        r.usage = { model: "gpt-4o-mini", inputTokens: 120, outputTokens: 30, totalTokens: 150, costUsd: null, judge: { model: "gpt-4o-mini", inputTokens: 40, outputTokens: 5, totalTokens: 45, costUsd: null } } as CaseResult["usage"];
        r.phaseSeconds = { setup: 0.01, run: 0.2, checks: 0.03, teardown: 0 };
        r.transcript = { v: TRANSCRIPT_VERSION, run: null, status: null, error: null, usage: null, cut: null } as unknown as CaseResult["transcript"];
      });
      feed(1, (r) => {
        r.judgePassed = false;
        r.judgeReason = "does not mention Paris";
        r.judgeScore = 3;
        r.score = { value: 0.25, passed: false, reason: "too short" };
      });
      feed(2, (r) => r.addError("agent: Error: boom"));
      feed(3, (r) => {
        r.timedOut = true;
        r.addError("timeout: the case ran past 5s", null);
        r.errorKind = "timeout";
      });
      feed(4, (r) => {
        r.skipped = true;
        r.addError(CANCELLED_BEFORE_START_ERROR);
      });
      c.accept(c.errorResult(c.selectedAt(5)!, "worker: lost after 3 deliveries", 3), "reconciliation");
      feed(6, (r) => (r.judgePassed = true));
    };
    const { memory, spooled } = both(cases, drive, { runId, durationSeconds: 12.5, startedAt: timestamp.toISOString(), cancelled: true, passThreshold: 0.5 });
    assert.equal(memory.total, 9);
    const byName = new Map(memory.results.map((r) => [r.name, r]));
    assert.equal(byName.get("cancelled-before-start")!.error, "skipped: run cancelled (test)", "restated");
    assert.equal(byName.get("never-ran")!.error, "skipped: run cancelled (test)");
    assert.match(byName.get("hook-fails")!.error ?? "", /the hook broke/);
    assert.equal(byName.get("passes")!.transcript, null, "as the recorder left it");
    await assertSameReports(memory, spooled, true);
  });

  test("repeated cases: trials folded, a case partly run when the run ended", async () => {
    const drive: Drive = (c, cs) => {
      for (const t of [2, 1, 3]) c.onResult(...message(cs, 0, (r) => (r.judgePassed = t !== 2), t));
      for (const t of [1, 2, 3]) c.onResult(...message(cs, 1, (r) => (r.judgePassed = true), t));
      // Case 2 got one trial of three: folded at the end with the other two skipped.
      c.onResult(...message(cs, 2, (r) => (r.judgePassed = true), 1));
      for (const t of [3, 1, 2]) c.onResult(...message(cs, 3, (r) => (t === 1 ? r.addError("agent: flaky") : (r.score = { value: 0.9, passed: true, reason: null })), t));
    };
    const { memory, spooled } = both(cases.slice(0, 5), drive, { runId, durationSeconds: 3, repeat: 3, casePassRate: 0.6 }, { trials: 3, casePassRate: 0.6 }, "the run ended before the case ran");
    assert.equal(memory.results[2]!.repeats!.length, 3);
    assert.ok(memory.passAtK);
    await assertSameReports(memory, spooled);
  });

  test("adaptive repeats: cases decided, stopped, and never run", async () => {
    const extra = (): Partial<RunCollectorOptions> => ({ trials: 2, casePassRate: 0.8, adaptive: { max: 6, confidence: 0.75, trialsAllowed: (_t, wanted) => wanted } });
    const drive: Drive = (c, cs) => {
      const trial = (i: number, passed: boolean): CaseResult => {
        const r = resultShell(cs[i]!, i);
        r.judgePassed = passed;
        r.durationSeconds = 0.5;
        return r;
      };
      // Case 0 fails both planned trials (folds at MIN); case 1 passes every trial up to MAX.
      for (const t of [1, 2]) c.accept(trial(0, false), "test", t);
      for (let t = 1; t <= 6; t++) c.accept(trial(1, true), "test", t);
      c.accept(trial(2, true), "test", 1);
    };
    const { memory, spooled } = both(cases.slice(0, 4), drive, { runId, durationSeconds: 3, repeat: 2, repeatMax: 6, casePassRate: 0.8 }, extra());
    assert.ok(memory.adaptiveRepeats);
    await assertSameReports(memory, spooled);
  });
});

describe("ResultSpool", () => {
  test("records are read back by index, staged or written, a later put replacing an earlier; closing lets go of the file", () => {
    const dir = privateTempDir("results")!;
    const before = new Set(readdirSync(dir));
    const spool = new ResultSpool(4);
    assert.deepEqual(readdirSync(dir).filter((f) => !before.has(f)), [], "the file is unlinked once open");
    const sel = selectCases([mkCase("a"), mkCase("b")], {}) as SelectedCase[];
    const big = new CaseResult({ name: "a", index: 0, output: "é".repeat(300_000) });
    spool.put(big);
    spool.put(new CaseResult({ name: "b", index: 1, output: "small" }));
    for (let i = 0; i < 200; i++) spool.put(new CaseResult({ name: "b", index: 3, output: `n${i} ${"y".repeat(2000)}` }));
    assert.equal(spool.get(0)!.output, big.output, "a record bigger than the staging buffer");
    assert.equal(spool.get(1)!.output, "small");
    assert.match(spool.get(3)!.output!, /^n199 /, "the last put wins");
    assert.equal(spool.get(2), undefined);
    assert.notEqual(spool.get(1), spool.get(1), "a fresh copy each read");
    assert.equal(sel.length, 2);
    spool.close();
    spool.close();
    assert.throws(() => spool.get(1), /closed/);
  });

  test("a result that cannot be written as JSON is kept in memory, not lost", () => {
    const spool = new ResultSpool(2);
    const odd = new CaseResult({ name: "a", index: 0, response: { n: BigInt(1) } as unknown as CaseResult["response"] });
    spool.put(odd);
    assert.equal(spool.get(0), odd);
    spool.close();
  });
});
