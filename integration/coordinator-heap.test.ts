// What a distributed run's coordinator keeps per case (issue 29): its heap, after a forced GC with
// the run's outcome still held, grows by less than HEAP_BOUND_BYTES per case from a 20,000-case run
// to a 100,000-case run (the heap is flat per case: a constant, the code and the modules' state,
// plus a small amount per case), and the 100,000-case run keeps less than that per case in all. A real nats-server, a real worker
// process, bench/trivial-suite.ts (trivial cases), the coordinator in a process of its own
// (integration/harness/coordinator-heap-probe.ts) so that nothing else shares its heap. When every
// kept result was a dictionary-mode object: about 1,920 B per case at both sizes; with compact
// results held until the report, about 490 B; with the results spooled to a file
// (coordinator/run/result-spool.ts), what is left per case is a few typed arrays' bytes.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { useNatsServer } from "./harness/use-nats-server.ts";
import { evalfleet, exitOf, outputOf, root, track } from "./harness/processes.ts";

const SUITE = join(root, "bench", "trivial-suite.ts");
const PROBE = join(root, "integration", "harness", "coordinator-heap-probe.ts");
/** Bytes of heap per case the coordinator may keep, marginal and per case (measured: 50 and 94 B; 490 B with every result held). */
const HEAP_BOUND_BYTES = 200;
const SIZES = [20_000, 100_000] as const;

interface Probe {
  cases: number;
  passed: number;
  incomplete: string | null;
  heapBefore: number;
  heapAfter: number;
  held: number;
}

describe("the coordinator's heap per case", () => {
  const nats = useNatsServer();

  test(`flat across ${SIZES.join(" and ")} cases: under ${HEAP_BOUND_BYTES} B per case from one to the other, and in all at the larger`, { timeout: 280_000 }, async () => {
    const held: number[] = [];
    for (const cases of SIZES) {
      // The case count is part of the suite's fingerprint: the worker and the coordinator see the same.
      const env = { BENCH_CASES: String(cases), BENCH_LATENCY_MS: "0" };
      const runId = `heap-${cases}`;
      const worker = evalfleet(["worker", SUITE, "--nats", nats.url, "--run", runId, "--threads", "2", "--concurrency", "64", "--log-level", "error"], env);
      const probe = track(
        spawn(process.execPath, ["--expose-gc", "--conditions=evalfleet-source", "--import", "tsx", PROBE, SUITE, nats.url, runId], {
          cwd: root,
          env: { ...process.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        }),
      );
      const c = await exitOf(probe, `the coordinator of ${cases} cases`, 200_000);
      assert.equal(c.code, 0, outputOf(c));
      const w = await exitOf(worker, "the worker", 60_000);
      assert.equal(w.code, 0, outputOf(w));
      const out = JSON.parse(c.stdout.trim().split("\n").pop()!) as Probe;
      assert.deepEqual([out.cases, out.passed, out.held, out.incomplete], [cases, cases, cases, null]);
      held.push(out.heapAfter - out.heapBefore);
    }
    const perCase = held.map((bytes, i) => bytes / SIZES[i]!);
    const marginal = (held[1]! - held[0]!) / (SIZES[1] - SIZES[0]);
    const figures = `heap kept ${perCase.map((b) => b.toFixed(0)).join(" and ")} B per case, ${marginal.toFixed(0)} B per case from ${SIZES[0]} to ${SIZES[1]}`;
    assert.ok(marginal < HEAP_BOUND_BYTES, figures);
    assert.ok(perCase[1]! < HEAP_BOUND_BYTES, figures);
    console.log(`# ${figures}`);
  });
});
