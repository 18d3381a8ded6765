// A case message as a worker receives it: every kind of bad message is named in one line (the
// integration test faults-wire.test.ts sends the same garbage over a real broker), and answered on
// its case only when it carries a delivery token to answer with (the coordinator keeps the answer
// only when that token is the case's).
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { loadSuite, type LoadedSuite } from "../../shared/suite/suite.ts";
import { caseSubject } from "../../shared/broker/subjects.ts";
import { NATS_PROTOCOL } from "../../shared/wire/nats.ts";
import { MAX_CASE_MESSAGE_BYTES, caseErrorResult, checkCaseMessage, poolRequest } from "../../worker/case-message.ts";
import { fixture } from "../support/paths.ts";

let suite: LoadedSuite;
before(async () => {
  suite = await loadSuite(fixture("basic-suite.ts"));
});

const runId = "run-1";
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
/** Checks a message on the subject of case `index` of a run that selected alpha and gamma (0 and 2). */
const check = (index: number, body: unknown) => checkCaseMessage(bytes(body), { subject: caseSubject(runId, index), runId, selected: new Set([0, 2]), suite });
const token = "t".repeat(43);
const message = (index: number, name: string, extra: Record<string, unknown> = {}) => ({ v: NATS_PROTOCOL, runId, index, name, fingerprint: suite.fingerprint, token, ...extra });

describe("checkCaseMessage", () => {
  test("a case of the run and of this suite is accepted", () => {
    const r = check(2, message(2, "gamma"));
    assert.equal(r.kind, "ok");
    assert.equal(r.kind === "ok" && r.case.name, "gamma");
    assert.equal(r.kind === "ok" && r.message.token, token);
  });

  test("another protocol version is refused naming both versions, and recorded on the case whose subject it took", () => {
    assert.deepEqual(check(0, message(0, "alpha", { v: NATS_PROTOCOL + 1 })), {
      kind: "bad",
      why: `case message speaks protocol version ${NATS_PROTOCOL + 1}; this worker speaks ${NATS_PROTOCOL}`,
      recordOn: { index: 0, trial: 1, name: "alpha", token },
    });
  });

  test("each kind of garbage is named; a case outside the manifest is recorded on no case", () => {
    const on0 = { index: 0, trial: 1, name: "alpha", token };
    const cases: Array<[number, unknown, RegExp, { index: number; trial: number; name: string; token: string } | null]> = [
      // Nothing to answer with: no token can be read.
      [0, "{not json", /^malformed case message: not valid JSON$/, null],
      [0, { v: NATS_PROTOCOL, runId, index: 0 }, /^malformed case message: name: .*; fingerprint: .*; token: /, null],
      [0, message(0, "alpha", { token: "short" }), /^malformed case message: token: not a delivery token$/, null],
      [0, message(0, "alpha", { padding: "x".repeat(MAX_CASE_MESSAGE_BYTES) }), /^case message of \d+ bytes exceeds the 65536-byte limit$/, null],
      [1, message(1, "beta"), /^case index 1 is not in the run's manifest$/, null],
      [0, message(0, "not_alpha"), /^case message does not match the run's manifest \(run 'run-1', index 0, name 'not_alpha'\)$/, on0],
      [0, message(0, "alpha", { code: "() => 1" }), /^malformed case message: message: Unrecognized key/, on0],
    ];
    for (const [index, body, why, recordOn] of cases) {
      const r = check(index, body);
      assert.equal(r.kind, "bad", JSON.stringify(body).slice(0, 80));
      if (r.kind !== "bad") continue;
      assert.match(r.why, why);
      assert.deepEqual(r.recordOn, recordOn);
    }
  });

  test("a case of another suite (its fingerprint) is foreign: recorded on the case the message names", () => {
    const r = check(2, message(2, "gamma", { fingerprint: "0".repeat(64) }));
    assert.equal(r.kind, "foreign");
    assert.equal(r.kind === "foreign" && r.why, `case 2 'gamma' is not in this worker's suite (fingerprint ${suite.fingerprint.slice(0, 12)})`);
  });
});

test("poolRequest carries the manifest's settings; caseErrorResult keeps the case's identity when the suite has it", () => {
  const manifest = { defaultTimeout: 7, repeat: 1 } as Parameters<typeof poolRequest>[2];
  const signal = new AbortController().signal;
  const request = poolRequest(suite.cases[0]!, 0, manifest, signal);
  assert.deepEqual([request.index, request.name, request.defaultTimeout, request.timeoutSeconds, request.hasTeardown, request.signal === signal], [0, "alpha", 7, 7, false, true]);
  assert.equal(request.shell().name, "alpha");

  const known = caseErrorResult(suite, 0, "alpha", "worker: bad", 2, "host/1");
  assert.deepEqual([known.name, known.tags, known.error, known.attempts, known.worker], ["alpha", ["smoke"], "worker: bad", 2, "host/1"]);
  const unknown = caseErrorResult(suite, 9, "zeta", "worker: foreign", 1, "host/1");
  assert.deepEqual([unknown.name, unknown.index, unknown.tags], ["zeta", 9, []]);
});

describe("checkCaseMessage: trials (protocol 4)", () => {
  test("a later trial is accepted on its own subject, and refused on another trial's", () => {
    const body = { ...message(0, "alpha"), trial: 3 };
    const ok = checkCaseMessage(bytes(body), { subject: caseSubject(runId, 0, 3), runId, selected: new Set([0, 2]), suite });
    assert.equal(ok.kind, "ok");
    assert.equal(ok.kind === "ok" && ok.message.trial, 3);
    const moved = checkCaseMessage(bytes(body), { subject: caseSubject(runId, 0, 2), runId, selected: new Set([0, 2]), suite });
    assert.equal(moved.kind, "bad");
    assert.match(moved.kind === "bad" ? moved.why : "", /index 0 trial 3, name 'alpha'/);
    assert.deepEqual(moved.kind === "bad" && moved.recordOn, { index: 0, trial: 2, name: "alpha", token });
  });
});
