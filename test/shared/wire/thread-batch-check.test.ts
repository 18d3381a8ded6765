// The plain check of a thread batch (shared/wire/thread-batch-check.ts) against its schema
// (ThreadBatchSchema): over generated batches, whatever the plain check accepts the schema accepts
// unchanged; the common batch is accepted plainly; everything else goes to the schema.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { assertPlainCheckAgrees } from "../../support/plain-check.ts";
import { plainlyValidBatch } from "../../../shared/wire/thread-batch-check.ts";
import { THREAD_PROTOCOL, ThreadBatchSchema, parseThreadBatch } from "../../../shared/wire/thread.ts";

const goodCase = { taskId: 0, index: 0, name: "a", defaultTimeout: 120, setupTimeout: 60, teardownTimeout: 60, maxOutputBytes: 262144, attempt: 1, forwardEvents: false };
const goodBatch = { protocol: THREAD_PROTOCOL, suitePath: "/suite.ts", fingerprint: "f".repeat(64), logLevel: "warn", keepResponses: true, cases: [goodCase] };

/** Values to try in a field: valid ones and wrong ones of every kind. */
const VALUES: unknown[] = [0, 1, 2.5, -1, -0, NaN, Infinity, 2 ** 53, "", "x", "f".repeat(64), true, false, null, undefined, [], {}, ["a"]];

/** A small deterministic generator, so a failure can be replayed. */
function mutate(random: () => number): unknown {
  const batch: Record<string, unknown> = structuredClone(goodBatch);
  const cases = (batch.cases as Array<Record<string, unknown>>).slice();
  batch.cases = cases;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const edits = 1 + Math.floor(random() * 3);
  for (let i = 0; i < edits; i++) {
    const r = random();
    if (r < 0.35) batch[pick([...Object.keys(goodBatch), "suiteModule", "extra"])] = pick(VALUES);
    else if (r < 0.7) {
      const c = { ...cases[0]! };
      c[pick([...Object.keys(goodCase), "cache", "traceparent", "repeat", "extra"])] = pick(VALUES);
      cases.push(c);
    } else if (r < 0.85) batch.suiteModule = { url: pick(["file:///s.ts", "", 3]), loader: pick(["node", "bundle", "tsx", "deno", undefined]), ...(random() < 0.5 ? { reason: pick(["why", 1, undefined]) } : {}), ...(random() < 0.2 ? { extra: 1 } : {}) };
    else if (r < 0.92) delete batch[pick(Object.keys(goodBatch))];
    else batch.cases = random() < 0.5 ? [] : "cases";
  }
  return batch;
}

describe("plainlyValidBatch", () => {
  test("the common batch, with or without its suite module, is plainly valid", () => {
    assert.ok(plainlyValidBatch(goodBatch, THREAD_PROTOCOL));
    assert.ok(plainlyValidBatch({ ...goodBatch, suiteModule: { url: "file:///s.ts", loader: "tsx", reason: "bundling is off" } }, THREAD_PROTOCOL));
    assert.ok(plainlyValidBatch({ ...goodBatch, cases: [goodCase, { ...goodCase, taskId: 1, index: 1, name: "b" }] }, THREAD_PROTOCOL));
    assert.equal(plainlyValidBatch(goodBatch, THREAD_PROTOCOL + 1), false, "another protocol");
  });

  test("over 5,000 generated batches, what the plain check accepts the schema accepts, unchanged", () => {
    assertPlainCheckAgrees({ count: 5000, generate: mutate, plain: (b) => plainlyValidBatch(b, THREAD_PROTOCOL), schema: ThreadBatchSchema, minPlain: 100, minSchemaOnly: 10 });
  });

  test("parseThreadBatch words an error through the schema as before", () => {
    const parsed = parseThreadBatch({ ...goodBatch, cases: [{ ...goodCase, attempt: 0 }] });
    assert.equal(parsed.ok, false);
    assert.match(!parsed.ok ? parsed.why : "", /^invalid thread task: cases\.0\.attempt: /);
  });
});
