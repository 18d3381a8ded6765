// The named JetStream API codes and their predicates: the values are the server's `err_code`s
// (a typo here would silently turn "the run is over" into "retry forever").
import { test } from "node:test";
import assert from "node:assert/strict";
import { JetStreamApiError } from "@nats-io/jetstream";
import { JsApiCode, isAlreadyTaken, isConsumerNotFound, isStreamNotFound, jsApiCodeOf } from "../../../shared/broker/api-codes.ts";

const apiError = (err_code: number, description: string) => new JetStreamApiError({ code: 400, err_code, description });

test("the named codes are the server's err_codes", () => {
  assert.deepEqual(JsApiCode, { ConsumerNotFound: 10014, StreamNotFound: 10059, StreamWrongLastSequence: 10071, StreamWrongLastSequenceUnknown: 10164 });
});

test("each predicate answers for its codes only", () => {
  const consumerGone = apiError(10014, "consumer not found");
  const streamGone = apiError(10059, "stream not found");
  const taken = apiError(10071, "wrong last sequence: 1");
  const takenUnknown = apiError(10164, "wrong last sequence");
  assert.deepEqual([consumerGone, streamGone, taken, takenUnknown].map(isConsumerNotFound), [true, false, false, false]);
  assert.deepEqual([consumerGone, streamGone, taken, takenUnknown].map(isStreamNotFound), [false, true, false, false]);
  assert.deepEqual([consumerGone, streamGone, taken, takenUnknown].map(isAlreadyTaken), [false, false, true, true]);
});

test("anything but a JetStream API error has no code, even when it carries a matching number", () => {
  for (const err of [new Error("wrong last sequence: 1"), { code: 10071 }, "10071", null, undefined]) {
    assert.equal(jsApiCodeOf(err), null);
    assert.equal(isAlreadyTaken(err), false);
    assert.equal(isConsumerNotFound(err), false);
  }
  assert.equal(jsApiCodeOf(apiError(10037, "no message found")), 10037);
});
