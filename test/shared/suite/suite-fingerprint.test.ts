// The suite fingerprint (shared/suite/suite-fingerprint.ts): equal cases give equal fingerprints; any change shows.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, suiteFingerprint } from "../../../index.ts";
import { mkCase } from "../../support/cases.ts";
import { StubScorer } from "../../support/doubles.ts";

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

  test("a case's pass rule of its trials counts only when set: suites without one keep their fingerprints", () => {
    const base = suiteFingerprint([mkCase("a")]);
    assert.equal(suiteFingerprint([mkCase("a", { passRate: null })]), base);
    assert.notEqual(suiteFingerprint([mkCase("a", { passRate: 0.8 })]), base);
    assert.notEqual(suiteFingerprint([mkCase("a", { passRate: 0.8 })]), suiteFingerprint([mkCase("a", { passRate: 0.9 })]));
  });

  test("a suite of tool names keeps the fingerprint it had before matchers existed", () => {
    // Pinned from the evalfleet before the trajectory check (commit 8dde978), for these cases.
    const cases = [mkCase("a", { tags: ["x"] }), mkCase("b", { expectedToolCalls: ["search", "lookup"], allowAdditionalToolCalls: false }), mkCase("c", { scorer: new StubScorer() })];
    assert.equal(suiteFingerprint(cases), "5a3c5b4583686a949b4dab65c86218f5eafec172d8fc00e7c8eb438c8d48b72e");
    assert.equal(suiteFingerprint([mkCase("a", { toolCallOrder: "any", maxToolCalls: null, toolCallsMustSucceed: false, forbiddenToolCalls: [] })]), suiteFingerprint([mkCase("a")]), "unset options hash as before");
  });

  test("a changed matcher, order, forbidden call or bound changes it; a predicate is hashed as a placeholder", () => {
    const fp = (extra: Parameters<typeof mkCase>[1]) => suiteFingerprint([mkCase("a", extra)]);
    const base = fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }] });
    assert.equal(fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }] }), base);
    const changed = [
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: /London/ } }] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: /London/i } }] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: { $regex: "London" } } }] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" }, times: 2 }] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }], toolCallOrder: "in_order" }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }], forbiddenToolCalls: ["rm"] }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }], maxToolCalls: 3 }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: "London" } }], toolCallsMustSucceed: true }),
      fp({ expectedToolCalls: [{ name: "get_weather", args: { city: (v: unknown) => v === "London" } }] }),
    ];
    assert.equal(new Set([base, ...changed]).size, changed.length + 1, "each change gives a fingerprint of its own");
    // A predicate's body cannot be serialised: editing it keeps the fingerprint (as a scorer's does).
    assert.equal(fp({ expectedToolCalls: [{ name: "w", args: { city: (v: unknown) => v === "a" } }] }), fp({ expectedToolCalls: [{ name: "w", args: { city: (v: unknown) => v === "b" } }] }));
    assert.notEqual(fp({ forbiddenToolCalls: [{ name: "rm", args: { force: true } }] }), fp({ forbiddenToolCalls: [{ name: "rm", args: { force: false } }] }));
  });
  test("keeps the value of 1fe037d's line-by-line hashing, past the size at which lines are hashed in chunks", () => {
    // Workers of an older build compare the same fingerprint: hashing the lines in chunks must not change it.
    const agent = { id: "agent-1", async run() { return { content: "" }; } };
    const scorer = { score: () => ({ value: 1, passed: true }) };
    const cases = Array.from({ length: 3000 }, (_, i) => new Case({ name: `case-${i}`, agent, input: i % 2 ? `question ${i}` : [{ role: "user" as const, content: `q${i}` }], tags: i % 3 ? ["t"] : [], scorer, ...(i % 5 === 0 ? { criteria: "polite" } : {}), ...(i % 7 === 0 ? { expectedToolCalls: ["search"] } : {}) }));
    assert.equal(suiteFingerprint(cases.slice(0, 3)), "ecf326a94357f9acd5bb6eb9ad90910fb2c9e0089b50eb2082e8fa2d283f11e8");
    assert.equal(suiteFingerprint(cases), "c0966a40c336058296bd9f6c82c65420badd4ddb169d9f5e1191376d60d2ddd2");
  });
});
