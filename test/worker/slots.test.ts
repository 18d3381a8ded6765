// The shared case slots (worker/slots.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Slots } from "../../worker/slots.ts";

describe("Slots", () => {
  test("take returns up to max of the free slots, and waits when none is free", async () => {
    const slots = new Slots(3);
    assert.equal(await slots.take(2), 2);
    assert.equal(slots.free, 1);
    assert.equal(await slots.take(5), 1);
    assert.equal(slots.busy, 3);
    let got = -1;
    const waiting = slots.take(4).then((n) => (got = n));
    await new Promise((r) => setImmediate(r));
    assert.equal(got, -1, "no slot is free yet");
    slots.give(2);
    await waiting;
    assert.equal(got, 2);
  });

  test("an aborted signal ends the wait with 0 slots", async () => {
    const slots = new Slots(1);
    await slots.take(1);
    const controller = new AbortController();
    const waiting = slots.take(1, controller.signal);
    controller.abort();
    assert.equal(await waiting, 0);
    assert.equal(slots.free, 0);
  });

  test("give never exceeds the size", () => {
    const slots = new Slots(2);
    slots.give(5);
    assert.equal(slots.free, 2);
  });
});
