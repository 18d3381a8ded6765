// parseConfig: one validation naming the field and the value, and a frozen result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { deepFreeze, parseConfig, seconds, whole } from "../../shared/config.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";

test("the first problem names the field as the user wrote it, and the value", () => {
  const schema = z.object({ limits: z.object({ grace: seconds() }), n: whole(1) });
  assert.throws(
    () => parseConfig(schema, { limits: { grace: -1 }, n: 1 }, (p) => (p === "limits.grace" ? "--grace" : p)),
    (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && err.message === "--grace must be a number of seconds >= 0, got -1",
  );
  assert.throws(() => parseConfig(schema, { limits: { grace: 1 }, n: "two" }), (err: unknown) => err instanceof Error && err.message === "n must be a whole number >= 1, got 'two'");
});

test("plain objects and arrays are frozen; class instances handed down are left alone", () => {
  class Store {
    open = true;
  }
  const store = new Store();
  const frozen = deepFreeze({ a: { b: [1, 2] }, store });
  assert.ok(Object.isFrozen(frozen) && Object.isFrozen(frozen.a) && Object.isFrozen(frozen.a.b));
  assert.ok(!Object.isFrozen(store));
  store.open = false;
  assert.equal(frozen.store.open, false);
});
