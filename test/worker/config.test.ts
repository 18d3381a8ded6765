// The worker process's options pipeline: its flags and the environment in, one frozen config out.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { workerConfigFrom } from "../../worker/config.ts";
import { DEFAULT_CONCURRENCY, DEFAULT_DRAIN_SECONDS, DEFAULT_GRACE_SECONDS, DEFAULT_SERVICE_LOG_LEVEL, defaultThreads } from "../../shared/defaults.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";

const usage = (pattern: RegExp) => (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && pattern.test(err.message);

describe("workerConfigFrom", () => {
  test("the defaults of shared/defaults.ts; threads default to min(CPUs, concurrency); frozen", () => {
    const config = workerConfigFrom("suite.ts", {}, {});
    assert.equal(config.concurrency, DEFAULT_CONCURRENCY);
    assert.equal(config.threads, defaultThreads(DEFAULT_CONCURRENCY));
    assert.equal(config.graceSeconds, DEFAULT_GRACE_SECONDS);
    assert.equal(config.drainSeconds, DEFAULT_DRAIN_SECONDS);
    assert.equal(config.logLevel, DEFAULT_SERVICE_LOG_LEVEL);
    assert.equal(config.http, null);
    assert.equal(config.runId, null);
    assert.deepEqual(config.nats.servers, ["nats://127.0.0.1:4222"]);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.nats));
    assert.equal(workerConfigFrom("suite.ts", { concurrency: 1 }, {}).threads, 1);
  });

  test("the suite, the run and the broker from the environment; flags win", () => {
    const env = { EVALFLEET_SUITE: "env.ts", EVALFLEET_JOB_NAME: "nightly-workers-29406360", EVALFLEET_RUN_PREFIX: "nightly", NATS_URL: "nats://a:4222,nats://b:4222" };
    const config = workerConfigFrom(undefined, { httpPort: 0 }, env);
    assert.equal(config.suiteFile, "env.ts");
    assert.equal(config.runId, "nightly-29406360");
    assert.deepEqual(config.nats.servers, ["nats://a:4222", "nats://b:4222"]);
    assert.deepEqual(config.http, { port: 0, host: "0.0.0.0" });
    const flagged = workerConfigFrom("flag.ts", { run: "r-7", nats: "nats://c:4222" }, env);
    assert.equal(flagged.suiteFile, "flag.ts");
    assert.equal(flagged.runId, "r-7");
    assert.deepEqual(flagged.nats.servers, ["nats://c:4222"]);
  });

  test("bad input names the flag or variable and the value", () => {
    assert.throws(() => workerConfigFrom(undefined, {}, {}), usage(/^no suite file: pass SUITE or set EVALFLEET_SUITE$/));
    assert.throws(() => workerConfigFrom("s.ts", {}, { EVALFLEET_JOB_NAME: "manual" }), usage(/EVALFLEET_JOB_NAME 'manual' does not end in -<number>/));
    assert.throws(() => workerConfigFrom("s.ts", { run: "a.b" }, {}), usage(/run id must be/));
    assert.throws(() => workerConfigFrom("s.ts", { threads: 0 }, {}), usage(/^--threads must be a whole number >= 1, got 0$/));
  });
});
