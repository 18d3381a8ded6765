// A run's size is bounded by the broker's limits, not by the manifest: the selection is stored as a
// bitmap (shared/wire/case-selection.ts). This server allows 64 KB per message; a manifest listing the
// 4,000 cases by index and name would need about 160 KB and could not be stored at all.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, fixture, outputOf, readJson } from "./harness/processes.ts";

const SIZED = fixture("sized-suite.ts");
const CASES = 4000;
const name = (i: number): string => `sized_case_${String(i).padStart(6, "0")}`;

describe("runs larger than one message can list", () => {
  const nats = useNatsServer({ config: "max_payload: 65536\n" });

  for (const selection of [{ what: "every case", args: [] as string[], indexes: Array.from({ length: CASES }, (_, i) => i) }, { what: "--tag third", args: ["--tag", "third"], indexes: Array.from({ length: CASES }, (_, i) => i).filter((i) => i % 3 === 0) }]) {
    test(`${CASES} cases on a server with max_payload 64 KB, ${selection.what}: every selected case once, in declaration order; status agrees`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-large-"));
      const runId = `large-${selection.args.length ? "tag" : "all"}`;
      const env = { NATS_URL: nats.url, EVALFLEET_TEST_CASES: String(CASES) };
      const worker = evalfleet(["worker", SIZED, "--run", runId, "--threads", "2", "--concurrency", "64", "--log-level", "warn"], env);
      const report = join(dir, "report.json");
      const coordinator = evalfleet(["coordinator", "run", SIZED, "--run-id", runId, "--json-output", report, ...selection.args], env);
      const c = await exitOf(coordinator, "the coordinator", 120_000);
      assert.equal(c.code, 0, outputOf(c));
      const w = await exitOf(worker, "the worker", 30_000);
      assert.equal(w.code, 0, outputOf(w));
      const json = readJson(report);
      assert.equal(json.summary.total, selection.indexes.length);
      assert.equal(json.summary.passed, selection.indexes.length);
      assert.deepEqual(
        json.cases.map((x: { index: number; name: string }) => [x.index, x.name]),
        selection.indexes.map((i) => [i, name(i)]),
      );
      const s = await exitOf(evalfleet(["coordinator", "status", runId, "--json"], env), "status");
      assert.equal(s.code, 0, outputOf(s));
      const status = JSON.parse(s.stdout);
      assert.deepEqual([status.selected, status.done, status.passed], [selection.indexes.length, selection.indexes.length, selection.indexes.length]);
    });
  }
});
