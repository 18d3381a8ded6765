// Garbage on the wire of a live run: malformed JSON, a schema violation, another protocol version,
// an index out of range, a name that does not match its index, an oversized case message, and a
// malformed result. Each is disposed of with one clear log line (and, where the case is known, an
// error result for it); nothing is redelivered forever; the run ends.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, outputOf, queuedCaseMessages, readJson, waitFor } from "./harness/processes.ts";
import { caseSubject, resultSubject } from "../shared/subjects.ts";
import { NATS_PROTOCOL } from "../shared/wire.ts";

const server = useNatsServer();

describe("bad input on the wire", () => {
  test("every kind of garbage is disposed of with a clear line, recorded on its case when the case is known, and the run ends", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-wire-"));
    const report = join(dir, "report.json");
    const runId = "wire-1";
    const env = { EVALFLEET_TEST_DIR: dir, EVALFLEET_HOLD: "1" };
    const worker = evalfleet(["worker", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run", runId, "--concurrency", "16", "--log-level", "warn"], env);
    const coordinator = evalfleet(["coordinator", "run", fixture("fleet-faults-suite.ts"), "--nats", server.url, "--run-id", runId, "--json-output", report, "--log-level", "warn"], env);
    // The real cases are all held by the worker: the garbage is handled before any of them can finish.
    await waitFor(() => markers(dir, "started").length === 8, "the worker to hold the 8 real cases");

    const nc = await connect({ servers: server.url });
    const js = jetstream(nc);
    const fingerprint = "0".repeat(64);
    const publish = (subject: string, body: string | Uint8Array) => js.publish(subject, body);
    await publish(caseSubject(runId, 1), "{not json");
    await publish(caseSubject(runId, 2), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 2 })); // fails the schema
    await publish(caseSubject(runId, 3), JSON.stringify({ v: NATS_PROTOCOL + 1, runId, index: 3, name: "case_03", fingerprint }));
    await publish(caseSubject(runId, 99), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 99, name: "case_99", fingerprint }));
    await publish(caseSubject(runId, 4), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 4, name: "not_case_04", fingerprint }));
    await publish(caseSubject(runId, 5), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 5, name: "case_05", fingerprint, padding: "x".repeat(200_000) }));
    await publish(resultSubject(runId, 6), "{also not json");
    await nc.close();

    const log = () => worker.stderr + coordinator.stderr;
    await waitFor(() => (log().match(/disposing of a bad/g) ?? []).length >= 7, () => `7 disposal lines; logs so far:\n${log()}`);
    writeFileSync(join(dir, "release-all"), "");
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 1, c.stdout + c.stderr);

    const cases = readJson(report).cases as Array<{ name: string; passed: boolean; error: string | null }>;
    assert.deepEqual(cases.map((x) => x.name), ["case_00", "case_01", "case_02", "case_03", "case_04", "case_05", "case_06", "case_07"]);
    const errorOf = (i: number) => cases[i]!.error ?? "";
    assert.match(errorOf(1), /^worker: malformed case message: not valid JSON$/);
    assert.match(errorOf(2), /^worker: malformed case message: name: /);
    assert.equal(errorOf(3), `worker: case message speaks protocol version ${NATS_PROTOCOL + 1}; this worker speaks ${NATS_PROTOCOL}`);
    assert.match(errorOf(4), /^worker: case message does not match the run's manifest \(run 'wire-1', index 4, name 'not_case_04'\)$/);
    assert.match(errorOf(5), /^worker: case message of \d+ bytes exceeds the 65536-byte limit$/);
    assert.match(errorOf(6), /^worker: malformed result message: /);
    for (const i of [0, 7]) assert.equal(cases[i]!.passed, true, `case ${i} is untouched: ${errorOf(i)}`);

    // One line each, naming what was wrong; the out-of-range index only in the worker's log.
    const lines = log().split("\n").filter((l) => /disposing of a bad/.test(l));
    assert.equal(lines.length, 7, lines.join("\n"));
    assert.ok(lines.some((l) => /case index 99 is not in the run's manifest/.test(l)));
    assert.equal(await queuedCaseMessages(server.url, runId), 0, "nothing left to be redelivered");
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0, "the worker served to the end");
    // `status` reads the same stream, garbage included: it counts what it can read and does not fail.
    const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json", "--nats", server.url]), "status");
    assert.equal(s.code, 0, outputOf(s));
    const status = JSON.parse(s.stdout);
    assert.deepEqual([status.selected, status.done], [8, 7], "case 6's subject holds only the garbage");
  });
});
