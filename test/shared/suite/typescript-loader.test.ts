import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { isTypeScriptFile } from "../../../shared/suite/typescript-loader.ts";

describe("isTypeScriptFile", () => {
  test("TypeScript extensions need tsx; JavaScript ones load with plain Node", () => {
    for (const f of ["suite.ts", "suite.mts", "suite.cts", "suite.tsx", "/a/b/Suite.TS"]) assert.equal(isTypeScriptFile(f), true, f);
    for (const f of ["suite.js", "suite.mjs", "suite.cjs", "suite.ts.js", "ts", "suite.json"]) assert.equal(isTypeScriptFile(f), false, f);
  });
});
