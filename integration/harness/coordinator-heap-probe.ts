// A coordinator whose heap is measured: runs one distributed run of a suite and prints, as one JSON
// line, the heap used after a forced GC before the run (the suite loaded) and after it, with the
// run's outcome still held (a spooled run's results are in a file: what is left is what the coordinator keeps per case).
//   node --expose-gc --conditions=evalfleet-source --import tsx coordinator-heap-probe.ts SUITE NATS_URL RUN_ID
// Used by integration/coordinator-heap.test.ts.
import { loadSuite } from "../../index.ts";
import { runDistributed } from "../../coordinator/distributed/distributed-run.ts";

const [suitePath, url, runId] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !suitePath || !url || !runId) throw new Error("usage: node --expose-gc ... coordinator-heap-probe.ts SUITE NATS_URL RUN_ID");
const suite = await loadSuite(suitePath);
gc();
const heapBefore = process.memoryUsage().heapUsed;
const outcome = await runDistributed(suite, { nats: { servers: [url] }, runId, waitForWorkersSeconds: 60 });
gc();
const heapAfter = process.memoryUsage().heapUsed;
console.log(JSON.stringify({ cases: suite.cases.length, passed: outcome.suite.passed, incomplete: outcome.incomplete, heapBefore, heapAfter, held: outcome.suite.total }));
process.exit(0);
