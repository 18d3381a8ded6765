// ResultCollector and reassemble (coordinator/run/reassemble.ts): one result per selected case, in
// declaration order, whatever the arrival order, duplicates and gaps.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, CaseResult, selectCases } from "../../../index.ts";
import { ResultCollector, reassemble } from "../../../coordinator/run/reassemble.ts";
import { mkCase } from "../../support/cases.ts";
import { StubAgent } from "../../support/doubles.ts";
import { seededRandom as prng } from "../../../shared/seeded-random.ts";

function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

describe("ResultCollector / reassemble", () => {
  const suite = [mkCase("a", { tags: ["t1"] }), mkCase("b"), mkCase("c", { tags: ["t2"] }), new Case({ name: "d", input: "q", team: new StubAgent({ id: "the-team" }), criteria: "x" })];
  const selected = selectCases(suite);
  const resultFor = (i: number, extra: Partial<ConstructorParameters<typeof CaseResult>[0]> = {}) =>
    new CaseResult({ name: suite[i]!.name, index: i, judgePassed: true, sessionId: `eval-${suite[i]!.name}-00000000`, durationSeconds: 1, ...extra });

  test("the first result per index wins; a duplicate is refused", () => {
    const col = new ResultCollector(selected);
    const first = resultFor(1, { worker: "w1" });
    assert.equal(col.add(first), "accepted");
    assert.equal(col.add(resultFor(1, { worker: "w2" })), "duplicate");
    assert.equal(col.has(1), true);
    assert.equal(col.size, 1);
    const out = col.finish("lost");
    assert.equal(out[1], first);
    assert.equal(out[1]!.worker, "w1");
  });

  test("an unknown index or a name mismatch is refused", () => {
    const col = new ResultCollector(selectCases(suite, { name: ["a", "c"] }));
    assert.equal(col.add(new CaseResult({ name: "b", index: 1 })), "unknown", "index not selected");
    assert.equal(col.add(new CaseResult({ name: "zz", index: 99 })), "unknown", "index not in the suite");
    assert.equal(col.add(new CaseResult({ name: "c", index: 0 })), "unknown", "name does not match the index");
    assert.equal(col.size, 0);
    assert.equal(col.add(new CaseResult({ name: "c", index: 2 })), "accepted");
    assert.equal(col.size, 1);
  });

  test("missing cases become skipped results with the reason, no session, duration 0", () => {
    const col = new ResultCollector(selected);
    col.add(resultFor(2));
    assert.equal(col.complete, false);
    assert.deepEqual(col.missing().map((s) => s.index), [0, 1, 3]);
    const out = col.finish("worker lost");
    assert.deepEqual(out.map((r) => r.name), ["a", "b", "c", "d"]);
    for (const i of [0, 1, 3]) {
      const r = out[i]!;
      assert.equal(r.skipped, true);
      assert.equal(r.error, "skipped: worker lost");
      assert.equal(r.sessionId, "");
      assert.equal(r.durationSeconds, 0);
      assert.equal(r.passed, false);
      assert.equal(r.index, i);
    }
    assert.deepEqual(out[0]!.tags, ["t1"], "tags are kept");
    assert.equal(out[0]!.agentId, "stub-agent");
    assert.equal(out[0]!.teamId, null);
    assert.equal(out[3]!.teamId, "the-team", "a team case keeps its team id");
    assert.equal(out[3]!.agentId, null);
    assert.equal(out[2]!.skipped, false);
  });

  test("declaration order regardless of arrival order", () => {
    const col = new ResultCollector(selected);
    for (const i of [3, 0, 2, 1]) assert.equal(col.add(resultFor(i)), "accepted");
    assert.equal(col.complete, true);
    assert.deepEqual(col.missing(), []);
    assert.deepEqual(col.finish("unused").map((r) => r.index), [0, 1, 2, 3]);
  });

  test("reassemble orders by index and fills gaps", () => {
    const sel = selectCases(suite, { name: ["d", "a"] });
    const held = new Map([[3, resultFor(3)]]);
    const out = reassemble([...sel].reverse(), (i) => held.get(i), "suite cancelled");
    assert.deepEqual(out.map((r) => [r.name, r.skipped, r.error]), [["a", true, "skipped: suite cancelled"], ["d", false, null]]);
  });

  test("property: 500 shuffled arrivals with duplicates fold into one result per case, in order", () => {
    const rand = prng(20260823);
    const big = Array.from({ length: 300 }, (_, i) => mkCase(`case-${i}`, { tags: i % 3 === 0 ? ["skip-me"] : ["run"] }));
    const sel = selectCases(big, { tag: "run" });
    assert.equal(sel.length, 200);
    const arrivals: CaseResult[] = [];
    // Every selected case but a few arrives 1-3 times; some unknown results arrive too.
    const neverArrive = new Set(sel.filter(() => rand() < 0.05).map((s) => s.index));
    for (const s of sel) {
      if (neverArrive.has(s.index)) continue;
      arrivals.push(new CaseResult({ name: s.case.name, index: s.index, judgePassed: true, attempts: 1 }));
    }
    while (arrivals.length < 480) {
      const s = sel[Math.floor(rand() * sel.length)]!;
      if (neverArrive.has(s.index)) continue;
      arrivals.push(new CaseResult({ name: s.case.name, index: s.index, judgePassed: rand() < 0.5, attempts: 2 }));
    }
    while (arrivals.length < 500) {
      const i = Math.floor(rand() * big.length);
      arrivals.push(i % 3 === 0 ? new CaseResult({ name: big[i]!.name, index: i }) : new CaseResult({ name: "impostor", index: i }));
    }
    shuffle(arrivals, rand);
    assert.equal(arrivals.length, 500);

    const col = new ResultCollector(sel);
    const winner = new Map<number, CaseResult>();
    const outcomes = { accepted: 0, duplicate: 0, unknown: 0 };
    for (const r of arrivals) {
      const selectedHere = sel.some((s) => s.index === r.index && s.case.name === r.name);
      const expected = !selectedHere ? "unknown" : winner.has(r.index) ? "duplicate" : "accepted";
      const got = col.add(r);
      assert.equal(got, expected, `index ${r.index} (${r.name})`);
      outcomes[got]++;
      if (got === "accepted") winner.set(r.index, r);
    }
    assert.equal(outcomes.accepted, sel.length - neverArrive.size);
    assert.equal(outcomes.unknown, 20);
    assert.ok(outcomes.duplicate > 0);
    assert.ok(neverArrive.size > 0, "the seed leaves some cases without a result");

    const out = col.finish("lost in transit");
    assert.equal(out.length, sel.length, "every selected case is accounted for exactly once");
    assert.deepEqual(out.map((r) => r.index), sel.map((s) => s.index), "declaration order");
    for (const r of out) {
      if (neverArrive.has(r.index)) {
        assert.equal(r.skipped, true);
        assert.equal(r.error, "skipped: lost in transit");
      } else {
        assert.equal(r, winner.get(r.index), "the first arrival wins");
      }
    }
  });
});
