// Garbage on the wire of a live run: malformed JSON, a schema violation, another protocol version,
// an index out of range, a name that does not match its index, an oversized case message, and a
// malformed result. Each is disposed of with one clear log line; nothing is redelivered forever;
// the run ends. None of it spoils a real case: the worker answers a bad case message only when it
// carries a delivery token, and the coordinator drops an answer whose token is not the case's,
// so every case keeps the result of its real run.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, outputOf, queuedCaseMessages, readJson, waitFor } from "./harness/processes.ts";
import { caseSubject } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL } from "../shared/wire/nats.ts";

const server = useNatsServer();

describe("bad input on the wire", () => {
  test("every kind of garbage is disposed of with a clear line, spoils no real case, and the run ends", async () => {
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
    // A token of the right shape that is no case's: the worker answers with it, the coordinator drops the answer.
    const token = "t".repeat(43);
    const publish = (subject: string, body: string | Uint8Array) => js.publish(subject, body);
    await publish(caseSubject(runId, 1), "{not json");
    await publish(caseSubject(runId, 2), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 2 })); // fails the schema
    await publish(caseSubject(runId, 3), JSON.stringify({ v: NATS_PROTOCOL + 1, runId, index: 3, name: "case_03", fingerprint, token }));
    await publish(caseSubject(runId, 99), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 99, name: "case_99", fingerprint, token }));
    await publish(caseSubject(runId, 4), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 4, name: "not_case_04", fingerprint, token }));
    await publish(caseSubject(runId, 5), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 5, name: "case_05", fingerprint, token, padding: "x".repeat(200_000) }));
    await publish(`evalfleet.${runId}.results.6`, "{also not json");
    await nc.close();

    const dropped = () => coordinator.stderr.split("\n").filter((l) => /dropping result messages that do not prove their delivery/.test(l));
    await waitFor(() => (worker.stderr.match(/disposing of a bad case message/g) ?? []).length >= 6 && dropped().length >= 2, () => `6 disposal lines and 2 drops; logs so far:\n${worker.stderr}${coordinator.stderr}`);
    writeFileSync(join(dir, "release-all"), "");
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, c.stdout + c.stderr);

    const cases = readJson(report).cases as Array<{ name: string; passed: boolean; error: string | null; worker: string }>;
    assert.deepEqual(
      cases.map((x) => [x.name, x.passed, x.error, x.worker]),
      ["case_00", "case_01", "case_02", "case_03", "case_04", "case_05", "case_06", "case_07"].map((n) => [n, true, null, worker.label]),
      "every case has the result of its real run",
    );

    // One line per bad case message, naming what was wrong, in the worker's log.
    const lines = worker.stderr.split("\n").filter((l) => /disposing of a bad case message/.test(l));
    assert.equal(lines.length, 6, lines.join("\n"));
    for (const why of [
      /malformed case message: not valid JSON/,
      /malformed case message: name: /,
      new RegExp(`case message speaks protocol version ${NATS_PROTOCOL + 1}; this worker speaks ${NATS_PROTOCOL}`),
      /case index 99 is not in the run's manifest/,
      /case message does not match the run's manifest \(run 'wire-1', index 4, name 'not_case_04'\)/,
      /case message of \d+ bytes exceeds the 65536-byte limit/,
    ]) assert.ok(lines.some((l) => why.test(l)), `${why}:\n${lines.join("\n")}`);
    // The coordinator: the garbage result and the worker's answers to the forged tokens, once per reason.
    assert.deepEqual(dropped().map((l) => JSON.parse(l).msg.replace(/^.*\): /, "").replace(/^case \d+: /, "")).sort(), ["it carries no delivery token", "its delivery token is not the case's"]);
    assert.equal(await queuedCaseMessages(server.url, runId), 0, "nothing left to be redelivered");
    assert.equal((await exitOf(worker, "the worker", 30_000)).code, 0, "the worker served to the end");
    // `status` reads the same stream, garbage included: it counts what it can read and does not fail.
    const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json", "--nats", server.url]), "status");
    assert.equal(s.code, 0, outputOf(s));
    const status = JSON.parse(s.stdout);
    assert.deepEqual([status.selected, status.done, status.passed], [8, 8, 8], "status counts only results that prove their delivery");
  });
});
