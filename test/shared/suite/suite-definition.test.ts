// How a file declares its suite (shared/suite/suite-definition.ts): defineSuite freezes what it is
// given and brands it; the brand is a Symbol.for, so a suite built by another copy of evalfleet
// (a suite's own install) is recognised, and a plain object is not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { defineSuite, isSuiteDefinition } from "../../../shared/suite/suite-definition.ts";
import { mkCase } from "../../support/cases.ts";

test("defineSuite freezes the suite and its list of cases, and brands it", () => {
  const cases = [mkCase("a")];
  const suite = defineSuite({ name: "s", cases });
  assert.ok(Object.isFrozen(suite) && Object.isFrozen(suite.cases));
  assert.notEqual(suite.cases, cases, "a copy: the caller's list stays the caller's");
  assert.deepEqual(defineSuite({}).cases, [], "no cases (datasets may provide them): an empty list");
  assert.equal(isSuiteDefinition(suite), true);
});

test("the brand is the one any copy of evalfleet sets; a look-alike without it is not a suite", () => {
  assert.equal(isSuiteDefinition({ name: "s", cases: [], [Symbol.for("evalfleet.suite")]: true }), true, "another copy's defineSuite");
  for (const v of [{ name: "s", cases: [] }, { [Symbol("evalfleet.suite")]: true }, null, undefined, "suite", [mkCase("a")]]) assert.equal(isSuiteDefinition(v), false, String(v));
});
