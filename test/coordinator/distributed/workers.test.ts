// The workers of a run as the coordinator sees them: joins, refusals of any protocol version, and
// the "no compatible worker" reason that repeats what the refusing workers said.
import { test } from "node:test";
import assert from "node:assert/strict";
import { NATS_PROTOCOL } from "../../../shared/wire/nats.ts";
import { WorkerRoster } from "../../../coordinator/distributed/workers.ts";

const fingerprint = "ab".repeat(32);
const presence = (workerId: string, accepted: boolean, reason: string | null, v: number = NATS_PROTOCOL) =>
  JSON.stringify({ v, workerId, host: workerId.split("/")[0], pid: 1, fingerprint, accepted, reason, slots: 4, busy: 0, seenAt: new Date().toISOString() });

function roster() {
  const notes: string[] = [];
  let joined = 0;
  const r = new WorkerRoster({ onNote: (line) => notes.push(line), onJoined: () => joined++ });
  return { r, notes, joined: () => joined };
}

test("a worker that joins is noted once and counted", () => {
  const { r, notes, joined } = roster();
  r.onPresence(presence("a/1", true, null));
  r.onPresence(presence("a/1", true, null));
  assert.deepEqual(notes, ["worker a/1 joined (4 slots)"]);
  assert.deepEqual([r.joined, r.size, joined()], [true, 1, 2]);
});

test("a worker of another protocol version that refused the run: its reason, naming both versions, is noted and repeated when no worker joins", () => {
  const { r, notes } = roster();
  const why = `run r1 speaks protocol version ${NATS_PROTOCOL}; this worker speaks ${NATS_PROTOCOL + 1}`;
  r.onPresence(presence("b/2", false, why, NATS_PROTOCOL + 1));
  r.onPresence(presence("b/2", false, why, NATS_PROTOCOL + 1));
  assert.deepEqual(notes, [`worker b/2 refused the run: ${why}`]);
  assert.equal(r.joined, false);
  assert.equal(r.noCompatibleWorker(60, fingerprint), `no compatible worker joined within 60s (suite fingerprint ${fingerprint.slice(0, 12)}); refused by b/2: ${why}`);
});

test("a presence record of another version that does not refuse is not a join: the coordinator refuses it naming both versions", () => {
  const { r, notes } = roster();
  r.onPresence(presence("c/3", true, null, NATS_PROTOCOL + 1));
  const why = `worker c/3 speaks protocol version ${NATS_PROTOCOL + 1}; this coordinator speaks ${NATS_PROTOCOL}`;
  assert.deepEqual(notes, [`worker c/3 refused the run: ${why}`]);
  assert.equal(r.joined, false);
  assert.match(r.noCompatibleWorker(3, fingerprint), new RegExp(`refused by c/3: ${why}$`));
});

test("another suite's worker (same version) is noted with its own reason; garbage is ignored", () => {
  const { r, notes } = roster();
  r.onPresence(presence("d/4", false, "run r1 is for suite 'x'"));
  r.onPresence("{not json");
  r.onPresence(JSON.stringify({ v: NATS_PROTOCOL + 1 }));
  assert.deepEqual(notes, ["worker d/4 refused the run: run r1 is for suite 'x'"]);
  assert.equal(r.noCompatibleWorker(1, fingerprint), `no compatible worker joined within 1s (suite fingerprint ${fingerprint.slice(0, 12)}); refused by d/4: run r1 is for suite 'x'`);
});
