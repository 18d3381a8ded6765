// The environment the container entry commands read (shared/environment.ts): the run id a
// Kubernetes Job derives, and the boolean and replica settings the manifests pass.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_RUN_PREFIX } from "../../shared/defaults.ts";
import { booleanFromEnvironment, runIdFromEnvironment, secretValuesIn, streamReplicasFromEnvironment, tracingSettingsFrom } from "../../shared/environment.ts";
import { isUsageError as usage } from "../support/errors.ts";

test("no run id in the environment: null (a new id for a coordinator, every run for a worker)", () => {
  assert.equal(runIdFromEnvironment({}), null);
  assert.equal(runIdFromEnvironment({ EVALFLEET_RUN_ID: "  ", EVALFLEET_JOB_NAME: "" }), null);
});

test("EVALFLEET_RUN_ID is used as given and wins over a Job name", () => {
  assert.equal(runIdFromEnvironment({ EVALFLEET_RUN_ID: "release-42" }), "release-42");
  assert.equal(runIdFromEnvironment({ EVALFLEET_RUN_ID: "release-42", EVALFLEET_JOB_NAME: "evalfleet-nightly-workers-29406360" }), "release-42");
  assert.throws(() => runIdFromEnvironment({ EVALFLEET_RUN_ID: "a.b" }), usage(/run id must be/));
});

test("the coordinator's and the workers' CronJob Jobs of one night derive the same run id", () => {
  const night = 29406360; // 2025-11-29T02:00Z in minutes since the epoch, as the CronJob controller names Jobs
  const coordinator = runIdFromEnvironment({ EVALFLEET_JOB_NAME: `evalfleet-nightly-coordinator-${night}`, EVALFLEET_RUN_PREFIX: "nightly" });
  const workers = runIdFromEnvironment({ EVALFLEET_JOB_NAME: `evalfleet-nightly-workers-${night}`, EVALFLEET_RUN_PREFIX: "nightly" });
  assert.equal(coordinator, `nightly-${night}`);
  assert.equal(workers, coordinator);
  // The next night is another run.
  assert.notEqual(runIdFromEnvironment({ EVALFLEET_JOB_NAME: `evalfleet-nightly-workers-${night + 1440}`, EVALFLEET_RUN_PREFIX: "nightly" }), coordinator);
  assert.equal(runIdFromEnvironment({ EVALFLEET_JOB_NAME: "x-7" }), `${DEFAULT_RUN_PREFIX}-7`);
});

test("a Job name without a trailing number is a usage error that says what to do", () => {
  assert.throws(() => runIdFromEnvironment({ EVALFLEET_JOB_NAME: "evalfleet-manual" }), usage(/EVALFLEET_JOB_NAME 'evalfleet-manual' does not end in -<number>.*set EVALFLEET_RUN_ID/));
  assert.throws(() => runIdFromEnvironment({ EVALFLEET_JOB_NAME: "x-1", EVALFLEET_RUN_PREFIX: "a.b" }), usage(/run id must be/));
});

test("booleans from the environment", () => {
  for (const v of ["1", "true", "TRUE", "yes", "on"]) assert.equal(booleanFromEnvironment("X", { X: v }), true, v);
  for (const v of ["0", "false", "no", "off", ""]) assert.equal(booleanFromEnvironment("X", { X: v }), false, v);
  assert.equal(booleanFromEnvironment("X", {}), false);
  assert.throws(() => booleanFromEnvironment("X", { X: "maybe" }), usage(/X must be true or false, got 'maybe'/));
});


test("EVALFLEET_STREAM_REPLICAS: 1 by default, 1-5 allowed", () => {
  assert.equal(streamReplicasFromEnvironment({}), 1);
  assert.equal(streamReplicasFromEnvironment({ EVALFLEET_STREAM_REPLICAS: "3" }), 3);
  for (const bad of ["0", "6", "two", "1.5"]) assert.throws(() => streamReplicasFromEnvironment({ EVALFLEET_STREAM_REPLICAS: bad }), usage(/EVALFLEET_STREAM_REPLICAS must be 1 to 5/), bad);
});

test("tracing: off unless an OTLP endpoint is set, and off when disabled", () => {
  assert.equal(tracingSettingsFrom({}), null);
  assert.equal(tracingSettingsFrom({ OTEL_SERVICE_NAME: "x" }), null);
  assert.equal(tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }), null);
  assert.equal(tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" }), null);
});

test("tracing: the standard variables, with the standard defaults", () => {
  assert.deepEqual(tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }), {
    url: "http://collector:4318/v1/traces",
    protocol: "http/protobuf",
    headers: {},
    serviceName: "evalfleet",
    resourceAttributes: {},
    captureMessageContent: false,
  });
  assert.deepEqual(
    tracingSettingsFrom({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://api.honeycomb.example/v1/traces",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=abc%20def,other=1",
      OTEL_SERVICE_NAME: "nightly-evals",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci,team=ml",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "TRUE",
    }),
    {
      url: "https://api.honeycomb.example/v1/traces",
      protocol: "http/json",
      headers: { "x-honeycomb-team": "abc def", other: "1" },
      serviceName: "nightly-evals",
      resourceAttributes: { "deployment.environment": "ci", team: "ml" },
      captureMessageContent: true,
    },
  );
});

test("tracing: a bad value is a usage error naming the variable", () => {
  assert.throws(() => tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), usage(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(grpc is not supported\), got 'grpc'/));
  assert.throws(() => tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }), usage(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/));
  assert.throws(() => tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "zipkin" }), usage(/OTEL_TRACES_EXPORTER/));
  assert.throws(() => tracingSettingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "novalue" }), usage(/OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/));
});

test("the exporter's header values are secrets: every output redacts them", () => {
  assert.deepEqual(secretValuesIn({ OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer abcdefgh123,x=1" }), ["Bearer abcdefgh123"]);
});
