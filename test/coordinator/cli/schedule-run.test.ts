// A command-line run's schedule (coordinator/cli/schedule-run.ts) without recorded durations: the
// declared order, no ETA and no note, whatever was selected; a random order is still shuffled.
import { test } from "node:test";
import assert from "node:assert/strict";
import { scheduleRun } from "../../../coordinator/cli/schedule-run.ts";
import { compileRunSettings } from "../../../shared/run-settings.ts";
import type { LoadedSuite } from "../../../shared/suite/suite.ts";
import { mkCase } from "../../support/cases.ts";

const cases = Array.from({ length: 30 }, (_, i) => mkCase(`c${i}`));
const suite = { name: "s", path: "/s.ts", cases } as unknown as LoadedSuite;
const selected = cases.map((c, index) => ({ index, case: c }));
const warnings: string[] = [];

test("no store: the declared order (also from a selection out of order), no ETA, no note", async () => {
  for (const order of ["history", "declared"]) {
    const settings = compileRunSettings({ order });
    const inOrder = await scheduleRun(suite, selected, settings, null, 4, (l) => warnings.push(l));
    assert.deepEqual(inOrder.started.map((s) => s.index), selected.map((s) => s.index));
    assert.notEqual(inOrder.started, selected, "a new list, the caller's is not handed back");
    assert.deepEqual([inOrder.eta, inOrder.note], [null, null]);
    const shuffled = await scheduleRun(suite, [...selected].reverse(), settings, null, 4, (l) => warnings.push(l));
    assert.deepEqual(shuffled.started.map((s) => s.index), selected.map((s) => s.index));
  }
  assert.deepEqual(warnings, []);
});

test("no store, a random order: shuffled by its seed, and said", async () => {
  const settings = compileRunSettings({ order: "random:7" });
  const a = await scheduleRun(suite, selected, settings, null, 4, () => undefined);
  const b = await scheduleRun(suite, selected, settings, null, 4, () => undefined);
  assert.deepEqual(a.started.map((s) => s.index), b.started.map((s) => s.index));
  assert.notDeepEqual(a.started.map((s) => s.index), selected.map((s) => s.index));
  assert.match(a.note ?? "", /^order: random:7 /);
});
