// Collecting a distributed run's results: the first result per case wins; a result must prove its
// delivery (the case's token, sealed into its subject, from a worker present in the run), and one
// that does not is dropped, said once per run and reason, and the case keeps waiting for its real
// result; a result or event of another protocol version is disposed of, said once per run with
// both versions, and a result of another version on the case's sealed subject (its create-only
// subject) is recorded on its case; a case lost after its deliveries is built from its shell,
// so a dataset row keeps its id through the store to Exulu's export.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadSuite, type LoadedSuite } from "../../../shared/suite/suite.ts";
import { createLogger } from "../../../shared/logger.ts";
import { eventBatchSubject, eventSubject, resultSubject } from "../../../shared/broker/subjects.ts";
import { NATS_PROTOCOL, type ResultMessage } from "../../../shared/wire/nats.ts";
import { RunTokens, newRunKey } from "../../../shared/wire/case-token.ts";
import { resultShell } from "../../../shared/result/result-shell.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";
import { selectCases } from "../../../coordinator/run/select.ts";
import { RunCollector } from "../../../coordinator/distributed/collect.ts";
import { lostCaseError } from "../../../coordinator/distributed/reconcile.ts";
import { CASE_COLUMNS, caseRow } from "../../../coordinator/history/store/case-row.ts";
import { CaseRowSchema } from "../../../coordinator/history/store/row-schemas.ts";
import type { RunRecord } from "../../../coordinator/history/store/run-record.ts";
import { toExuluExport } from "../../../coordinator/history/export.ts";
import type { CaseResult } from "../../../shared/result/result.ts";
import { MemoryStream } from "../../support/doubles.ts";
import { fixture } from "../../support/paths.ts";

let suite: LoadedSuite;
before(async () => {
  suite = await loadSuite(fixture("basic-suite.ts"));
});

const runId = "run-1";
const tokens = new RunTokens(newRunKey(), runId);
/** The subject a worker that received case `index` publishes its result on. */
const sealed = (index: number): string => resultSubject(runId, index, tokens.seal(index));
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

function collector(presence: (workerId: string) => boolean | Promise<boolean> = (w) => w === "host/1", of: LoadedSuite = suite) {
  const log = new MemoryStream();
  const ended: CaseResult[] = [];
  const counts = { accepted: 0, inFlight: 0, active: 0 };
  const c = new RunCollector({
    runId,
    selected: selectCases(of.cases, {}),
    hooks: { onCaseEnd: (_case, r) => void ended.push(r) },
    logger: createLogger({ level: "warn", destination: log }),
    tokens,
    presence,
    listener: { onAccepted: () => counts.accepted++, onInFlightChanged: () => counts.inFlight++, onWorkerActive: () => counts.active++ },
  });
  const lines = () => log.text.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l).msg as string);
  return { c, ended, counts, lines };
}

function resultMessage(index: number, error: string | null = null, v: number = NATS_PROTOCOL, extra: Partial<ResultMessage> = {}): ResultMessage {
  const r = resultShell(suite.cases[index]!, index);
  if (error) r.addError(error);
  return { v: v as typeof NATS_PROTOCOL, runId, index, trial: 1, name: suite.cases[index]!.name, workerId: "host/1", token: tokens.token(index), result: resultToWire(r, { response: false }), ...extra } as ResultMessage;
}

