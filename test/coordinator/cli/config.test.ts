// The run commands' options pipeline: flags and environment in, one validated, frozen config out.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { runConfigFrom } from "../../../coordinator/cli/config.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_GRACE_SECONDS, DEFAULT_INLINE_CONCURRENCY, DEFAULT_RUN_LOG_LEVEL, DEFAULT_STORE_TIMEOUT_SECONDS } from "../../../shared/defaults.ts";
import { EvalfleetError, ErrorCode } from "../../../shared/errors.ts";

const usage = (pattern: RegExp) => (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && pattern.test(err.message);

/** What commander gives `coordinator run` with no flag set. */
const coordinatorDefaults = { logLevel: "warn", waitForWorkers: 60, maxAttempts: 3, ackWait: 30, cancelGrace: 15, brokerTimeout: 30, dbTimeout: 10, onSigterm: "cancel" as const };

describe("runConfigFrom", () => {
  test("run: the defaults of shared/defaults.ts, the suite from EVALFLEET_SUITE, frozen all the way down", () => {
    const config = runConfigFrom({ command: "run", flags: { logLevel: "warn", tag: ["smoke"] }, env: { EVALFLEET_SUITE: "evals.ts" } });
    assert.equal(config.suiteFile, "evals.ts");
    assert.equal(config.mode, "threads");
    assert.equal(config.concurrency, DEFAULT_CONCURRENCY);
    assert.equal(config.graceSeconds, DEFAULT_GRACE_SECONDS);
    assert.equal(config.store.timeoutSeconds, DEFAULT_STORE_TIMEOUT_SECONDS);
    assert.equal(config.timeout, null, "unresolved: the suite's default still applies");
    assert.deepEqual(config.selector, { name: null, tag: ["smoke"], set: null });
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.selector) && Object.isFrozen(config.selector.tag) && Object.isFrozen(config.store));
    assert.throws(() => ((config as { concurrency: number }).concurrency = 9), TypeError);
  });

  test("the phase bounds stay unresolved (the suite's apply); the output and load bounds have their defaults; bad values name their flags", () => {
    const config = runConfigFrom({ command: "run", flags: {}, env: { EVALFLEET_SUITE: "evals.ts" } });
    assert.deepEqual([config.setupTimeout, config.teardownTimeout, config.maxOutputKb, config.loadTimeoutSeconds], [null, null, 256, 60]);
    const set = runConfigFrom({ command: "run", flags: { setupTimeout: 2, teardownTimeout: 3, maxOutputKb: 16, loadTimeout: 5 }, env: { EVALFLEET_SUITE: "evals.ts" } });
    assert.deepEqual([set.setupTimeout, set.teardownTimeout, set.maxOutputKb, set.loadTimeoutSeconds], [2, 3, 16, 5]);
    assert.throws(() => runConfigFrom({ command: "run", flags: { setupTimeout: -1 }, env: { EVALFLEET_SUITE: "e.ts" } }), usage(/--setup-timeout/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { maxOutputKb: 0 }, env: { EVALFLEET_SUITE: "e.ts" } }), usage(/--max-output-kb/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { loadTimeout: 0 }, env: { EVALFLEET_SUITE: "e.ts" } }), usage(/--load-timeout/));
  });

  test("iterating: one re-run flag at a time and only with a store; --limit takes the last bare number and leaves NAME=VALUE values to provider limits; subsets default off", () => {
    const env = { EVALFLEET_SUITE: "evals.ts" };
    const plain = runConfigFrom({ command: "run", flags: {}, env });
    assert.equal(plain.rerun, null);
    assert.deepEqual(plain.subset, { grep: null, limit: null, sample: null, seed: null, filterMetadata: [] });
    assert.deepEqual(runConfigFrom({ command: "run", flags: { db: "sqlite:x.db", rerunFailed: "r1" }, env }).rerun, { kind: "failed", runId: "r1" });
    assert.deepEqual(runConfigFrom({ command: "coordinator-run", flags: { ...coordinatorDefaults, db: "sqlite:x.db", lastFailed: true }, env }).rerun, { kind: "last-failed", runId: null });
    assert.throws(() => runConfigFrom({ command: "run", flags: { rerunErrors: "r1" }, env }), usage(/^--rerun-errors reads a recorded run: pass --db URL or set EVALFLEET_DB$/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { db: "sqlite:x.db", rerunFailed: "r1", lastFailed: true }, env }), usage(/^--rerun-failed and --last-failed cannot be used together/));
    const limited = runConfigFrom({ command: "run", flags: { limit: ["5", "openai:gpt-5-mini=rpm:600", "7"], grep: "^a", sample: 3, seed: 9, filterMetadata: ["k=v"] }, env });
    assert.deepEqual(limited.subset, { grep: "^a", limit: 7, sample: 3, seed: 9, filterMetadata: ["k=v"] });
    assert.equal(runConfigFrom({ command: "run", flags: { limit: ["openai:gpt-5-mini=rpm:600"] }, env }).subset.limit, null);
    assert.throws(() => runConfigFrom({ command: "run", flags: { limit: ["ten"] }, env }), usage(/^--limit must be a whole number >= 1 \(the first N cases\) or KEY=rpm:N,tpm:N,concurrency:N, got 'ten'$/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { limit: ["0"] }, env }), usage(/--limit/));
  });

  test("the response cache: --cache is the local folder, --cache shared only for distributed runs, --cache-ttl in d/h/m/s or seconds (default 7 days)", () => {
    const env = { EVALFLEET_SUITE: "evals.ts" };
    assert.equal(runConfigFrom({ command: "run", flags: {}, env }).cache, null);
    assert.deepEqual(runConfigFrom({ command: "run", flags: { cache: true }, env }).cache, { kind: "local", ttlSeconds: 7 * 86400 });
    assert.deepEqual(runConfigFrom({ command: "run", flags: { cache: "local", cacheTtl: "12h" }, env }).cache, { kind: "local", ttlSeconds: 43_200 });
    assert.deepEqual(runConfigFrom({ command: "coordinator-run", flags: { ...coordinatorDefaults, cache: "shared", cacheTtl: "90" }, env }).cache, { kind: "shared", ttlSeconds: 90 });
    assert.deepEqual(runConfigFrom({ command: "run", flags: { cache: true, cacheTtl: "30m" }, env }).cache?.ttlSeconds, 1800);
    assert.throws(() => runConfigFrom({ command: "run", flags: { cache: "shared" }, env }), usage(/^--cache shared is the fleet's cache on NATS: it needs a distributed run/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { cache: "evals.ts" }, env }), usage(/^--cache must be local or shared, got 'evals.ts' \(a suite file goes before --cache\)$/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { cache: true, cacheTtl: "soon" }, env }), usage(/^--cache-ttl must be a duration such as 7d, 12h, 30m, 45s or a number of seconds, got 'soon'$/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { cache: true, cacheTtl: "0" }, env }), usage(/--cache-ttl/));
    assert.throws(() => runConfigFrom({ command: "run", flags: { cacheTtl: "1d" }, env }), usage(/^--cache-ttl needs --cache$/));
  });

  test("the [suite] argument wins over EVALFLEET_SUITE; neither is a usage error", () => {
    assert.equal(runConfigFrom({ command: "run", suiteArgument: "a.ts", flags: {}, env: { EVALFLEET_SUITE: "b.ts" } }).suiteFile, "a.ts");
    assert.throws(() => runConfigFrom({ command: "list", flags: {}, env: {} }), usage(/^no suite file: pass SUITE or set EVALFLEET_SUITE$/));
  });

  test("--threads 0 runs inline; list and a script run inline with the inline concurrency", () => {
    assert.equal(runConfigFrom({ command: "run", suiteArgument: "s.ts", flags: { threads: 0, concurrency: 4 }, env: {} }).mode, "inline");
    const list = runConfigFrom({ command: "list", suiteArgument: "s.ts", flags: {}, env: {} });
    assert.equal(list.list, true);
    assert.equal(list.logLevel, DEFAULT_RUN_LOG_LEVEL);
    assert.equal(runConfigFrom({ command: "script", flags: {}, env: {} }).concurrency, DEFAULT_INLINE_CONCURRENCY);
  });

  test("a script's store: --db, then cli(cases, { db }), then EVALFLEET_DB", () => {
    const env = { EVALFLEET_DB: "sqlite:env.db" };
    assert.equal(runConfigFrom({ command: "script", flags: { db: "sqlite:flag.db" }, env, scriptDb: "sqlite:option.db" }).store.db, "sqlite:flag.db");
    assert.equal(runConfigFrom({ command: "script", flags: {}, env, scriptDb: "sqlite:option.db" }).store.db, "sqlite:option.db");
    assert.equal(runConfigFrom({ command: "script", flags: {}, env }).store.db, "sqlite:env.db");
    assert.equal(runConfigFrom({ command: "script", flags: { db: "  " }, env: {} }).store.db, null);
  });

  test("the settings recorded with a run keep their flag names and leave out what was not set", () => {
    const config = runConfigFrom({ command: "run", suiteArgument: "s.ts", flags: { concurrency: 8, grace: 5, repeat: 3, passThreshold: 0.9 }, env: {} });
    assert.deepEqual(config.recorded, { concurrency: 8, grace: 5, repeat: 3, passThreshold: 0.9 });
  });

  test("coordinator run: the run id and --resume-existing from the Kubernetes Job's environment, the NATS settings from NATS_URL", () => {
    const env = { EVALFLEET_SUITE: "s.ts", EVALFLEET_JOB_NAME: "nightly-coordinator-29406360", EVALFLEET_RUN_PREFIX: "nightly", EVALFLEET_RESUME_EXISTING: "true", NATS_URL: "nats://broker:4222" };
    const config = runConfigFrom({ command: "coordinator-run", flags: coordinatorDefaults, env });
    assert.equal(config.mode, "distributed");
    assert.equal(config.runId, "nightly-29406360");
    assert.equal(config.store.resume, true);
    assert.equal(config.distributed?.resumeExisting, true);
    assert.deepEqual(config.distributed?.nats.servers, ["nats://broker:4222"]);
    assert.equal(config.distributed?.ackWaitSeconds, 30);
    // --run-id wins over the environment.
    assert.equal(runConfigFrom({ command: "coordinator-run", flags: { ...coordinatorDefaults, runId: "mine" }, env }).runId, "mine");
    assert.throws(() => runConfigFrom({ command: "coordinator-run", flags: coordinatorDefaults, env: { ...env, EVALFLEET_RESUME_EXISTING: "maybe" } }), usage(/EVALFLEET_RESUME_EXISTING must be true or false, got 'maybe'/));
  });

  test("coordinator resume: the run id is the one resumed and its record is reopened; the environment's run id is not read", () => {
    const config = runConfigFrom({ command: "coordinator-resume", suiteArgument: "s.ts", flags: coordinatorDefaults, env: { EVALFLEET_JOB_NAME: "no-number" }, resumeRunId: "r-1" });
    assert.equal(config.runId, "r-1");
    assert.equal(config.store.resume, true);
    assert.equal(config.distributed?.resumeRunId, "r-1");
  });

  test("a value no parser checked (a library caller's) is refused naming the flag and the value", () => {
    assert.throws(() => runConfigFrom({ command: "run", suiteArgument: "s.ts", flags: { concurrency: 0 }, env: {} }), usage(/^--concurrency must be a whole number >= 1, got 0$/));
    assert.throws(() => runConfigFrom({ command: "run", suiteArgument: "s.ts", flags: { passThreshold: 1.5 }, env: {} }), usage(/^--pass-threshold must be a fraction between 0 and 1 \(0\.95 for 95%\), got 1\.5$/));
    assert.throws(() => runConfigFrom({ command: "run", suiteArgument: "s.ts", flags: { logLevel: "loud" }, env: {} }), usage(/^--log-level .*, got 'loud'$/));
  });
});
