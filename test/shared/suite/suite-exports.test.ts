// What a suite module's exports declare (shared/suite/suite-exports.ts), validated without
// importing a file: the ways a module declares its cases, in order of precedence, and every
// problem reported at once in one SuiteLoadError naming the file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { suiteFromExports } from "../../../shared/suite/suite-exports.ts";
import { defineSuite } from "../../../shared/suite/suite-definition.ts";
import { suiteFingerprint } from "../../../shared/suite/suite-fingerprint.ts";
import { SuiteLoadError } from "../../../shared/errors.ts";
import { mkCase } from "../../support/cases.ts";

const PATH = "/suites/support-suite.ts";
const load = (mod: Record<string, unknown>, capture = {}) => suiteFromExports("support-suite.ts", PATH, mod, capture);

/** The problems a module's exports are refused with. */
async function problems(mod: Record<string, unknown>): Promise<readonly string[]> {
  const err = await load(mod).then(
    () => assert.fail("the exports were accepted"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SuiteLoadError, String(err));
  assert.ok(err.message.startsWith("support-suite.ts: "), `named by the file as the user named it: ${err.message}`);
  return err.problems;
}

test("defineSuite as the default export: its name and settings; the fingerprint over the ordered cases", async () => {
  const cases = [mkCase("a"), mkCase("b")];
  const suite = await load({ default: defineSuite({ name: "support", cases, defaultTimeout: 5, passThreshold: 0.5 }) });
  assert.equal(suite.name, "support");
  assert.equal(suite.path, PATH);
  assert.deepEqual(suite.cases.map((c) => c.name), ["a", "b"]);
  assert.equal(suite.defaultTimeout, 5);
  assert.equal(suite.passThreshold, 0.5);
  assert.equal(suite.fingerprint, suiteFingerprint(cases));
});

test("a list as the default export, then `cases`, then what cli() registered; the file's name when none is given", async () => {
  assert.deepEqual((await load({ default: [mkCase("d")], cases: [mkCase("c")] })).cases.map((c) => c.name), ["d"]);
  const named = await load({ cases: [mkCase("c")] });
  assert.deepEqual([named.name, named.cases.map((c) => c.name)], ["support-suite", ["c"]]);
  const captured = await load({}, { cases: [mkCase("s")], defaultTimeout: 9 });
  assert.deepEqual([captured.cases.map((c) => c.name), captured.defaultTimeout], [["s"], 9]);
});

test("every problem at once: items that are not cases, duplicate names, bad settings", async () => {
  const got = await problems({ default: defineSuite({ cases: [mkCase("a"), { name: "b" } as never, mkCase("a")], defaultTimeout: -1 as never, setupTimeoutSeconds: "1" as never, passThreshold: 95 }) });
  assert.deepEqual(got, [
    "the default export (defineSuite): item 1 is an object (Object), not a Case (build it with new Case({...}))",
    "duplicate case name 'a' (items 0 and 1): names identify cases in selection and reports",
    "defaultTimeout must be a number of seconds >= 0, got -1",
    "setupTimeoutSeconds must be a number of seconds >= 0, got '1'",
    "passThreshold must be a fraction between 0 and 1 (0.95 for 95%), got 95",
  ]);
});

test("a module that declares no cases says how to", async () => {
  assert.deepEqual(await problems({}), ["exports no cases: export default defineSuite({ cases }), export default [cases], or export const cases"]);
  assert.deepEqual(await problems({ default: 42 }), ["the default export is number 42; export default defineSuite({ cases }), export default [cases], or export const cases"]);
  assert.deepEqual(await problems({ default: defineSuite({ cases: [] }) }), ["the default export (defineSuite) holds no cases"]);
});

test("a checked load (a worker thread's) lists and fingerprints the cases without the checks across them; eval sets are left to selection", async () => {
  const cases = [mkCase("a"), mkCase("a"), mkCase("b", { evalFunctions: ["missing"] })];
  const mod = { default: defineSuite({ cases, evalSets: { smoke: ["a", "nobody"] } }) };
  // The dispatching process refuses these exports, naming each problem...
  assert.deepEqual((await problems(mod)).length, 3);
  // ...so a thread, which only runs what that process sent, does not look for them again.
  const checked = await suiteFromExports("support-suite.ts", PATH, mod, {}, { checked: true });
  assert.deepEqual(checked.cases.map((c) => c.name), ["a", "a", "b"]);
  assert.equal(checked.fingerprint, suiteFingerprint(cases), "the same fingerprint as a full load's");
  assert.equal(checked.evalSets?.size, 0);
  // A problem of the suite's own settings is still one.
  await assert.rejects(suiteFromExports("support-suite.ts", PATH, { default: defineSuite({ cases, defaultTimeout: -1 as never }) }, {}, { checked: true }), SuiteLoadError);
});
