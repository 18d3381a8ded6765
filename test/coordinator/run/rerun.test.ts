// Re-run selection (coordinator/run/rerun.ts): which recorded cases --rerun-failed, --rerun-errors
// and --rerun-incomplete take, and matching them to the suite as it is now (by name and dataset id),
// in declaration order, with the cases the suite no longer has listed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Case } from "../../../index.ts";
import { selectCases } from "../../../coordinator/run/select.ts";
import { matchRerun, rerunTargets, type RecordedOutcome } from "../../../coordinator/run/rerun.ts";
import { StubAgent } from "../../support/doubles.ts";

const rec = (name: string, o: Partial<RecordedOutcome> = {}): RecordedOutcome => ({ name, passed: true, skipped: false, error: null, caseId: null, ...o });
const records = [
  rec("ok"),
  rec("wrong", { passed: false }),
  rec("boom", { passed: false, error: "agent: exploded" }),
  rec("slow", { passed: false, error: "timeout: exceeded 5s" }),
  rec("never", { passed: false, skipped: true, error: "cancelled: suite cancelled before this case started" }),
  rec("row", { passed: false, caseId: "tc-2" }),
];

test("failed takes every case that ran and did not pass (errors and timeouts included); errors only those with an error; incomplete the skipped and the lost", () => {
  assert.deepEqual(rerunTargets("failed", records, null).map((t) => t.name), ["wrong", "boom", "slow", "row"]);
  assert.deepEqual(rerunTargets("errors", records, null).map((t) => t.name), ["boom", "slow"]);
  const selection = ["ok", "wrong", "boom", "slow", "never", "row", "lost_a", "lost_b"];
  assert.deepEqual(rerunTargets("incomplete", records, selection).map((t) => t.name), ["never", "lost_a", "lost_b"]);
  assert.deepEqual(rerunTargets("incomplete", records, null).map((t) => t.name), ["never"]);
  assert.deepEqual(rerunTargets("failed", [rec("a"), rec("b")], null), []);
  assert.deepEqual(rerunTargets("failed", records, null).find((t) => t.name === "row"), { name: "row", caseId: "tc-2" });
});

test("targets match by name and dataset id, in the suite's current declaration order; the ones gone are listed; other filters AND", () => {
  const agent = new StubAgent();
  const mk = (name: string, id?: string, tags: string[] = []): Case => new Case({ name, id, agent, input: "q", expectedOutput: "x", tags });
  // The suite now: declared in another order, `wrong` removed, `row` has another id, `boom` is tagged.
  const cases = [mk("slow"), mk("row", "tc-9"), mk("boom", undefined, ["hot"]), mk("ok"), mk("new")];
  const all = selectCases(cases);
  const targets = rerunTargets("failed", records, null);
  const m = matchRerun(all, all, targets);
  assert.deepEqual(m.selected.map((s) => [s.index, s.case.name]), [[0, "slow"], [2, "boom"]]);
  assert.deepEqual(m.missing, ["wrong", "row (id tc-2)"]);
  const tagged = matchRerun(selectCases(cases, { tag: "hot" }), all, targets);
  assert.deepEqual(tagged.selected.map((s) => s.case.name), ["boom"], "ANDed with --tag");
  assert.deepEqual(tagged.missing, ["wrong", "row (id tc-2)"], "left out by --tag is not missing");
  const same = matchRerun(selectCases([mk("row", "tc-2")]), selectCases([mk("row", "tc-2")]), targets);
  assert.deepEqual(same.selected.map((s) => s.case.name), ["row"], "the same id matches");
});
