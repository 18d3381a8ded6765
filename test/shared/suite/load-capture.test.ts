// cli(cases)'s capture while a suite file is imported (shared/suite/load-capture.ts): outside a
// load the call is not captured (the script runs itself); inside, its cases and options are
// recorded; a load inside a load hands the slot back when it ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { beginLoadCapture, captureDuringLoad } from "../../../shared/suite/load-capture.ts";
import { mkCase } from "../../support/cases.ts";

test("no load in progress: cli() is not captured", () => {
  assert.equal(captureDuringLoad([mkCase("a")], {}), false);
});

test("during a load: the cases and options are recorded, absent options as null; nested loads keep their own", () => {
  const outer = beginLoadCapture();
  const inner = beginLoadCapture();
  assert.equal(captureDuringLoad([mkCase("inner")], { defaultTimeout: 3 }), true);
  inner.end();
  assert.equal(captureDuringLoad([mkCase("outer")], {}), true);
  outer.end();
  assert.equal(captureDuringLoad([mkCase("after")], {}), false, "the slot is empty again");
  assert.deepEqual([inner.capture.cases?.map((c) => c.name), inner.capture.defaultTimeout, inner.capture.judgeModel], [["inner"], 3, null]);
  assert.deepEqual([outer.capture.cases?.map((c) => c.name), outer.capture.mcpClients, outer.capture.evalFunctions], [["outer"], null, null]);
});
