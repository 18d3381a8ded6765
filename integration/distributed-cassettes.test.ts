// Record and replay across a fleet (issue 31): `coordinator run --record nats` keeps each case's
// cassette in the fleet's object store bucket (EVALFLEET_CASSETTES), so `--replay nats` answers
// every case on whichever worker takes it, with no request reaching the service. Real processes:
// a private nats-server, three workers, a weather service on a free loopback port that counts
// what reaches it.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson, waitFor, type Proc } from "./harness/processes.ts";
import { CASSETTE_BUCKET } from "../shared/broker/subjects.ts";
import { cassetteFolder } from "../shared/cassette/cassette.ts";

const SUITE = fixture("fleet-cassette-suite.ts");
const CITIES = ["paris", "london", "rome", "oslo", "lima", "kyiv"];

interface CaseJSON {
  name: string;
  passed: boolean;
  output: string | null;
  error: string | null;
  error_kind: string | null;
  worker: string | null;
}

describe("record and replay across the fleet (--record nats, --replay nats)", () => {
  const nats = useNatsServer();
  let service: Server;
  let base = "";
  let hits = 0;
  before(async () => {
    service = createServer((req, res) => {
      hits++;
      const city = new URL(req.url!, "http://x").searchParams.get("city") ?? "?";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ tempC: city.length + 0.4, served: hits }));
    });
    await new Promise<void>((r) => service.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => service.close(() => r())));

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ NATS_URL: nats.url, EVALFLEET_TEST_HTTP: base, ...extra });
  /** A coordinator and three workers of one run; resolves with the coordinator's exit and its JSON report. */
  async function fleetRun(runId: string, flags: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; report: { cases: CaseJSON[]; summary: { passed: number } }; out: string }> {
    const dir = mkdtempSync(join(tmpdir(), "evalfleet-fleet-cassettes-"));
    const json = join(dir, "report.json");
    const held = env({ ...extra, EVALFLEET_TEST_HOLD_DIR: dir });
    const c = evalfleet(["coordinator", "run", SUITE, "--run-id", runId, ...flags, "--json-output", json], held);
    // One slot each, and the cases held until all three serve the run: six cases over three workers.
    const workers: Proc[] = [0, 1, 2].map(() => evalfleet(["worker", SUITE, "--run", runId, "--threads", "1", "--concurrency", "1"], held));
    // Each worker holds the one case it took: three pids have started one.
    const holders = (): Set<string> => new Set(readdirSync(dir).filter((f) => f.startsWith("started.")).map((f) => f.split(".").at(-1)!));
    await waitFor(() => holders().size === 3, () => `a case held on each of the three workers:\n${workers.map((w) => w.stderr).join("\n")}`, 120_000);
    writeFileSync(join(dir, "release"), "");
    const r = await exitOf(c, "the coordinator", 120_000);
    for (const w of workers) assert.equal((await exitOf(w, "a worker", 60_000)).code, 0, outputOf(await exitOf(w, "a worker")));
    return { code: r.code, report: readJson(json), out: outputOf(r) };
  }

  test("--replay nats before anything was recorded on this broker: exit 2, naming the bucket; a folder in a distributed run is refused", async () => {
    const none = await exitOf(evalfleet(["coordinator", "run", SUITE, "--run-id", "replay-nothing", "--replay", "nats"], env()), "the coordinator", 60_000);
    assert.equal(none.code, 2, outputOf(none));
    assert.match(none.stderr, /--replay nats: this broker has no EVALFLEET_CASSETTES bucket, so no cassette was recorded on it: record first \(coordinator run --record nats\)/);
    const folder = await exitOf(evalfleet(["coordinator", "run", SUITE, "--record", "./tapes"], env()), "the coordinator", 60_000);
    assert.equal(folder.code, 2, outputOf(folder));
    assert.match(folder.stderr, /--record must be nats in a distributed run \(the fleet's EVALFLEET_CASSETTES bucket, which every worker reaches\), got '\.\/tapes'/);
    const local = await exitOf(evalfleet(["run", SUITE, "--record", "nats"], env()), "evalfleet run", 60_000);
    assert.equal(local.code, 2, outputOf(local));
    assert.match(local.stderr, /--record nats keeps cassettes in the fleet's bucket, which needs a distributed run \(evalfleet coordinator run\); for a folder named nats write \.\/nats/);
  });

  test("recorded by three workers, replayed by three others: the same outputs, nothing sent; a changed request fails clearly", async () => {
    hits = 0;
    const recorded = await fleetRun("tapes-record", ["--record", "nats"]);
    assert.equal(recorded.code, 0, recorded.out);
    assert.equal(hits, CITIES.length, "recording sent every case's request");
    assert.deepEqual(recorded.report.cases.map((x) => [x.name, x.passed]), CITIES.map((n) => [n, true]));
    assert.equal(new Set(recorded.report.cases.map((x) => x.worker)).size, 3, "the cases were recorded on all three workers");

    // One object per case, in the suite's folder of the bucket, each naming its case.
    const nc = await connect({ servers: nats.url });
    try {
      const os = await new Objm(jetstream(nc)).open(CASSETTE_BUCKET);
      const folder = cassetteFolder("fleet-cassettes");
      const names: string[] = [];
      for (const info of await os.list()) names.push(info.name);
      assert.equal(names.filter((n) => n.startsWith(`${folder}/`)).length, CITIES.length, names.join(", "));
      const one = JSON.parse(new TextDecoder().decode((await os.getBlob(names.find((n) => n.includes("/paris-"))!))!));
      assert.equal(one.case, "paris");
      assert.equal(one.exchanges.length, 1);
      assert.deepEqual(one.tools.map((t: { name: string }) => t.name), ["round"]);
    } finally {
      await nc.close();
    }

    hits = 0;
    const replayed = await fleetRun("tapes-replay", ["--replay", "nats"]);
    assert.equal(replayed.code, 0, replayed.out);
    assert.equal(hits, 0, "no request reached the service");
    assert.deepEqual(replayed.report.cases.map((x) => [x.name, x.output]), recorded.report.cases.map((x) => [x.name, x.output]), "the recorded answers, so the same outputs");
    const replayers = new Set(replayed.report.cases.map((x) => x.worker));
    assert.equal(replayers.size, 3, "the cases were replayed on all three workers");
    const recorders = new Map(recorded.report.cases.map((x) => [x.name, x.worker]));
    assert.ok(replayed.report.cases.some((x) => x.worker !== recorders.get(x.name)), "a case replayed on a worker other than the one that recorded it");

    const changed = await fleetRun("tapes-changed", ["--replay", "nats"], { EVALFLEET_TEST_CITY_SUFFIX: "-x" });
    assert.equal(changed.code, 1, changed.out);
    assert.equal(hits, 0, "a miss sends nothing either");
    for (const x of changed.report.cases) {
      assert.equal(x.passed, false);
      assert.equal(x.error_kind, "check", `${x.name}: ${x.error}`);
      assert.match(String(x.error), new RegExp(`replay: no recorded answer for GET ${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/weather\\?city=\\w+-x \\(case ${x.name}, request 1\\)`));
    }
  });
});
