// A worker's live events of one tick go out as one batch that the schema reads back as the same
// events in order; a full batch goes at once; nothing is sent for a tick without events.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { EVENT_BATCH_MAX_CHARS, EventBatcher } from "../../worker/event-batcher.ts";
import { EventBatchSchema, MAX_EVENTS_PER_BATCH, NATS_PROTOCOL } from "../../shared/wire/nats.ts";

function batcher() {
  const sent: string[] = [];
  let release: () => void = () => undefined;
  let tick: Promise<void> | null = null;
  const b = new EventBatcher({
    runId: "run-1",
    workerId: 'host "a"/1',
    tick: () => (tick ??= new Promise<void>((r) => (release = () => ((tick = null), r())))),
    send: (body) => void sent.push(body),
  });
  return { b, sent, next: async () => (release(), await new Promise((r) => setImmediate(r))) };
}

describe("EventBatcher", () => {
  test("the events of one tick are one message, read back by the schema in order", async () => {
    const { b, sent, next } = batcher();
    b.add({ index: 3, trial: 1, kind: "started" });
    b.add({ index: 4, trial: 2, kind: "started" });
    b.add({ index: 3, trial: 1, kind: "event", event: { type: "text_delta", text: "é \u2028 \"" } });
    assert.deepEqual(sent, [], "nothing before the tick");
    await next();
    assert.equal(sent.length, 1);
    const parsed = EventBatchSchema.parse(JSON.parse(sent[0]!));
    assert.deepEqual(parsed, {
      v: NATS_PROTOCOL,
      runId: "run-1",
      workerId: 'host "a"/1',
      events: [{ index: 3, trial: 1, kind: "started" }, { index: 4, trial: 2, kind: "started" }, { index: 3, trial: 1, kind: "event", event: { type: "text_delta", text: "é \u2028 \"" } }],
    });
    await next();
    assert.equal(sent.length, 1, "an empty tick sends nothing");
    b.add({ index: 5, trial: 1, kind: "started" });
    await next();
    assert.equal(sent.length, 2, "a later tick is its own batch");
  });

  test("a batch is sent as soon as it is full, by count or by size; a single large event goes alone", async () => {
    const { b, sent, next } = batcher();
    for (let i = 0; i < MAX_EVENTS_PER_BATCH + 1; i++) b.add({ index: i, trial: 1, kind: "started" });
    assert.equal(sent.length, 1, "the full batch went at once");
    assert.equal(EventBatchSchema.parse(JSON.parse(sent[0]!)).events.length, MAX_EVENTS_PER_BATCH);
    await next();
    assert.equal(sent.length, 2);
    const small = "x".repeat(EVENT_BATCH_MAX_CHARS / 4);
    for (let i = 0; i < 5; i++) b.add({ index: i, trial: 1, kind: "event", event: { text: small } });
    b.add({ index: 9, trial: 1, kind: "event", event: { text: "y".repeat(EVENT_BATCH_MAX_CHARS) } });
    await next();
    // Three quarter-bound events fit one batch, the fourth does not; the oversized one goes alone.
    assert.deepEqual(sent.slice(2).map((s) => EventBatchSchema.parse(JSON.parse(s)).events.map((e) => e.index)), [[0, 1, 2], [3, 4], [9]]);
  });
});
