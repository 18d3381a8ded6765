// The worker's result publisher (worker/result-publisher.ts) against a fake broker: a case is
// acked only once its result is stored; the acks due in one turn go out together on the next
// tick (one socket write with that tick's results); a result that cannot be stored is handed
// back, never acked; an ack that throws keeps the others from nothing.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { JsMsg } from "@nats-io/jetstream";
import type { Broker } from "../../shared/broker/setup.ts";
import { CaseResult } from "../../shared/result/result.ts";
import { resultSubjectParts } from "../../shared/broker/subjects.ts";
import { ResultPublisher } from "../../worker/result-publisher.ts";

const token = "t".repeat(43);
const log = { error: () => undefined } as never;

/** A turn counter: the acks' turn tells whether they went out together, and after their results were stored. */
function turns(): { now: () => number; stop: () => void } {
  let turn = 0;
  let on = true;
  const next = (): void => {
    turn++;
    if (on) setImmediate(next);
  };
  setImmediate(next);
  return { now: () => turn, stop: () => (on = false) };
}

function fakeMessage(events: string[], i: number, clock: () => number, throwOnAck = false): JsMsg {
  return {
    ack: () => {
      events.push(`ack ${i} @${clock()}`);
      if (throwOnAck) throw new Error("connection closed");
    },
    nak: (delay?: number) => events.push(`nak ${i} ${delay}`),
  } as unknown as JsMsg;
}

/** A broker whose PubAck for case i comes after `delays[i]` microtask hops (or fails when negative). */
function fakeBroker(events: string[], clock: () => number, delays: number[]): Broker {
  const publish = async (subject: string): Promise<unknown> => {
    const index = resultSubjectParts(subject)!.index;
    for (let k = 0; k < Math.abs(delays[index]!); k++) await Promise.resolve();
    if (delays[index]! < 0) throw new Error("no PubAck");
    events.push(`stored ${index} @${clock()}`);
    return { seq: index + 1 };
  };
  return { publisher: { publish }, nc: { publish: () => undefined } } as unknown as Broker;
}

const result = (index: number): CaseResult => new CaseResult({ name: `c${index}`, index, tags: [] });

describe("ResultPublisher.publishThenAck", () => {
  test("acks each case after its result is stored, the acks due in one turn together on the next tick", async () => {
    const events: string[] = [];
    const clock = turns();
    const finished: number[] = [];
    const delays = [1, 7, 30];
    const publisher = new ResultPublisher({
      broker: fakeBroker(events, clock.now, delays),
      runId: "run-1",
      workerId: "w",
      abort: new AbortController().signal,
      metrics: { caseFinished: (r: { durationSeconds: number }) => finished.push(r.durationSeconds), caseHandedBack: () => undefined, caseReceived: () => undefined } as never,
    });
    await Promise.all(delays.map((_, i) => publisher.publishThenAck(fakeMessage(events, i, clock.now), result(i), token, 1, () => log)));
    clock.stop();
    const stored = events.filter((e) => e.startsWith("stored"));
    const acks = events.filter((e) => e.startsWith("ack"));
    assert.equal(stored.length, 3);
    assert.deepEqual(acks.map((e) => e.split(" @")[0]), ["ack 0", "ack 1", "ack 2"]);
    const turnOf = (e: string): number => Number(e.split("@")[1]);
    assert.equal(new Set(acks.map(turnOf)).size, 1, `one turn for every ack: ${events.join(", ")}`);
    assert.ok(turnOf(acks[0]!) > Math.max(...stored.map(turnOf)), `acked on a tick after the last result was stored: ${events.join(", ")}`);
    for (const i of [0, 1, 2]) assert.ok(events.indexOf(`stored ${i} @${turnOf(stored[i]!)}`) < events.findIndex((e) => e.startsWith(`ack ${i} `)));
    assert.equal(finished.length, 3, "each case is counted once acked");
  });

  test("a result that cannot be stored is handed back, never acked; an ack that throws stops no other", async () => {
    const events: string[] = [];
    const clock = turns();
    const delays = [1, -1, 2];
    const publisher = new ResultPublisher({ broker: fakeBroker(events, clock.now, delays), runId: "run-1", workerId: "w", abort: AbortSignal.abort(), metrics: null });
    await Promise.all(delays.map((_, i) => publisher.publishThenAck(fakeMessage(events, i, clock.now, i === 0), result(i), token, 1, () => log)));
    clock.stop();
    assert.ok(events.includes("nak 1 1000"), events.join(", "));
    assert.ok(!events.some((e) => e.startsWith("ack 1 ")), "not acked");
    assert.ok(events.some((e) => e.startsWith("ack 0 ")) && events.some((e) => e.startsWith("ack 2 ")), events.join(", "));
  });
});
