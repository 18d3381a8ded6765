// The thread protocol on a real piscina thread: a batch of another thread protocol version is
// refused naming both versions, as plain data (code, retryable), and the thread lives on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Piscina } from "piscina";
import { loadSuite } from "../../../shared/suite.ts";
import { THREAD_PROTOCOL, ThreadBatchReplySchema, type ThreadBatch } from "../../../shared/wire/thread.ts";
import { threadExecArgv } from "../../../worker/pool/case-pool.ts";
import { fixture } from "../../support/paths.ts";

test("a thread refuses a batch of another thread protocol version, and still runs one of its own", async () => {
  const suite = await loadSuite(fixture("basic-suite.ts"));
  const piscina = new Piscina({
    filename: new URL("../../../worker/pool/thread-entry.mjs", import.meta.url).href,
    minThreads: 1,
    maxThreads: 1,
    execArgv: threadExecArgv(process.execArgv),
    workerData: { controlChannel: "evalfleet.test.thread-protocol" },
  });
  try {
    const batch: ThreadBatch = {
      protocol: THREAD_PROTOCOL,
      suitePath: suite.path,
      fingerprint: suite.fingerprint,
      logLevel: "silent",
      keepResponses: false,
      cases: [{ taskId: 1, index: 0, name: "alpha", defaultTimeout: 30, setupTimeout: 60, teardownTimeout: 60, maxOutputBytes: 262144, attempt: 1, forwardEvents: false }],
    };
    const refused = ThreadBatchReplySchema.parse(await piscina.run({ batch: { ...batch, protocol: THREAD_PROTOCOL + 1 } }));
    assert.deepEqual(refused, {
      kind: "error",
      error: { code: "WIRE_INVALID", name: "EvalfleetError", message: `thread task speaks thread protocol version ${THREAD_PROTOCOL + 1}; this thread speaks ${THREAD_PROTOCOL}`, retryable: false, details: {} },
    });
    assert.deepEqual(ThreadBatchReplySchema.parse(await piscina.run({ batch })), { kind: "done", replied: 1 });
  } finally {
    await piscina.destroy();
  }
});
