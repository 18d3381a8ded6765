// Messages never carry code. A worker runs only cases it loaded from its own suite file, chosen by
// index and name; whatever else a case message says is not obeyed. The test publishes forged case
// messages into a live run (real coordinator and worker processes, a private nats-server) while
// three of the run's cases are held in flight (one of them, hold_d, untouched by any forgery, keeps
// the run open until the test lets go), and proves from marker files that nothing but the suite's
// own case code ran, once per case, and from the worker's log and the report that every forged
// message was disposed of; the worker's answers to forgeries that name a case carry the forged
// token, so the coordinator drops them and every case keeps the result of its real run.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { startNatsServer, type TestNatsServer } from "./harness/nats-server.ts";
import { evalfleet, exitOf, fixture, killLeftovers, readJson, waitFor } from "./harness/processes.ts";
import { RESULTS_STREAM, RUNS_BUCKET, caseSubject, resultSubjectParts, resultSubjects, runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL, RunManifestSchema } from "../shared/wire/nats.ts";

const SUITE = fixture("security-forged-suite.ts");
const FOREIGN = fixture("security-foreign-suite.ts");

/** One JSON log line of the worker. */
type LogLine = { level: number; msg: string; subject?: string; run?: string };
const logLines = (stderr: string): LogLine[] =>
  stderr
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);

