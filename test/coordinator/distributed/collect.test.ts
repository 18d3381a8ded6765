// Collecting a distributed run's results: the first result per case wins; a result must prove its
// delivery (the case's token, sealed into its subject, from a worker present in the run), and one
// that does not is dropped, said once per run and reason, and the case keeps waiting for its real
// result; a result or event of another protocol version is disposed of, said once per run with
// both versions, and a result of another version on the case's sealed subject (its create-only
// subject) is recorded on its case.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadSuite, type LoadedSuite } from "../../../shared/suite.ts";
import { createLogger } from "../../../shared/logger.ts";
import { eventSubject, resultSubject } from "../../../shared/broker/subjects.ts";
import { NATS_PROTOCOL, type ResultMessage } from "../../../shared/wire/nats.ts";
import { RunTokens, newRunKey } from "../../../shared/wire/case-token.ts";
import { resultShell } from "../../../shared/result-shell.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";
import { selectCases } from "../../../coordinator/run/select.ts";
import { RunCollector } from "../../../coordinator/distributed/collect.ts";
import type { CaseResult } from "../../../shared/result.ts";
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

function collector(presence: (workerId: string) => boolean | Promise<boolean> = (w) => w === "host/1") {
  const log = new MemoryStream();
  const ended: CaseResult[] = [];
  const counts = { accepted: 0, inFlight: 0, active: 0 };
  const c = new RunCollector({
    runId,
    selected: selectCases(suite.cases, {}),
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
  return { v: v as typeof NATS_PROTOCOL, runId, index, name: suite.cases[index]!.name, workerId: "host/1", token: tokens.token(index), result: resultToWire(r, { response: false }), ...extra };
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

  test("results of another protocol version: recorded on their cases naming both versions, logged once per run", () => {
    const { c, lines } = collector();
    c.onResult(bytes(resultMessage(0, null, NATS_PROTOCOL + 1)), sealed(0));
    c.onResult(bytes(resultMessage(2, null, NATS_PROTOCOL + 1)), sealed(2));
    const why = `result message speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`;
    const results = c.finish("not run");
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
    assert.deepEqual(c.finish("not run").map((r) => r.error), ["skipped: not run", "skipped: not run", "worker: result message does not echo its case's delivery token"]);
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
});
