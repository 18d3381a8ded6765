// A run's manifest as a worker reads it: ours, another protocol version (refused naming both
// versions, with the run's suite when the record still says it), or malformed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { NATS_PROTOCOL, type RunManifest } from "../../shared/wire/nats.ts";
import { checkManifest } from "../../worker/manifest-check.ts";
import { encodeSelection } from "../../shared/wire/case-selection.ts";

const manifest: RunManifest = {
  v: NATS_PROTOCOL,
  runId: "r1",
  suite: { name: "basic", fingerprint: "a".repeat(64), path: "/suite.ts" },
  selection: encodeSelection([0, 1, 2], 3),
  defaultTimeout: 120,
  setupTimeout: 60,
  teardownTimeout: 60,
  maxOutputBytes: 256 * 1024,
  maxTranscriptBytes: 0,
  cache: null,
  cassette: null,
  maxAttempts: 3,
  ackWaitSeconds: 30,
  forwardEvents: false,
  repeat: 1,
  repeatMax: null,
  adaptiveConfidence: null,
  casePassRate: null,
  confidence: null,
  retries: 0,
  limits: {},
  startGate: false,
  eventBatches: true,
  passThreshold: null,
  evalFunctions: [],
  scoringMethod: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  coordinator: { host: "h", pid: 1 },
};

test("a manifest of this protocol version is the run to serve", () => {
  const r = checkManifest("r1", JSON.stringify(manifest));
  assert.equal(r.kind, "ok");
  assert.deepEqual(r.kind === "ok" && r.manifest, manifest);
});

test("a manifest written without the phase bounds and the output bound (an earlier evalfleet of the same version) gets their defaults", () => {
  const { setupTimeout: _s, teardownTimeout: _t, maxOutputBytes: _m, ...older } = manifest;
  const r = checkManifest("r1", JSON.stringify(older));
  assert.equal(r.kind, "ok");
  assert.deepEqual(r.kind === "ok" && [r.manifest.setupTimeout, r.manifest.teardownTimeout, r.manifest.maxOutputBytes], [60, 60, 256 * 1024]);
});

test("a manifest of another version is refused naming both versions, with the run's suite when it says it", () => {
  const future = { ...manifest, v: NATS_PROTOCOL + 1, selection: "a shape this worker does not know" };
  assert.deepEqual(checkManifest("r1", JSON.stringify(future)), {
    kind: "other-version",
    why: `run r1 speaks protocol version ${NATS_PROTOCOL + 1}; this worker speaks ${NATS_PROTOCOL}`,
    fingerprint: "a".repeat(64),
  });
  const bare = checkManifest("r2", JSON.stringify({ v: NATS_PROTOCOL - 1, layout: "unknown" }));
  assert.deepEqual(bare, { kind: "other-version", why: `run r2 speaks protocol version ${NATS_PROTOCOL - 1}; this worker speaks ${NATS_PROTOCOL}`, fingerprint: null });
});

test("a malformed manifest of this version names the field", () => {
  const r = checkManifest("r1", JSON.stringify({ ...manifest, maxAttempts: 0 }));
  assert.equal(r.kind, "malformed");
  assert.match(r.kind === "malformed" ? r.why : "", /^run r1 has a malformed manifest: maxAttempts: /);
  assert.equal(checkManifest("r1", "{not json").kind, "malformed");
});

test("a manifest written before evaluation functions and scoring methods existed reads as none of either", () => {
  const { evalFunctions: _f, scoringMethod: _m, ...older } = manifest;
  const r = checkManifest("r1", JSON.stringify(older));
  assert.equal(r.kind, "ok", JSON.stringify(r));
  if (r.kind === "ok") assert.deepEqual([r.manifest.evalFunctions, r.manifest.scoringMethod], [[], null]);
});
