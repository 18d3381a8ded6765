// Truthful records across a coordinator's death, with real processes on a private nats-server:
// `coordinator status` counts add up while cases are in flight (a case taken off the queue whose
// result is not stored yet is `reporting`), a coordinator whose heartbeat stopped is shown as
// lost, `coordinator resume RUN_ID` without a suite finds it where the manifest says (and says
// clearly when it is not there), and the resumed run reports the whole run's start and duration
// in the summary, the JSON and JUnit reports and the results store.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, markers, outputOf, readJson, root, waitFor } from "./harness/processes.ts";
import { CASES_STREAM, RUNS_BUCKET, RUN_KEYS_BUCKET, resultSubject, runConsumer, runKeys } from "../shared/broker/subjects.ts";
import { NATS_PROTOCOL, RunKeyRecordSchema, RunManifestSchema } from "../shared/wire/nats.ts";
import { RunTokens } from "../shared/wire/case-token.ts";
import { COORDINATOR_LOST_SECONDS } from "../coordinator/distributed/coordinator-heartbeat.ts";
import { CaseResult } from "../shared/result/result.ts";
import { resultToWire } from "../worker/pool/result-wire.ts";
import { ResultsStore } from "../coordinator/history/store/store.ts";

const FAULTS = fixture("fleet-faults-suite.ts");

