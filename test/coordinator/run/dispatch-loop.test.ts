// The dispatch loop's suite abort (spec M1) when the raw response is not there: a thread or a
// worker sends the run's status with the result (the response stays where the case ran).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { CaseResult } from "../../../shared/result/result.ts";
import { aggregateRepeats } from "../../../shared/trials/fold-repeats.ts";
import { endedCancelled, runSelected } from "../../../coordinator/run/dispatch-loop.ts";
import { mkCase } from "../../support/cases.ts";

describe("suite abort after a cancelled run (M1) from the result's run status", () => {
  test("a result whose run status is cancelled stops the suite though it carries no response", async () => {
    const selected = ["first", "interrupted", "never_run"].map((name, index) => ({ index, case: mkCase(name) }));
    const ran: string[] = [];
    const suite = await runSelected(selected, async (sel) => {
      ran.push(sel.case.name);
      const r = new CaseResult({ name: sel.case.name, index: sel.index, judgePassed: true });
      if (sel.case.name === "interrupted") Object.assign(r, { runStatus: "cancelled", response: null, judgePassed: null, error: "agent: run cancelled" });
      return r;
    }, { concurrency: 1 });
    assert.deepEqual(ran, ["first", "interrupted"]);
    assert.deepEqual(
      suite.results.map((r) => [r.name, r.skipped, r.error]),
      [
        ["first", false, null],
        ["interrupted", false, "agent: run cancelled"],
        ["never_run", true, "skipped: suite aborted after cancelled run"],
      ],
    );
    assert.equal(suite.cancelled, false, "an abort after a cancelled run is not a cancelled suite");
  });

  test("the status wins over the response; an inline result without one is read from its response", () => {
    assert.equal(endedCancelled(new CaseResult({ name: "a", runStatus: "cancelled" })), true);
    assert.equal(endedCancelled(new CaseResult({ name: "b", response: { status: "cancelled" } })), true);
    assert.equal(endedCancelled(new CaseResult({ name: "c", runStatus: "completed", response: { status: "completed" } })), false);
    assert.equal(endedCancelled(new CaseResult({ name: "d" })), false);
  });

  test("repeats: any run that ended cancelled marks the case, whichever run its entry shows", () => {
    const run = (status: string, error: string | null) => new CaseResult({ name: "r", runStatus: status, error, judgePassed: error ? null : true });
    const folded = aggregateRepeats([run("completed", "timeout: exceeded 1s"), run("cancelled", "agent: run cancelled")]);
    assert.equal(folded.error, "timeout: exceeded 1s", "the entry shows the first failing run");
    assert.equal(folded.runStatus, "cancelled");
  });
});
