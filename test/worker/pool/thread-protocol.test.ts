// The thread protocol on a real piscina thread: a batch of another thread protocol version is
// refused naming both versions, as plain data (code, retryable), and the thread lives on.
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { Piscina } from "piscina";
import { loadSuite } from "../../../shared/suite/suite.ts";
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

test("a thread's first parse words its errors in English (zod mini, before any classic schema set the locale)", () => {
  // A fresh process: the first schema it builds is the batch's.
  const script = `
    import { parseThreadBatch } from ${JSON.stringify(new URL("../../../shared/wire/thread.ts", import.meta.url).href)};
    const c = { taskId: "x", index: 0, name: "c", defaultTimeout: 1, setupTimeout: 1, teardownTimeout: 1, maxOutputBytes: 10, attempt: 0, forwardEvents: false };
    console.log(JSON.stringify(parseThreadBatch({ protocol: ${THREAD_PROTOCOL}, suitePath: "/s", fingerprint: "f", logLevel: "info", keepResponses: false, cases: [c] })));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    ok: false,
    why: "invalid thread task: fingerprint: Too small: expected string to have exactly 64 characters; cases.0.taskId: Invalid input: expected number, received string; cases.0.attempt: Too small: expected number to be >0",
  });
});