describe("RunCollector", () => {
  test("the first result per case wins, and onCaseEnd is told once", () => {
    const { c, ended, counts } = collector();
    c.onResult(bytes(resultMessage(1)), sealed(1));
    c.onResult(bytes(resultMessage(1, "second")), sealed(1));
    assert.equal(c.size, 1);
    assert.equal(counts.accepted, 1);
    assert.deepEqual(ended.map((r) => [r.name, r.error]), [["beta", null]]);
  });

  test("in-flight trials by worker: a start counts once, a redelivery to another worker moves it, a result ends it", () => {
    const { c } = collector((w) => w === "host/1" || w === "host/2");
    const started = (index: number, workerId: string) => c.onEvent(bytes({ v: NATS_PROTOCOL, runId, index, trial: 1, workerId, kind: "started" }), eventSubject(runId, index));
    started(0, "host/1");
    started(0, "host/1");
    started(1, "host/1");
    started(2, "host/2");
    assert.deepEqual([...c.busyByWorker()].sort(), [["host/1", 2], ["host/2", 1]]);
    started(1, "host/2");
    assert.deepEqual([...c.busyByWorker()].sort(), [["host/1", 1], ["host/2", 2]]);
    c.onResult(bytes(resultMessage(0)), sealed(0));
    c.onResult(bytes(resultMessage(1, null, NATS_PROTOCOL, { workerId: "host/2" })), sealed(1));
    assert.deepEqual([...c.busyByWorker()], [["host/2", 1]]);
    assert.equal(c.inFlight, 1);
  });

  test("results of another protocol version: recorded on their cases naming both versions, logged once per run", () => {
    const { c, lines } = collector();
    c.onResult(bytes(resultMessage(0, null, NATS_PROTOCOL + 1)), sealed(0));
    c.onResult(bytes(resultMessage(2, null, NATS_PROTOCOL + 1)), sealed(2));
    const why = `result message speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`;
    const results = [...c.finish("not run")];
    assert.deepEqual(results.map((r) => r.error), [`worker: ${why}`, "skipped: not run", `worker: ${why}`]);
    assert.deepEqual(lines(), [`disposing of result messages of another protocol version (said once per run): ${why}`]);
  });

  test("events of another protocol version are dropped, logged once per run; ours mark the case started", () => {
    const { c, counts, lines } = collector();
    const event = (index: number, v: number) => ({ v, runId, index, workerId: "host/1", kind: "started" });
    c.onEvent(bytes(event(0, NATS_PROTOCOL + 1)), eventSubject(runId, 0));
    c.onEvent(bytes(event(2, NATS_PROTOCOL + 1)), eventSubject(runId, 2));
    assert.equal(c.inFlight, 0);
    assert.equal(counts.active, 0);
    assert.deepEqual(lines(), [`disposing of event messages of another protocol version (said once per run): event message speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`]);
    c.onEvent(bytes(event(2, NATS_PROTOCOL)), eventSubject(runId, 2));
    assert.deepEqual([...c.busyByWorker()], [["host/1", 1]]);
    assert.equal(counts.active, 1);
    // Garbage of our own version is dropped without a word (events are disposable).
    c.onEvent(new TextEncoder().encode("{not json"), eventSubject(runId, 0));
    assert.equal(lines().length, 1);
  });

  test("a worker's batch of events is read as its events one by one: in order, with the batch's worker, after the same checks", () => {
    const starts: string[] = [];
    const runEvents: string[] = [];
    const { c, counts, lines } = collector();
    const hooked = new RunCollector({
      runId,
      selected: selectCases(suite.cases, {}),
      hooks: { onCaseStart: (cs) => void starts.push(cs.name), onRunEvent: (cs, e) => void runEvents.push(`${cs.name}:${String((e as { n?: number }).n)}`) },
      logger: createLogger({ level: "error" }),
      tokens,
      presence: () => true,
      listener: { onAccepted: () => undefined, onInFlightChanged: () => undefined, onWorkerActive: () => undefined },
    });
    const batch = (events: unknown[], extra: Record<string, unknown> = {}) => bytes({ v: NATS_PROTOCOL, runId, workerId: "host/2", events, ...extra });
    const events = [{ index: 0, trial: 1, kind: "started" }, { index: 2, kind: "started" }, { index: 0, trial: 1, kind: "event", event: { n: 1 } }, { index: 0, trial: 1, kind: "event", event: { n: 2 } }, { index: 9, trial: 1, kind: "started" }];
    for (const x of [c, hooked]) x.onEvent(batch(events), eventBatchSubject(runId));
    assert.deepEqual([...c.busyByWorker()], [["host/2", 2]], "an unknown case in the batch is skipped, the others counted");
    assert.equal(counts.active, 4);
    assert.deepEqual(starts, ["alpha", "gamma"]);
    assert.deepEqual(runEvents, ["alpha:1", "alpha:2"], "in the order the worker sent them");
    // Another run's batch, a malformed one, an empty one, and a batch on a single event's subject are dropped whole.
    c.onEvent(batch([{ index: 1, trial: 1, kind: "started" }], { runId: "other" }), eventBatchSubject(runId));
    c.onEvent(batch([{ index: 1, trial: 1, kind: "begun" }]), eventBatchSubject(runId));
    c.onEvent(batch([]), eventBatchSubject(runId));
    c.onEvent(batch([{ index: 1, trial: 1, kind: "started" }]), eventSubject(runId, 1));
    assert.equal(c.inFlight, 2);
    assert.deepEqual(lines(), []);
    c.onEvent(batch([{ index: 1, trial: 1, kind: "started" }], { v: NATS_PROTOCOL + 1 }), eventBatchSubject(runId));
    assert.deepEqual(lines(), [`disposing of event messages of another protocol version (said once per run): event batch speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`]);
    // A single event (a worker of an evalfleet before batches) still counts.
    c.onEvent(bytes({ v: NATS_PROTOCOL, runId, index: 1, trial: 1, workerId: "host/1", kind: "started" }), eventSubject(runId, 1));
    assert.deepEqual([...c.busyByWorker()].sort(), [["host/1", 1], ["host/2", 2]]);
  });

  test("a result without the case's token, or with another one, is dropped, said once per run and reason; the real result is accepted after it", () => {
    const { c, ended, lines } = collector();
    const forged = (index: number, token: string) => bytes(resultMessage(index, null, NATS_PROTOCOL, { token }));
    const otherTokens = new RunTokens(newRunKey(), runId);
    // No token at all (the subject carries no seal), then a wrong token, each twice.
    for (let i = 0; i < 2; i++) c.onResult(forged(0, "x".repeat(43)), `evalfleet.${runId}.results.0`);
    for (let i = 0; i < 2; i++) c.onResult(forged(1, otherTokens.token(1)), resultSubject(runId, 1, otherTokens.seal(1)));
    assert.equal(c.size, 0, "nothing forged is accepted");
    assert.equal(c.dropped, 4);
    assert.deepEqual(lines(), [
      "dropping result messages that do not prove their delivery (said once per run and reason): case 0: it carries no delivery token",
      "dropping result messages that do not prove their delivery (said once per run and reason): case 1: its delivery token is not the case's",
    ]);
    // The forgeries held back nothing: the real results arrive on their own subjects and count.
    c.onResult(bytes(resultMessage(0)), sealed(0));
    c.onResult(bytes(resultMessage(1, "a real failure")), sealed(1));
    assert.deepEqual(ended.map((r) => [r.name, r.error]), [["alpha", null], ["beta", "a real failure"]]);
  });

  test("a message on a case's sealed subject that does not echo the token is recorded on the case", () => {
    const { c } = collector();
    c.onResult(bytes(resultMessage(2, null, NATS_PROTOCOL, { token: tokens.token(0) })), sealed(2));
    assert.deepEqual([...c.finish("not run")].map((r) => r.error), ["skipped: not run", "skipped: not run", "worker: result message does not echo its case's delivery token"]);
  });

  test("a result from a worker not present in the run is not accepted; presence is looked up when not known yet", async () => {
    const lookups: string[] = [];
    const { c, ended, lines } = collector((w) => {
      lookups.push(w);
      return Promise.resolve(w === "late/2");
    });
    c.onResult(bytes(resultMessage(0, null, NATS_PROTOCOL, { workerId: "never-joined/9" })), sealed(0));
    c.onResult(bytes(resultMessage(1, null, NATS_PROTOCOL, { workerId: "late/2" })), sealed(1));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(lookups, ["never-joined/9", "late/2"]);
    assert.deepEqual(ended.map((r) => [r.name, r.error]), [
      ["alpha", "worker: result from worker never-joined/9, which is not present in the run"],
      ["beta", null],
    ]);
    assert.deepEqual(lines(), ["disposing of results from workers not present in the run (said once per run): result from worker never-joined/9, which is not present in the run"]);
  });

  test("finish tells onCaseEnd once per case: a skipped result that arrived is not told again", () => {
    const { c, ended } = collector();
    const skipped = resultMessage(0);
    skipped.result.skipped = true;
    skipped.result.error = "cancelled before it started";
    c.onResult(bytes(skipped), sealed(0));
    c.onResult(bytes(resultMessage(1)), sealed(1));
    c.finish("run cancelled");
    assert.deepEqual(ended.map((r) => [r.name, r.skipped]), [["alpha", true], ["beta", false], ["gamma", true]]);
  });

  test("a lost dataset case is built from its shell: it keeps its row's id, so the store and Exulu's export name it by id", async () => {
    const data = await loadSuite(fixture("dataset-suite.ts"));
    const { c, ended } = collector(undefined, data);
    const sel = c.selectedAt(2)!;
    assert.equal(sel.case.id, "r3", "the fixture's third row");
    c.accept(c.errorResult(sel, lostCaseError(3), 3), "loss record");
    const [lost] = ended;
    const shell = resultShell(sel.case, sel.index);
    assert.deepEqual([lost!.caseId, lost!.agentId, lost!.teamId, lost!.tags, lost!.index], [shell.caseId, shell.agentId, shell.teamId, shell.tags, shell.index]);
    assert.equal(lost!.caseId, "r3");
    const report = lost!.toJSON();
    assert.deepEqual(Object.keys(report), Object.keys(shell.toJSON()), "the JSON report's keys are those of any result");
    assert.deepEqual([report.error, report.attempts, report.error_kind, report.agent_id], ["worker lost: delivered 3 times without a result", 3, "infra", "scripted"]);
    // Recorded and exported as the store does it: the row's id, not its name, is Exulu's test case id.
    const row = caseRow(runId, lost!, "2026-02-01T10:00:00.000Z");
    const record = CaseRowSchema.parse(Object.fromEntries(CASE_COLUMNS.map((col, i) => [col, typeof row.values[i] === "boolean" ? Number(row.values[i]) : row.values[i]])));
    assert.equal(record.caseId, "r3");
    const run: RunRecord = {
      id: runId, kind: "suite", suiteName: data.name, suiteFingerprint: data.fingerprint, suitePath: data.path, selection: {}, config: {}, judgeModel: null, timeoutSeconds: null,
      startedAt: "2026-02-01T09:59:00.000Z", finishedAt: null, status: "failed", total: 1, passed: 0, failed: 1, skipped: 0, durationSeconds: 60, summary: null, gitCommit: null, gitBranch: null, host: null,
    };
    const exported = toExuluExport(run, [record]);
    assert.deepEqual(exported.eval_run.test_case_ids, ["r3"]);
    assert.deepEqual([exported.results[0]!.test_case_id, exported.results[0]!.name, exported.results[0]!.error], ["r3", "order_regex", "worker lost: delivered 3 times without a result"]);
  });
});