describe("a run whose coordinator died (real processes)", () => {
  const nats = useNatsServer();

  test("status adds up in flight and shows the coordinator lost; resume without a suite finishes it, reporting the whole run's start and duration", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-resume-records-"));
    const runId = "records-1";
    const env = { NATS_URL: nats.url, EVALFLEET_TEST_DIR: dir };
    const db = `sqlite:${join(dir, "results.db")}`;
    const files = { json: join(dir, "report.json"), junit: join(dir, "junit.xml") };
    const status = async (extra: string[] = ["--json"]) => {
      const r = await exitOf(evalfleet(["coordinator", "status", runId, ...extra], env), "coordinator status");
      assert.equal(r.code, 0, outputOf(r));
      return extra.includes("--json") ? JSON.parse(r.stdout) : r.stdout;
    };
    const addsUp = (s: Record<string, number>): void =>
      assert.equal(s.done! + s.reporting! + s.running! + s.queued! + s.noResult!, s.selected, `the buckets add up: ${JSON.stringify(s)}`);

    const worker = evalfleet(["worker", FAULTS, "--run", runId, "--threads", "1", "--concurrency", "2", "--log-level", "warn"], { ...env, EVALFLEET_HOLD: "1" });
    const started = Date.now();
    const first = evalfleet(["coordinator", "run", FAULTS, "--run-id", runId, "--db", db], env);
    await waitFor(() => markers(dir, "started").length === 2, "two cases in flight");

    // A case taken off the queue and acknowledged, its result not stored yet: it is reporting.
    const nc = await connect({ servers: nats.url });
    const js = jetstream(nc);
    const consumer = await js.consumers.get(CASES_STREAM, runConsumer(runId));
    await waitFor(async () => {
      const s = await status();
      return s.queued === 6;
    }, "six cases queued");
    // Take the next queued case, case_02, as a worker would, and acknowledge it without a result yet.
    let taken: { index: number; token: string } | null = null;
    for await (const m of await consumer.fetch({ max_messages: 1, expires: 5000 })) {
      taken = m.json<{ index: number; token: string }>();
      m.ack();
    }
    assert.equal(taken?.index, 2);
    const inFlight = await status();
    addsUp(inFlight);
    assert.deepEqual(
      [inFlight.done, inFlight.reporting, inFlight.running, inFlight.queued, inFlight.noResult, inFlight.coordinatorLost],
      [0, 1, 2, 5, 0, false],
      "case_02 left the queue without a stored result: reporting",
    );
    assert.ok(Date.now() - Date.parse(inFlight.heartbeatAt) < COORDINATOR_LOST_SECONDS * 1000);

    // Its result arrives (from the worker present in the run, with the case's token): done.
    const kvKeys = await new Kvm(js).open(RUN_KEYS_BUCKET);
    const tokens = new RunTokens(Buffer.from(RunKeyRecordSchema.parse((await kvKeys.get(runId))!.json()).key, "base64"), runId);
    assert.equal(taken!.token, tokens.token(2));
    const r2 = new CaseResult({ name: "case_02", index: 2, tags: ["first"], agentId: "steered", output: "done case_02", worker: worker.label });
    r2.score = { value: 1, passed: true, reason: null, detail: null };
    await js.publish(resultSubject(runId, 2, tokens.seal(2)), JSON.stringify({ v: NATS_PROTOCOL, runId, index: 2, name: "case_02", workerId: worker.label, token: taken!.token, result: resultToWire(r2, { response: false }) }));
    await waitFor(() => /^PASS {2}case_02/m.test(first.stdout), () => `case_02's result at the coordinator: ${first.stdout}`);

    // Two cases finish; every status read while they do adds up.
    for (const m of markers(dir, "started")) writeFileSync(join(dir, `release.${m.name}`), "");
    for (let i = 0; i < 4; i++) addsUp(await status());
    await waitFor(() => (first.stdout.match(/^PASS /gm) ?? []).length === 3, () => `three results at the first coordinator: ${first.stdout}`);
    await waitFor(() => markers(dir, "started").length === 4, "the next two cases in flight");

    // The coordinator dies: after COORDINATOR_LOST_SECONDS without a heartbeat, status says so.
    first.child.kill("SIGKILL");
    const killedAt = Date.now();
    assert.equal((await exitOf(first, "the killed coordinator")).signal, "SIGKILL");
    assert.equal((await status()).coordinatorLost, false, "not at once: a heartbeat may be late");
    await waitFor(async () => (await status()).coordinatorLost === true, "status to say the coordinator is lost", (COORDINATOR_LOST_SECONDS + 20) * 1000);
    assert.ok(Date.now() - killedAt >= (COORDINATOR_LOST_SECONDS - 5) * 1000, "not before the bound");
    const lost = await status();
    addsUp(lost);
    assert.deepEqual([lost.phase, lost.done, lost.running, lost.queued], ["running", 3, 2, 3]);
    assert.match(await status([]), new RegExp(`^run ${runId}: running, coordinator lost: no heartbeat for \\d+s \\(evalfleet coordinator resume ${runId} finishes the run\\)$`, "m"));

    // `resume RUN_ID` without a suite: the manifest's path, relative to the folder the run was started in.
    const manifest = RunManifestSchema.parse((await (await new Kvm(js).open(RUNS_BUCKET)).get(runKeys.manifest(runId)))!.json());
    assert.equal(manifest.suite.path, join("test", "fixtures", "fleet-faults-suite.ts"));
    const elsewhere = await exitOf(evalfleet(["coordinator", "resume", runId], env, { cwd: dir }), "resume from another folder");
    assert.equal(elsewhere.code, 2, outputOf(elsewhere));
    assert.equal(
      elsewhere.stderr,
      `error: run ${runId}'s manifest records its suite as ${manifest.suite.path}, which is not at ${join(dir, manifest.suite.path)}: run the command from the folder the run was started in, or pass the suite: evalfleet coordinator resume ${runId} SUITE\n`,
    );
    const second = evalfleet(["coordinator", "resume", runId, "--db", db, "--json-output", files.json, "--junit", files.junit], env);
    await waitFor(() => second.stdout.includes(`run id: ${runId}`), () => `the resumed coordinator to start: ${second.stdout}${second.stderr}`);
    await waitFor(async () => (await status()).coordinatorLost === false, "the heartbeat again");
    writeFileSync(join(dir, "release-all"), "");
    const r = await exitOf(second, "the resumed coordinator", 60_000);
    const ended = Date.now();
    assert.equal(r.code, 0, outputOf(r));
    assert.equal((await exitOf(worker, "the worker")).code, 0);
    await nc.close();

    // The whole run's start and duration, everywhere.
    const report = readJson(files.json);
    const whole = (ended - started) / 1000;
    const duration = report.summary.duration_seconds as number;
    assert.ok(duration >= (ended - Date.parse(manifest.createdAt)) / 1000 - 2 && duration <= whole + 1, `the whole run's ${whole.toFixed(1)}s, not the resume's: ${duration}`);
    assert.ok(duration > COORDINATOR_LOST_SECONDS, "longer than the wait for the lost coordinator");
    assert.match(r.stdout, new RegExp(`^8/8 passed in ${duration}s$`, "m"));
    const junit = readFileSync(files.junit, "utf8");
    assert.match(junit, new RegExp(`<testsuite name="fleet-faults" tests="8" failures="0" errors="0" skipped="0" time="${duration.toFixed(3)}" timestamp="${manifest.createdAt.replace(/\.\d+Z$/, "")}"`));
    const store = await ResultsStore.open(db);
    const recorded = await store.findRun(runId);
    await store.close();
    assert.deepEqual([recorded.status, recorded.durationSeconds, recorded.total, recorded.passed], ["passed", duration, 8, 8]);
    assert.ok(Math.abs(Date.parse(recorded.startedAt) - Date.parse(manifest.createdAt)) < 2_000, `the store's start is the run's: ${recorded.startedAt} vs ${manifest.createdAt}`);
  });

  test("resume without a suite refuses a suite whose cases changed since the run started, saying so", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-resume-changed-"));
    const runId = "changed-1";
    const env = { NATS_URL: nats.url };
    const suite = (input: string): string =>
      [
        `import { Case, defineSuite } from ${JSON.stringify(pathToFileURL(join(root, "index.ts")).href)};`,
        `const echo = { id: "echo", run: async (input: unknown) => ({ content: String(input) }) };`,
        `export default defineSuite({ name: "changing", cases: [new Case({ name: "one", agent: echo, input: ${JSON.stringify(input)}, expectedOutput: "x", outputScoring: "contains" })] });`,
      ].join("\n");
    writeFileSync(join(dir, "suite.mts"), suite("x"));
    // No worker: the run stays queued; its coordinator dies with the manifest published.
    const first = evalfleet(["coordinator", "run", "suite.mts", "--run-id", runId], env, { cwd: dir });
    // Published once `status` finds the run (the "run id" line comes before the manifest is written).
    await waitFor(async () => (await exitOf(evalfleet(["coordinator", "status", runId, "--json"], env), "coordinator status")).code === 0, () => `the coordinator to publish the run: ${first.stdout}${first.stderr}`);
    first.child.kill("SIGKILL");
    await exitOf(first, "the killed coordinator");

    writeFileSync(join(dir, "suite.mts"), suite("y"));
    const r = await exitOf(evalfleet(["coordinator", "resume", runId], env, { cwd: dir }), "resume with a changed suite");
    assert.equal(r.code, 2, outputOf(r));
    assert.match(
      r.stderr,
      new RegExp(`^error: run ${runId} was started with suite fingerprint [0-9a-f]{12}; .*suite\\.mts, the suite its manifest records \\(suite\\.mts\\), now has [0-9a-f]{12}: the suite changed since; pass the suite the run was started with: evalfleet coordinator resume ${runId} SUITE\\n$`),
    );
  });
});

