// The suite fingerprint (shared/suite.ts): equal cases give equal fingerprints; any change shows.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { suiteFingerprint, type Case } from "../../index.ts";
import { mkCase } from "../support/cases.ts";
import { StubScorer } from "../support/doubles.ts";

describe("suiteFingerprint", () => {
  const build = () => [mkCase("a", { tags: ["x"] }), mkCase("b", { expectedToolCalls: ["search"] }), mkCase("c", { scorer: new StubScorer() })];

  test("is a stable sha256 for equal cases", () => {
    const fp = suiteFingerprint(build());
    assert.match(fp, /^[0-9a-f]{64}$/);
    assert.equal(suiteFingerprint(build()), fp, "separately built but equal cases give the same fingerprint");
    assert.equal(suiteFingerprint(build()), suiteFingerprint(build()));
  });

  test("changes when a name, the order or a setting changes", () => {
    const [a, b, c] = build() as [Case, Case, Case];
    const base = suiteFingerprint([a, b, c]);
    assert.notEqual(suiteFingerprint([a, mkCase("b2", { expectedToolCalls: ["search"] }), c]), base, "renamed");
    assert.notEqual(suiteFingerprint([b, a, c]), base, "reordered");
    assert.notEqual(suiteFingerprint([a, b]), base, "a case removed");
    assert.notEqual(suiteFingerprint([a, mkCase("b", { expectedToolCalls: ["lookup"] }), c]), base, "a check changed");
    assert.notEqual(suiteFingerprint([]), base);
  });

  test("a case's hook bounds count only when set, so suites without them keep their fingerprints", () => {
    const base = suiteFingerprint([mkCase("a")]);
    assert.equal(suiteFingerprint([mkCase("a", { setupTimeoutSeconds: null })]), base);
    assert.notEqual(suiteFingerprint([mkCase("a", { setupTimeoutSeconds: 5 })]), base);
    assert.notEqual(suiteFingerprint([mkCase("a", { teardownTimeoutSeconds: 5 })]), suiteFingerprint([mkCase("a", { setupTimeoutSeconds: 5 })]));
  });
});
