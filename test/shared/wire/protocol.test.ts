// Protocol versions: a message of another version is refused with one sentence naming both
// versions, on NATS (`v`) and between a pool and its threads (`protocol`).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { versionMismatch, versionOf } from "../../../shared/wire/protocol.ts";
import { NATS_PROTOCOL } from "../../../shared/wire/nats.ts";
import { THREAD_PROTOCOL, parseThreadBatch } from "../../../shared/wire/thread.ts";

describe("versionMismatch", () => {
  test("names both versions when the message speaks another one", () => {
    assert.equal(
      versionMismatch({ v: NATS_PROTOCOL + 1 }, { ours: NATS_PROTOCOL, what: "result message", who: "coordinator" }),
      `result message speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`,
    );
    assert.equal(versionMismatch({ v: "2" }, { ours: 2, what: "case message", who: "worker" }), `case message speaks protocol version "2"; this worker speaks 2`);
  });

  test("says nothing for our version, or a message that names none (its schema then says what is wrong)", () => {
    for (const message of [{ v: NATS_PROTOCOL }, {}, null, "text", 3, [1, 2], undefined]) {
      assert.equal(versionMismatch(message, { ours: NATS_PROTOCOL, what: "m", who: "worker" }), null, JSON.stringify(message));
    }
    assert.equal(versionOf({ protocol: 7 }, "protocol"), 7);
    assert.equal(versionOf({ protocol: 7 }), undefined);
  });
});

describe("parseThreadBatch", () => {
  const batch = { protocol: THREAD_PROTOCOL, suitePath: "/suite.ts", fingerprint: "f".repeat(64), logLevel: "warn", keepResponses: false, cases: [{ taskId: 0, index: 0, name: "a", defaultTimeout: 120, setupTimeout: 60, teardownTimeout: 60, maxOutputBytes: 262144, attempt: 1, forwardEvents: false }] };

  test("a batch of this thread protocol is accepted", () => {
    const parsed = parseThreadBatch(batch);
    assert.ok(parsed.ok);
    assert.equal(parsed.batch.cases[0]!.name, "a");
  });

  test("a batch of another thread protocol is refused naming both versions, before its fields are looked at", () => {
    const parsed = parseThreadBatch({ protocol: THREAD_PROTOCOL + 1, cases: "not even a list" });
    assert.deepEqual(parsed, { ok: false, why: `thread task speaks thread protocol version ${THREAD_PROTOCOL + 1}; this thread speaks ${THREAD_PROTOCOL}` });
  });

  test("a malformed batch of this protocol names the field", () => {
    const parsed = parseThreadBatch({ ...batch, cases: [] });
    assert.equal(parsed.ok, false);
    assert.match(!parsed.ok ? parsed.why : "", /^invalid thread task: cases: /);
  });
});
