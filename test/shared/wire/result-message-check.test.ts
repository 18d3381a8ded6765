// The plain check of a result message (shared/wire/result-message-check.ts) against
// ResultMessageSchema: over generated messages, whatever the plain check accepts the schema
// accepts unchanged; the message a worker publishes for a trivial case is accepted plainly; the
// rest go to the schema.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { assertPlainCheckAgrees } from "../../support/plain-check.ts";
import { plainResultMessage, plainlyValidResultMessage } from "../../../shared/wire/result-message-check.ts";
import { NATS_PROTOCOL, ResultMessageSchema } from "../../../shared/wire/nats.ts";
import { RunTokens, newRunKey } from "../../../shared/wire/case-token.ts";
import { CaseResult } from "../../../shared/result/result.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";
import { fitResultForWire } from "../../../shared/wire/fit-result.ts";
import { redactResultData } from "../../../shared/redaction/secrets.ts";

const tokens = new RunTokens(newRunKey(), "run-1");

/** A trivial case's result message as a worker publishes it (worker/result-publisher.ts), through JSON. */
function trivialMessage(): Record<string, unknown> {
  const r = new CaseResult({ name: "c1", index: 1, tags: ["smoke"] });
  r.output = "1";
  r.toolsCalled = ["echo"];
  r.response = { content: "1", tools: [{ toolName: "echo" }] } as never;
  r.score = { value: 1, passed: true, reason: null, detail: null } as never;
  r.sessionId = "5f0c";
  r.durationSeconds = 0.001;
  r.attempts = 1;
  r.worker = "host/12";
  r.phaseSeconds = { setup: 0, run: 0.01, checks: 0, teardown: 0 };
  const result = fitResultForWire(redactResultData(resultToWire(r, { response: false })), 256 * 1024);
  return JSON.parse(JSON.stringify({ v: NATS_PROTOCOL, runId: "run-1", index: 1, trial: 1, name: "c1", workerId: "host/12", token: tokens.token(1), result }));
}

const VALUES: unknown[] = [0, 1, 0.5, 2, -1, 1.5, 1001, 2 ** 53, "", "x", "run-1", "bogus", "a".repeat(43), true, false, null, [], ["a"], [1], {}, { a: 1 }, { hits: 1, misses: 0 }];

function generated(random: () => number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const m = trivialMessage();
  const result = m.result as Record<string, unknown>;
  for (let i = 0; i < Math.floor(random() * 3); i++) {
    const x = random();
    if (x < 0.5) {
      // The envelope.
      const k = pick([...Object.keys(m), "extra"]);
      const y = random();
      if (y < 0.15) delete m[k];
      else if (k === "v") m.v = pick([NATS_PROTOCOL, NATS_PROTOCOL + 1, String(NATS_PROTOCOL)]);
      else if (k === "token") m.token = pick([tokens.token(2), "x".repeat(43), "x".repeat(42), "+".repeat(43), 7]);
      else m[k] = pick(VALUES);
    } else {
      // The result.
      const k = pick([...Object.keys(result), "extra"]);
      const y = random();
      if (y < 0.1) delete result[k];
      else if (y < 0.3 && k === "phaseSeconds") result.phaseSeconds = pick([null, undefined, {}, { setup: 0, run: 1, checks: 0 }, { setup: 0, run: 1, checks: 0, teardown: 0 }, { setup: 0, run: -1, checks: 0, teardown: 0 }, { setup: 0, run: "1", checks: 0, teardown: 0 }, { setup: 0, run: 1, checks: 0, teardown: 0, extra: 1 }]);
      else if (y < 0.3 && k === "score") result.score = { value: pick([0, 0.5, 1, 2, -1]), passed: pick([true, false, 1]), ...(random() < 0.5 ? { reason: pick([null, "r", 3]) } : {}), ...(random() < 0.5 ? { detail: pick([null, {}, { a: [1] }, [], "d"]) } : {}) };
      else result[k] = pick(VALUES);
    }
  }
  return m;
}

describe("plainlyValidResultMessage", () => {
  test("a trivial case's result message is plainly valid, and the schema agrees", () => {
    const m = trivialMessage();
    assert.ok(plainlyValidResultMessage(m), JSON.stringify(m));
    assert.deepEqual(ResultMessageSchema.parse(m), m);
    assert.equal(plainlyValidResultMessage({ ...m, trial: undefined }), false, "a message without its trial goes to the schema (which says trial 1)");
    assert.equal(plainlyValidResultMessage({ ...m, result: { ...(m.result as object), usage: { tokens: 1 } } }), false, "a feature's field goes to the schema");
    assert.equal(plainlyValidResultMessage({ ...m, v: NATS_PROTOCOL + 1 }), false);
  });

  test("over 5,000 generated messages, what the plain check accepts the schema accepts, unchanged", () => {
    assertPlainCheckAgrees({
      count: 5000,
      generate: generated,
      plain: plainlyValidResultMessage,
      schema: ResultMessageSchema,
      minPlain: 500,
      minSchemaOnly: 50,
      onPlain: (m, parsed) => {
        const out = plainResultMessage(structuredClone(m))!;
        assert.deepEqual(out, parsed);
        for (const k of ["tags", "toolsCalled"] as const) assert.equal(Object.isFrozen(out.result[k]), Object.isFrozen(parsed.result[k]), `${k} frozen as the schema freezes it`);
      },
    });
  });
});
