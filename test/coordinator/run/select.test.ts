// Selection (coordinator/run/select.ts): --name, --tag and --set (eval sets), in declaration order
// with indices, and how a selector is described.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Case, EvalfleetError, loadSuite, selectCases } from "../../../index.ts";
import { describeSelector } from "../../../coordinator/run/select.ts";
import { mkCase } from "../../support/cases.ts";
import { StubAgent } from "../../support/doubles.ts";
import { ROOT } from "../../support/paths.ts";

const root = ROOT;
const fixture = (name: string): string => join(root, "test", "fixtures", name);

function caseNamed(name: string, options: { tags?: string[]; id?: string } = {}): Case {
  return new Case({ name, agent: new StubAgent(), input: "q", expectedOutput: "stub response", ...options });
}

describe("selectCases / describeSelector (spec B)", () => {
  const cases = [
    mkCase("first", { tags: ["smoke", "geo"] }),
    mkCase("second", { tags: ["slow"] }),
    mkCase("third", { tags: ["smoke"] }),
    mkCase("fourth"),
    mkCase("First", { tags: ["smoke"] }),
  ];
  const names = (sel: ReturnType<typeof selectCases>) => sel.map((s) => s.case.name);

  test("no filter selects everything in order, with indices", () => {
    const sel = selectCases(cases);
    assert.deepEqual(names(sel), ["first", "second", "third", "fourth", "First"]);
    assert.deepEqual(sel.map((s) => s.index), [0, 1, 2, 3, 4]);
    assert.equal(sel[0]!.case, cases[0]);
  });

  test("name is exact and case-sensitive", () => {
    assert.deepEqual(names(selectCases(cases, { name: "first" })), ["first"]);
    assert.deepEqual(names(selectCases(cases, { name: "fir" })), []);
    const sel = selectCases(cases, { name: "First" });
    assert.deepEqual(sel.map((s) => s.index), [4]);
  });

  test("tag is exact membership; a list matches any of its tags", () => {
    assert.deepEqual(names(selectCases(cases, { tag: "smoke" })), ["first", "third", "First"]);
    assert.deepEqual(names(selectCases(cases, { tag: "smok" })), []);
    assert.deepEqual(names(selectCases(cases, { tag: ["slow", "geo"] })), ["first", "second"]);
  });

  test("name and tag are ANDed, order and indices are kept", () => {
    assert.deepEqual(names(selectCases(cases, { name: "third", tag: "smoke" })), ["third"]);
    assert.deepEqual(names(selectCases(cases, { name: "second", tag: "smoke" })), []);
    const sel = selectCases(cases, { name: ["First", "third", "second"], tag: "smoke" });
    assert.deepEqual(names(sel), ["third", "First"]);
    assert.deepEqual(sel.map((s) => s.index), [2, 4]);
  });

  test("null and empty lists mean no filter", () => {
    assert.equal(selectCases(cases, { name: null, tag: null }).length, 5);
    assert.equal(selectCases(cases, { name: [], tag: [] }).length, 5);
    assert.deepEqual(names(selectCases(cases, { name: [], tag: ["slow"] })), ["second"]);
  });

  test("an empty selection is an empty list, not an error", () => {
    assert.deepEqual(selectCases(cases, { tag: "nope" }), []);
    assert.deepEqual(selectCases([], {}), []);
  });

  test("describeSelector prints the selector as Agno does", () => {
    assert.equal(describeSelector({ tag: "nope" }), "name=None, tag='nope'");
    assert.equal(describeSelector({}), "name=None, tag=None");
    assert.equal(describeSelector({ name: "only_case", tag: null }), "name='only_case', tag=None");
    assert.equal(describeSelector({ tag: ["a", "b"] }), "name=None, tag=['a', 'b']");
    assert.equal(describeSelector({ name: [], tag: ["x"] }), "name=None, tag='x'");
  });
});

describe("eval sets in selection", () => {
  const cases = [caseNamed("a", { tags: ["smoke"], id: "row-a" }), caseNamed("b", { tags: ["smoke"] }), caseNamed("c", { tags: ["slow"], id: "row-c" }), caseNamed("d")];
  const evalSets = { core: ["row-a", "b", "row-c"], extra: { description: "the rest", cases: ["d"] } };
  const names = (selector: Parameters<typeof selectCases>[1]) => selectCases(cases, selector).map((s) => s.case.name);

  test("a set selects its members by name or id, in declaration order", () => {
    assert.deepEqual(names({ set: "core", evalSets }), ["a", "b", "c"]);
    assert.deepEqual(names({ set: ["extra", "core"], evalSets }), ["a", "b", "c", "d"]);
  });

  test("a set is ANDed with --tag and --name", () => {
    assert.deepEqual(names({ set: "core", tag: "smoke", evalSets }), ["a", "b"]);
    assert.deepEqual(names({ set: "core", name: ["c", "d"], evalSets }), ["c"]);
    assert.deepEqual(names({ set: "extra", tag: "smoke", evalSets }), []);
  });

  test("an unknown set is a usage error listing the suite's sets", () => {
    assert.throws(
      () => selectCases(cases, { set: "nightly", evalSets }),
      (err: unknown) => err instanceof EvalfleetError && err.code === "USAGE" && err.message === "unknown eval set 'nightly' (the suite has: core, extra)",
    );
    assert.throws(() => selectCases(cases, { set: "x" }), /unknown eval set 'x' \(the suite defines no eval sets: declare them with defineSuite\(\{ evalSets \}\)\)/);
  });

  test("no cases selected says which set was asked for; without one, Agno's text is unchanged", () => {
    assert.equal(describeSelector({ tag: "nope", set: "core" }), "name=None, tag='nope', set='core'");
    assert.equal(describeSelector({ tag: "nope" }), "name=None, tag='nope'");
  });

  test("a suite's eval sets file selects with --set through runSuiteLocal's selection", async () => {
    const suite = await loadSuite(fixture("dataset-suite.ts"));
    assert.deepEqual([...suite.evalSets!.keys()], ["smoke", "tools"]);
    assert.equal(suite.evalSets!.get("tools")!.description, "Cases that grade tool calls");
    assert.deepEqual(
      selectCases(suite.cases, { set: "smoke", evalSets: suite.evalSets }).map((s) => s.case.name),
      ["capital_exact", "multi_turn_contains", "csv_contains"],
    );
    assert.deepEqual(
      selectCases(suite.cases, { set: "tools", tag: "csv", evalSets: suite.evalSets }).map((s) => s.case.name),
      ["csv_tools_missing"],
    );
  });
});
