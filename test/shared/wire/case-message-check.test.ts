// The plain check of a case message (shared/wire/case-message-check.ts) against its schema
// (CaseMessageSchema): over generated messages, whatever the plain check accepts the schema
// accepts unchanged; the messages a coordinator publishes are accepted plainly; the rest goes to
// the schema.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { assertPlainCheckAgrees } from "../../support/plain-check.ts";
import { plainlyValidCaseMessage } from "../../../shared/wire/case-message-check.ts";
import { CaseMessageSchema, NATS_PROTOCOL } from "../../../shared/wire/nats.ts";
import { MAX_REPEAT } from "../../../shared/trials/fold-repeats.ts";

const token = "AbC_-0123456789abcdefghijklmnopqrstuvwxyzAB";
const traceparent = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
const good = { v: NATS_PROTOCOL, runId: "run-1", index: 3, trial: 1, name: "c3", fingerprint: "f".repeat(64), token };

/** Values to try in a field: valid ones and wrong ones of every kind. */
const VALUES: unknown[] = [
  0, 1, 2, NATS_PROTOCOL, NATS_PROTOCOL + 1, 2.5, -1, -0, NaN, Infinity, 2 ** 53, MAX_REPEAT, MAX_REPEAT + 1, "", "x", "1", "f".repeat(64), "f".repeat(63), token, `${token}=`, token.slice(1),
  traceparent, `${traceparent}\n`, traceparent.toUpperCase(), true, false, null, undefined, [], {}, ["a"],
];

/** A small deterministic generator, so a failure can be replayed. */
function mutate(random: () => number): unknown {
  const m: Record<string, unknown> = random() < 0.3 ? { ...good, traceparent } : { ...good };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const edits = Math.floor(random() * 3);
  for (let i = 0; i < edits; i++) {
    const r = random();
    if (r < 0.7) m[pick([...Object.keys(good), "traceparent", "extra", "code", "__proto__"])] = pick(VALUES);
    else if (r < 0.9) delete m[pick([...Object.keys(good), "traceparent"])];
    else return pick([null, 3, "message", [good], Object.assign(Object.create(null) as object, good)]);
  }
  return m;
}

describe("plainlyValidCaseMessage", () => {
  test("a coordinator's message, traced or not, is plainly valid; another version is not", () => {
    assert.ok(plainlyValidCaseMessage(good, NATS_PROTOCOL));
    assert.ok(plainlyValidCaseMessage({ ...good, traceparent }, NATS_PROTOCOL));
    assert.ok(plainlyValidCaseMessage(JSON.parse(JSON.stringify({ ...good, trial: MAX_REPEAT })), NATS_PROTOCOL));
    assert.equal(plainlyValidCaseMessage(good, NATS_PROTOCOL + 1), false);
  });

  test("what it leaves to the schema: a missing trial (the schema fills it in), extra keys, a key from JSON's __proto__", () => {
    const { trial: _trial, ...untried } = good;
    assert.equal(plainlyValidCaseMessage(untried, NATS_PROTOCOL), false);
    assert.equal(CaseMessageSchema.safeParse(untried).data?.trial, 1, "the schema accepts it, with trial 1");
    assert.equal(plainlyValidCaseMessage({ ...good, code: "x" }, NATS_PROTOCOL), false);
    assert.equal(plainlyValidCaseMessage(JSON.parse(`{"__proto__": 1, ${JSON.stringify(good).slice(1)}`), NATS_PROTOCOL), false);
  });

  test("over 20,000 generated messages, what the plain check accepts the schema accepts, unchanged", () => {
    assertPlainCheckAgrees({ count: 20_000, generate: mutate, plain: (m) => plainlyValidCaseMessage(m, NATS_PROTOCOL), schema: CaseMessageSchema, minPlain: 1000, minSchemaOnly: 0 });
  });
});
