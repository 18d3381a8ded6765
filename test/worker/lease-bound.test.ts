// A running case's lease is renewed only while the case is within its bounds (worker/lease-bound.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LEASE_SLACK_MS, LeaseBound } from "../../worker/lease-bound.ts";

test("a case waiting for a thread (no phase yet) keeps its lease", () => {
  assert.equal(new LeaseBound(5_000).renews(Date.now() + 3_600_000), true);
});

test("a phase within its deadline plus the grace and the slack keeps the lease; past it the lease is let go", () => {
  const bound = new LeaseBound(1_000);
  const deadline = 1_000_000;
  bound.phase(deadline);
  assert.equal(bound.renews(deadline), true);
  assert.equal(bound.renews(deadline + 1_000 + LEASE_SLACK_MS), true);
  assert.equal(bound.renews(deadline + 1_000 + LEASE_SLACK_MS + 1), false);
});

test("each phase moves the bound: a teardown with its own deadline renews again", () => {
  const bound = new LeaseBound(0);
  bound.phase(1_000);
  assert.equal(bound.renews(1_000 + LEASE_SLACK_MS + 1), false);
  bound.phase(2_000_000);
  assert.equal(bound.renews(1_000 + LEASE_SLACK_MS + 1), true);
});
