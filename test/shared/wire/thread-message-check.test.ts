// The plain check of a case's phase and reply messages (shared/wire/thread-message-check.ts)
// against ThreadMessageSchema: over generated messages, whatever the plain check accepts the
// schema accepts unchanged; a trivial case's messages are accepted plainly; the rest go to the schema.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { assertPlainCheckAgrees } from "../../support/plain-check.ts";
import { plainlyValidThreadMessage } from "../../../shared/wire/thread-message-check.ts";
import { ThreadMessageSchema } from "../../../shared/wire/thread.ts";
import { CaseResult } from "../../../shared/result/result.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";

function trivialResult(): Record<string, unknown> {
  const r = new CaseResult({ name: "c1", index: 1, tags: ["smoke"] });
  r.output = "1";
  r.toolsCalled = ["echo"];
  r.response = { content: "1", tools: [{ toolName: "echo" }] } as never;
  r.score = { value: 1, passed: true, reason: null, detail: null } as never;
  r.sessionId = "5f0c";
  r.durationSeconds = 0.001;
  r.attempts = 1;
  r.worker = "thread-3";
  // What every run of a case records (shared/runtime): a reply without them is not the common one.
  r.agentId = "trivial";
  r.runStatus = "completed";
  r.phaseSeconds = { setup: 0, run: 0.001, checks: 0, teardown: 0 };
  return structuredClone(resultToWire(r)) as unknown as Record<string, unknown>;
}
const phase = { kind: "phase", taskId: 7, phase: "run", threadId: 3, sessionId: "5f0c", deadline: 1_800_000_000_000 };
const reply = (result: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ kind: "reply", taskId: 7, reply: { kind: "result", result, ...extra } });

const VALUES: unknown[] = [0, 1, 0.5, 2, -1, 1.5, NaN, Infinity, 2 ** 53, "", "x", "agent", "timeout", "bogus", true, false, null, undefined, [], ["a"], [1], {}, { a: 1 }, { hits: 1, misses: 0 }];

function generated(random: () => number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const r = random();
  if (r < 0.2) {
    const m: Record<string, unknown> = { ...phase };
    for (let i = 0; i < 1 + Math.floor(random() * 2); i++) {
      const k = pick([...Object.keys(phase), "extra"]);
      if (random() < 0.15) delete m[k];
      else m[k] = k === "phase" ? pick(["setup", "run", "teardown", "warmup", 1]) : pick(VALUES);
    }
    return m;
  }
  const result = trivialResult();
  for (let i = 0; i < 1 + Math.floor(random() * 3); i++) {
    const k = pick([...Object.keys(result), "extra"]);
    const x = random();
    if (x < 0.1) delete result[k];
    else if (x < 0.3 && k === "phaseSeconds") {
      const p: Record<string, unknown> = { setup: 0, run: 0.25, checks: 0, teardown: 0 };
      p[pick(["setup", "run", "checks", "teardown", "extra"])] = pick(VALUES);
      if (random() < 0.2) delete p[pick(["setup", "run", "checks", "teardown"])];
      result.phaseSeconds = random() < 0.1 ? pick([null, undefined, [], "p"]) : p;
    } else if (x < 0.3 && k === "score") result.score = { value: pick([0, 0.5, 1, 2, -1, NaN]), passed: pick([true, false, 1]), ...(random() < 0.5 ? { reason: pick([null, "r", 3, undefined]) } : {}), ...(random() < 0.5 ? { detail: pick([null, {}, { a: [1] }, [], "d", undefined]) } : {}), ...(random() < 0.1 ? { extra: 1 } : {}) };
    else result[k] = pick(VALUES);
  }
  const y = random();
  if (y < 0.05) return reply(result, { warnings: ["w"] });
  if (y < 0.1) return { kind: "reply", taskId: pick([7, -1, 1.5, "7"]), reply: { kind: pick(["result", "error"]), result } };
  return reply(result);
}

describe("plainlyValidThreadMessage", () => {
  test("a trivial case's phase and reply are plainly valid, and the schema agrees", () => {
    for (const m of [phase, { kind: "phase", taskId: 7, phase: "setup", threadId: 3, deadline: 5 }, reply(trivialResult())]) {
      assert.ok(plainlyValidThreadMessage(m), JSON.stringify(m));
      assert.ok(ThreadMessageSchema.safeParse(m).success);
    }
    assert.equal(plainlyValidThreadMessage({ kind: "commit", taskId: 7, commit: {} }), false, "other kinds go to the schema");
    assert.equal(plainlyValidThreadMessage(reply({ ...trivialResult(), usage: { tokens: 1 } })), false, "a feature's field goes to the schema");
  });

  test("over 5,000 generated messages, what the plain check accepts the schema accepts, unchanged", () => {
    assertPlainCheckAgrees({ count: 5000, generate: generated, plain: plainlyValidThreadMessage, schema: ThreadMessageSchema, minPlain: 300, minSchemaOnly: 50 });
  });
});