describe("security: case messages never carry code", () => {
  let nats: TestNatsServer;
  let nc: NatsConnection;

  before(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: 0, timeout: 5000 });
  });
  after(async () => {
    await nc?.close().catch(() => undefined);
    await killLeftovers();
    await nats?.stop();
  });

  test("forged case messages in a live run: only the suite's own case code runs, and each forgery is disposed of", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-sec-forged-"));
    const report = join(dir, "report.json");
    const runId = `forged-${process.pid}`;
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir };
    const worker = evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "5", "--log-level", "info"], env);
    const coordinator = evalfleet(["coordinator", "run", SUITE, "--run-id", runId, "--json-output", report], env);

    // The run is live: the held cases are in flight, and free_c has its result.
    const ran = (name: string): string[] => readdirSync(dir).filter((f) => f.startsWith(`ran.${name}.`));
    await waitFor(() => ["hold_a", "hold_b", "hold_d"].every((n) => ran(n).length === 1), () => `the held cases to start:\n${worker.stderr}`);
    const jsm = await jetstreamManager(nc);
    const hasResult = async (index: number): Promise<boolean> => {
      const info = await jsm.streams.info(RESULTS_STREAM, { subjects_filter: resultSubjects(runId) });
      return Object.keys(info.state.subjects ?? {}).some((s) => resultSubjectParts(s)?.index === index);
    };
    await waitFor(() => hasResult(2), "free_c's result");

    // What an attacker who may publish on the broker knows: the run id and the suite fingerprint.
    // Not the cases' delivery tokens: a made-up one of the right shape stands in for them.
    const token = "f".repeat(43);
    const kv = await new Kvm(nc).open(RUNS_BUCKET);
    const manifest = RunManifestSchema.parse((await kv.get(runKeys.manifest(runId)))!.json());
    const fingerprint = manifest.suite.fingerprint;
    const pwned = join(dir, "pwned");
    const code = `require("node:fs").writeFileSync(${JSON.stringify(pwned)}, "")`;
    const forged: Array<{ what: string; index: number; payload: string }> = [
      { what: "a name that does not match the index", index: 0, payload: JSON.stringify({ v: NATS_PROTOCOL, runId, index: 0, name: "free_c", fingerprint, token }) },
      { what: "extra fields: code and another suite's path", index: 1, payload: JSON.stringify({ v: NATS_PROTOCOL, runId, index: 1, name: "hold_b", fingerprint, token, code, suitePath: FOREIGN }) },
      { what: "an index out of range", index: 7, payload: JSON.stringify({ v: NATS_PROTOCOL, runId, index: 7, name: "hold_a", fingerprint, token }) },
      { what: "another suite's path for a case already done", index: 2, payload: JSON.stringify({ v: NATS_PROTOCOL, runId, index: 2, name: "free_c", fingerprint, token, suitePath: FOREIGN }) },
      { what: "not JSON at all, out of range", index: 9, payload: `await import(${JSON.stringify(FOREIGN)}); ${code}` },
    ];
    const js = jetstream(nc);
    for (const f of forged) await js.publish(caseSubject(runId, f.index), f.payload);

    // Every forgery is disposed of with one error line naming its subject, before the held cases end.
    const disposals = (): LogLine[] => logLines(worker.stderr).filter((l) => l.msg.startsWith("disposing of a bad case message"));
    await waitFor(() => disposals().length === forged.length, () => `${forged.length} disposals in the worker's log:\n${worker.stderr}`);
    const bySubject = new Map(disposals().map((l) => [l.subject, l]));
    for (const f of forged) {
      const line = bySubject.get(caseSubject(runId, f.index));
      assert.ok(line, `a disposal line for ${f.what} (${caseSubject(runId, f.index)})`);
      assert.equal(line.level, 50, "logged as an error");
      assert.equal(line.run, runId);
    }
    assert.match(bySubject.get(caseSubject(runId, 0))!.msg, /case message does not match the run's manifest \(run '.+', index 0, name 'free_c'\)/);
    assert.match(bySubject.get(caseSubject(runId, 1))!.msg, /malformed case message: message: Unrecognized keys: "code", "suitePath"/);
    assert.match(bySubject.get(caseSubject(runId, 7))!.msg, /index 7/);
    assert.match(bySubject.get(caseSubject(runId, 2))!.msg, /Unrecognized key: "suitePath"/);
    assert.match(bySubject.get(caseSubject(runId, 9))!.msg, /malformed case message/);
    // The message text is never echoed (a forged payload could be anything, even a terminal escape).
    assert.doesNotMatch(worker.stderr, /security-foreign-suite|writeFileSync/);

    // The worker answered the two forgeries that name a held case with the forged token: dropped.
    await waitFor(() => /dropping result messages that do not prove their delivery .*its delivery token is not the case's/.test(coordinator.stderr), () => `the coordinator to drop the answers:\n${coordinator.stderr}`);
    // Let the held cases finish: their genuine results are the ones that count.
    writeFileSync(join(dir, "open"), "");
    const c = await exitOf(coordinator, "the coordinator", 60_000);
    assert.equal(c.code, 0, `no forgery spoils a case: ${c.stdout}${c.stderr}`);
    assert.match(c.stdout, /^4\/4 passed/m);
    const w = await exitOf(worker, "the worker", 30_000);
    assert.equal(w.code, 0, `the run is over: ${w.stderr}`);

    const cases = readJson(report).cases as Array<{ name: string; index: number; passed: boolean; error: string | null; worker: string }>;
    assert.deepEqual(cases.map((x) => [x.index, x.name]), [[0, "hold_a"], [1, "hold_b"], [2, "free_c"], [3, "hold_d"]], "the report holds the suite's cases, by the manifest's names");
    for (const x of cases) assert.deepEqual([x.name, x.passed, x.error], [x.name, true, null], `${x.name} keeps the result of its real run`);
    for (const x of cases) assert.equal(x.worker, worker.label);

    // Marker files: each of the suite's cases ran exactly once, in the worker, and nothing else ran.
    for (const name of ["hold_a", "hold_b", "free_c", "hold_d"]) assert.deepEqual(ran(name).map((f) => Number(f.split(".")[2])), [worker.pid], `${name} ran once, in the worker`);
    assert.equal(existsSync(pwned), false, "the forged code string never ran");
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.startsWith("foreign-")),
      [],
      "the file a forged message pointed at was never even imported",
    );
    assert.equal(readdirSync(dir).filter((f) => f.startsWith("ran.")).length, 4);
  });
});
