// The PubAck-inbox publisher against a real nats-server: stored, deduplicated, refused by an
// expected sequence (the worker's create-only results), no stream, and no PubAck in time.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { JetStreamApiError, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { ConfirmedPublisher } from "../shared/broker/publisher.ts";
import { JsApiCode, isAlreadyTaken } from "../shared/broker/api-codes.ts";
import { EvalfleetError } from "../shared/errors.ts";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";

let server: TestNatsServer;
let nc: NatsConnection;

before(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url, noAsyncTraces: true });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "PUBTEST", subjects: ["pubtest.>"], retention: RetentionPolicy.Limits, storage: StorageType.Memory });
});

after(async () => {
  await nc?.close();
  await server?.stop();
});

test("a stored message resolves with its stream and sequence; a repeated message ID is a duplicate", async () => {
  const pub = new ConfirmedPublisher(nc);
  const first = await pub.publish("pubtest.a", "one", { msgId: "m-1" });
  assert.equal(first.stream, "PUBTEST");
  assert.ok(first.seq >= 1);
  assert.equal(first.duplicate, false);
  const again = await pub.publish("pubtest.a", "one", { msgId: "m-1" });
  assert.equal(again.duplicate, true);
  assert.equal(again.seq, first.seq);
  assert.equal(pub.waiting, 0);
  pub.close();
});

test("many at once: every PubAck reaches its own publish", async () => {
  const pub = new ConfirmedPublisher(nc);
  const acks = await Promise.all(Array.from({ length: 2000 }, (_, i) => pub.publish(`pubtest.many.${i}`, String(i), { msgId: `many-${i}` })));
  const seqs = new Set(acks.map((a) => a.seq));
  assert.equal(seqs.size, 2000, "each publish got a distinct sequence");
  assert.equal(pub.waiting, 0);
  pub.close();
});

test("create-only: a second message on a subject that holds one is refused with err_code 10071 (StreamWrongLastSequence)", async () => {
  const pub = new ConfirmedPublisher(nc);
  await pub.publish("pubtest.once", "first", { expectLastSubjectSequence: 0 });
  await assert.rejects(pub.publish("pubtest.once", "second", { expectLastSubjectSequence: 0 }), (err: unknown) => {
    assert.ok(err instanceof JetStreamApiError);
    assert.equal(err.code, JsApiCode.StreamWrongLastSequence);
    assert.ok(isAlreadyTaken(err));
    return true;
  });
  pub.close();
});

test("no stream on the subject: a clear error naming it, not a hang", async () => {
  const pub = new ConfirmedPublisher(nc, { timeoutMs: 5_000 });
  await assert.rejects(pub.publish("nostream.here", "x"), (err: unknown) => {
    assert.ok(err instanceof EvalfleetError);
    assert.match(err.message, /no JetStream stream stores nostream\.here/);
    return true;
  });
  pub.close();
});

test("no PubAck within the timeout rejects, and close() rejects what still waits", async () => {
  // A core subscriber that never replies stands in for a stream that does not answer.
  const silent = nc.subscribe("silent.>");
  try {
    const pub = new ConfirmedPublisher(nc, { timeoutMs: 300 });
    const t0 = Date.now();
    await assert.rejects(pub.publish("silent.a", "x"), /no PubAck for silent\.a within 0\.3s/);
    assert.ok(Date.now() - t0 < 3_000, "the sweep rejected it within a couple of seconds");
    const waiting = pub.publish("silent.b", "y");
    pub.close();
    await assert.rejects(waiting, /closed before the PubAck arrived/);
    await assert.rejects(pub.publish("pubtest.a", "z"), /publisher is closed/);
  } finally {
    silent.unsubscribe();
  }
});
