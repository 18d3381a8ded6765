/**
 * Unknown options are errors (issue 32): the nearest-key hint (shared/near-miss.ts), the key check
 * and its error (shared/option-keys.ts), and the option objects of shared/: `new Case`,
 * `defineSuite`, `dataset()`.
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Case, CaseValidationError, ConfigError, ErrorCode, dataset, defineSuite } from "../../index.ts";
import { didYouMean, editDistance, nearestKey } from "../../shared/near-miss.ts";
import { firstUnknownKey, optionKeys, unknownOption } from "../../shared/option-keys.ts";
import { ROW_FIELDS } from "../../shared/datasets/row-fields.ts";
import { CASE_OPTION_KEYS } from "../../shared/case/case-option-checks.ts";
import { SUITE_OPTION_KEYS } from "../../shared/suite/suite-definition.ts";
import { StubAgent } from "../support/doubles.ts";

describe("nearestKey", () => {
  test("the usual slips find their key", () => {
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(nearestKey("scoringMethod", CASE_OPTION_KEYS), "outputScoring");
    assert.equal(nearestKey("tag", CASE_OPTION_KEYS), "tags");
    assert.equal(nearestKey("timeout", CASE_OPTION_KEYS), "timeoutSeconds");
    assert.equal(nearestKey("critera", CASE_OPTION_KEYS), "criteria");
    assert.equal(nearestKey("expected_tool_calls", CASE_OPTION_KEYS), "expectedToolCalls");
    assert.equal(nearestKey("defaultTimout", SUITE_OPTION_KEYS), "defaultTimeout");
    assert.equal(nearestKey("expected_tool", ROW_FIELDS), "expected_tools");
    assert.equal(nearestKey("expectedTools", ROW_FIELDS), "expected_tools");
    assert.equal(nearestKey("rbac", ROW_FIELDS), "RBAC");
    assert.equal(nearestKey("created_at", ROW_FIELDS), "createdAt");
  });

  test("nothing close, no hint", () => {
    assert.equal(nearestKey("zzqx", CASE_OPTION_KEYS), null);
    assert.equal(didYouMean("zzqx", CASE_OPTION_KEYS), "");
    assert.equal(didYouMean("tag", CASE_OPTION_KEYS), " (did you mean tags?)");
  });
});

describe("the key check", () => {
  const known = optionKeys<{ a?: number; bb?: string }>({ a: true, bb: true });
  test("finds the first own string key not known, ignores inherited and symbol keys", () => {
    assert.deepEqual([...known], ["a", "bb"]);
    assert.equal(firstUnknownKey({ a: 1, bb: "x" }, known), null);
    assert.equal(firstUnknownKey({ a: 1, b: "x" }, known), "b");
    assert.equal(firstUnknownKey({ a: 1, c: undefined }, known), "c", "an unknown key set to undefined is still a slip");
    assert.equal(firstUnknownKey(Object.create({ zz: 1 }) as object, known), null);
    assert.equal(firstUnknownKey({ [Symbol("s")]: 1 }, known), null);
  });
  test("the error names who, the key and the nearest known key, with a stable code", () => {
    const err = unknownOption("thing 'x'", "b", known);
    assert.ok(err instanceof ConfigError);
    assert.equal(err.code, ErrorCode.ConfigInvalid);
    assert.equal(err.message, "thing 'x': unknown option 'b' (did you mean bb?)");
    assert.equal(err.details.field, "b");
    const caseErr = unknownOption("case 'a'", "b", known, "case", "a");
    assert.ok(caseErr instanceof CaseValidationError);
    assert.deepEqual(caseErr.details, { case: "a", field: "b" });
  });
});

describe("option objects of shared/ refuse unknown keys", () => {
  const agent = new StubAgent();
  const refused = (build: () => unknown, type: Function, message: string): void => {
    assert.throws(build, (err: unknown) => {
      assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
      assert.equal((err as Error).message, message);
      return true;
    });
  };

  test("new Case: the issue's three slips, before any other check", () => {
    refused(() => new Case({ name: "a", input: "q", agent, expectedOutput: "4", scoringMethod: "contains" } as never), CaseValidationError, "case 'a': unknown option 'scoringMethod' (did you mean outputScoring?)");
    refused(() => new Case({ name: "a", input: "q", agent, criteria: "c", tag: ["smoke"] } as never), CaseValidationError, "case 'a': unknown option 'tag' (did you mean tags?)");
    refused(() => new Case({ name: "a", input: "q", agent, criteria: "c", timeout: 1 } as never), CaseValidationError, "case 'a': unknown option 'timeout' (did you mean timeoutSeconds?)");
    // A misspelt check is named as such, not as "has no checks".
    refused(() => new Case({ name: "a", input: "q", agent, critera: "c" } as never), CaseValidationError, "case 'a': unknown option 'critera' (did you mean criteria?)");
    assert.throws(() => new Case({ name: "a", input: "q", agent, critera: "c" } as never), (err: unknown) => (err as CaseValidationError).code === ErrorCode.CaseInvalid && (err as CaseValidationError).details.field === "critera");
    // Every known option still builds.
    assert.equal(new Case({ name: "a", input: "q", agent, criteria: "c", tags: ["smoke"], timeoutSeconds: 1 }).timeoutSeconds, 1);
  });

  test("defineSuite names the suite", () => {
    refused(() => defineSuite({ name: "math", cases: [], defaultTimout: 5 } as never), ConfigError, "suite 'math': unknown option 'defaultTimout' (did you mean defaultTimeout?)");
    refused(() => defineSuite({ cases: [], judge: null } as never), ConfigError, "defineSuite: unknown option 'judge' (did you mean judgeModel?)");
    assert.equal(defineSuite({ name: "math", cases: [], defaultTimeout: 5 }).defaultTimeout, 5);
  });

  test("dataset() names the file", () => {
    refused(() => dataset("cases.jsonl", { scoringMethod: "contains" } as never), ConfigError, "dataset 'cases.jsonl': unknown option 'scoringMethod' (did you mean scoring?)");
    refused(() => dataset("cases.jsonl", { tag: ["x"] } as never), ConfigError, "dataset 'cases.jsonl': unknown option 'tag' (did you mean tags?)");
    assert.equal(dataset("cases.jsonl", { scoring: "contains" }).scoring, "contains");
  });
});