describe("RunCollector: adaptive repeats (--repeat MIN..MAX)", () => {
  function adaptive(allowed: (wanted: number) => number = (w) => w) {
    const planned: Array<{ index: number; trial: number }> = [];
    const ended: CaseResult[] = [];
    const c = new RunCollector({
      runId,
      selected: selectCases(suite.cases, {}),
      hooks: { onCaseEnd: (_case, r) => void ended.push(r) },
      logger: createLogger({ level: "silent" }),
      tokens,
      presence: () => true,
      casePassRate: 0.8,
      trials: 3,
      adaptive: { max: 20, confidence: 0.75, trialsAllowed: (_trials, wanted) => allowed(wanted) },
      onMore: (d) => void planned.push(...d),
      listener: { onAccepted: () => undefined, onInFlightChanged: () => undefined, onWorkerActive: () => undefined },
    });
    const trial = (index: number, passed: boolean): CaseResult => {
      const r = resultShell(suite.cases[index]!, index);
      r.judgePassed = passed;
      return r;
    };
    return { c, planned, ended, trial };
  }
  const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

  test("a case's next batch is planned once its planned trials are in; it folds, decided, once its interval clears the rule", async () => {
    const { c, planned, ended, trial } = adaptive();
    for (const t of [2, 1, 3]) c.accept(trial(0, true), "test", t);
    await tick();
    assert.deepEqual(planned, [{ index: 0, trial: 4 }, { index: 0, trial: 5 }, { index: 0, trial: 6 }], "3 of 3 needs 3 more to clear 0.8 at 75%");
    assert.equal(c.isPlanned(0, 7), false, "only the batch the rule asked for is planned");
    for (const t of [6, 4, 5]) c.accept(trial(0, true), "test", t);
    await tick();
    assert.equal(planned.length, 3, "no more once cleared");
    assert.equal(ended.length, 1);
    assert.deepEqual(ended[0]!.repeats!.map((r) => r.repeat), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(ended[0]!.adaptive, { decided: true, stop: "cleared" });
    assert.equal(ended[0]!.passed, true);
  });

  test("a case failing every trial folds at MIN; a run that allows no more trials folds the case where it is, marked stopped", async () => {
    const { c, planned, ended, trial } = adaptive();
    for (const t of [1, 2, 3]) c.accept(trial(1, false), "test", t);
    await tick();
    assert.deepEqual(planned, []);
    assert.deepEqual(ended[0]!.adaptive, { decided: true, stop: "cleared" });
    const stopped = adaptive(() => 0);
    for (const t of [1, 2, 3]) stopped.c.accept(stopped.trial(0, true), "test", t);
    await tick();
    assert.deepEqual(stopped.planned, []);
    assert.deepEqual(stopped.ended[0]!.adaptive, { decided: false, stop: "stopped" });
  });

  test("a result for a trial past the plan (a resumed run replaying an earlier coordinator's batch) extends the plan, up to MAX", async () => {
    const { c, planned, ended, trial } = adaptive();
    c.accept(trial(0, true), "test", 5);
    assert.equal(c.hasTrial(0, 5), true, "accepted, not ignored");
    c.accept(trial(0, true), "test", 21);
    assert.equal(c.hasTrial(0, 21), false, "past MAX is never a trial");
    for (const t of [1, 2, 3, 4]) c.accept(trial(0, true), "test", t);
    await tick();
    assert.deepEqual(planned, [{ index: 0, trial: 6 }], "5 of 5 in: one more clears the rule; trials 4 and 5 are not published again");
    c.accept(trial(0, true), "test", 6);
    assert.deepEqual(ended[0]!.repeats!.map((r) => r.repeat), [1, 2, 3, 4, 5, 6]);
  });

  test("a budget's share: only the trials allowed are planned", async () => {
    const { c, planned, trial } = adaptive(() => 1);
    for (const t of [1, 2, 3]) c.accept(trial(2, true), "test", t);
    await tick();
    assert.deepEqual(planned, [{ index: 2, trial: 4 }]);
  });
});
