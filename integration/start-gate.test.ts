// The start gate of a run with a budget, both ends against a real nats-server: the coordinator's
// StartGateServer answers from the run's stop reason at the moment it is asked, and a worker's
// StartGate lets a case start only when the coordinator did not refuse it (a coordinator that does
// not answer, or answers in a form it cannot read, lets cases start, said once).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { StartGateServer } from "../coordinator/distributed/start-gate-server.ts";
import { startGateSubject } from "../shared/broker/subjects.ts";
import { createLogger, type Logger } from "../shared/logger.ts";
import { StartGate } from "../worker/start-gate.ts";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";

let server: TestNatsServer;
let nc: NatsConnection;

before(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url, noAsyncTraces: true });
});

after(async () => {
  await nc?.close();
  await server?.stop();
});

/** A logger whose records (as parsed JSON) land in `lines`. */
function capture(): { log: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  return { log: createLogger({ level: "debug", destination: { write: (s: string) => void lines.push(JSON.parse(s)) } }), lines };
}

const never = new AbortController().signal;

test("cases may start until the run stops; then every ask is refused with the reason, and counted", async () => {
  let reason: string | null = null;
  const coordinator = new StartGateServer(nc, "gate-1", () => reason, capture().log).start();
  const worker = new StartGate(nc, "gate-1", "w1", capture().log);
  try {
    assert.deepEqual(await worker.ask(0, never), { start: true });
    assert.deepEqual(await worker.ask(1, never), { start: true });
    reason = "budget exhausted";
    assert.deepEqual(await worker.ask(2, never), { start: false, reason: "budget exhausted" });
    assert.deepEqual(await worker.ask(3, never), { start: false, reason: "budget exhausted" });
    assert.equal(coordinator.refused, 2);
    // Another run's gate is not this one's.
    const other = new StartGate(nc, "gate-1b", "w1", capture().log, 300);
    assert.deepEqual(await other.ask(0, never), { start: true }, "nobody serves gate-1b: the case starts");
  } finally {
    coordinator.close();
  }
});

test("an ask the coordinator cannot read is still answered by the stop reason, and said once in its log", async () => {
  const { log, lines } = capture();
  let reason: string | null = null;
  const coordinator = new StartGateServer(nc, "gate-2", () => reason, log).start();
  try {
    const ask = async (): Promise<unknown> => JSON.parse((await nc.request(startGateSubject("gate-2"), JSON.stringify({ v: 99, index: "x" }), { timeout: 5000 })).string());
    assert.deepEqual(await ask(), { ok: true });
    reason = "run cancelled (deadline)";
    assert.deepEqual(await ask(), { ok: false, reason: "run cancelled (deadline)" });
    const warnings = lines.filter((l) => l.level === 40);
    assert.equal(warnings.length, 1, JSON.stringify(lines));
    assert.match(warnings[0]!.msg, /in a form this coordinator does not know; answering it anyway/);
  } finally {
    coordinator.close();
  }
});

test("no coordinator listening, or one too slow to answer: the case starts, and the worker says so once", async () => {
  const { log, lines } = capture();
  const worker = new StartGate(nc, "gate-3", "w1", log, 300);
  assert.deepEqual(await worker.ask(0, never), { start: true });
  // A listener that never answers: the ask times out, and the case starts.
  const mute = nc.subscribe(startGateSubject("gate-3"), { callback: () => undefined });
  try {
    const t0 = Date.now();
    assert.deepEqual(await worker.ask(1, never), { start: true });
    assert.ok(Date.now() - t0 >= 250, "it waited for the answer up to its timeout");
  } finally {
    mute.unsubscribe();
  }
  const warnings = lines.filter((l) => l.level === 40);
  assert.equal(warnings.length, 1, JSON.stringify(lines));
  assert.match(warnings[0]!.msg, /the run's coordinator did not answer whether a case may start \(.+\); starting cases without asking it/);
});

test("an answer the worker cannot read lets the case start; only a refusal keeps it from starting", async () => {
  const { log, lines } = capture();
  const odd = nc.subscribe(startGateSubject("gate-4"), { callback: (_err, msg) => void msg.respond(JSON.stringify({ ok: "maybe" })) });
  try {
    assert.deepEqual(await new StartGate(nc, "gate-4", "w1", log).ask(0, never), { start: true });
  } finally {
    odd.unsubscribe();
  }
  assert.match(lines.find((l) => l.level === 40)?.msg ?? "", /answered whether a case may start in a form this worker does not know/);
});

test("a cancel while asking rejects with the signal's reason at once, not after the timeout", async () => {
  const mute = nc.subscribe(startGateSubject("gate-5"), { callback: () => undefined });
  try {
    const worker = new StartGate(nc, "gate-5", "w1", capture().log, 30_000);
    const ac = new AbortController();
    const asked = worker.ask(0, ac.signal);
    const t0 = Date.now();
    setTimeout(() => ac.abort(new DOMException("run cancelled", "AbortError")), 100);
    await assert.rejects(asked, (err: unknown) => err instanceof DOMException && err.message === "run cancelled");
    assert.ok(Date.now() - t0 < 10_000);
    await assert.rejects(worker.ask(1, ac.signal), (err: unknown) => err instanceof DOMException, "an aborted signal rejects before asking");
  } finally {
    mute.unsubscribe();
  }
});
