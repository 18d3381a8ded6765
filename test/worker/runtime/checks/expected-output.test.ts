// expected_output's scoring methods as pure functions (worker/runtime/checks/expected-output.ts):
// each passing and failing with its reason. Through a case's lifecycle: expectations.test.ts.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { scoreExpectedOutput } from "../../../../index.ts";
import { resolveScoring } from "../../../../shared/datasets/expected-output-methods.ts";
import { firstDifference, numbersIn } from "../../../../worker/runtime/checks/expected-output.ts";

const score = (output: string, expected: Parameters<typeof scoreExpectedOutput>[1], method: Parameters<typeof resolveScoring>[0]) =>
  scoreExpectedOutput(output, expected, resolveScoring(method));

describe("expected_output scoring methods (pure)", () => {
  test("exact: equal after trimming passes; any other text fails, quoting both", () => {
    assert.deepEqual(score("  Paris \n", "Paris", "exact"), { passed: true, reason: "the answer equals the expected text" });
    const fail = score("paris", "Paris", "exact");
    assert.equal(fail.passed, false);
    assert.equal(fail.reason, 'the answer "paris" is not exactly the expected "Paris"');
    assert.equal(score("paris", "Paris", { method: "exact", ignoreCase: true }).passed, true);
  });

  test("contains: a substring passes; a missing one fails; ignoreCase folds letter case", () => {
    assert.deepEqual(score("The capital is Paris.", "Paris", "contains"), { passed: true, reason: 'the answer contains "Paris"' });
    assert.deepEqual(score("The capital is Lyon.", "Paris", "contains"), { passed: false, reason: 'the answer does not contain "Paris"' });
    assert.equal(score("PARIS", "paris", { method: "contains", ignoreCase: true }).passed, true);
    // A number is compared as its text.
    assert.equal(score("It costs 42 dollars", 42, "contains").passed, true);
  });

  test("regex: a match passes, a miss fails naming the pattern", () => {
    assert.deepEqual(score("Order #A-1234 has shipped.", "#A-\\d{4} has shipped", "regex"), { passed: true, reason: "the answer matches /#A-\\d{4} has shipped/" });
    assert.deepEqual(score("Order #A-12 has shipped.", "#A-\\d{4}", "regex"), { passed: false, reason: "the answer does not match /#A-\\d{4}/" });
    assert.equal(score("order #a-1234", "#A-\\d{4}", { method: "regex", ignoreCase: true }).passed, true);
  });

  test("json: key order does not matter; the answer may be fenced; the first difference is named", () => {
    assert.equal(score('{"total": 42, "items": [1, 2]}', { items: [1, 2], total: 42 }, "json").passed, true);
    assert.equal(score('Here you go:\n```json\n{"ok": true}\n```', '{"ok": true}', "json").passed, true);
    assert.deepEqual(score('{"total": 41, "items": [1, 2]}', { items: [1, 2], total: 42 }, "json"), {
      passed: false,
      reason: "the answer's JSON differs: at $.total: expected 42, got 41",
    });
    assert.equal(score("not json at all", { a: 1 }, "json").reason, 'the answer is not JSON: "not json at all"');
    assert.equal(firstDifference({ a: [1, 2] }, { a: [1] }, "$"), "at $.a: expected a list of 2, got 1 items");
    assert.equal(firstDifference({ a: 1 }, { a: 1, b: 2 }, "$"), 'at $: unexpected key "b"');
    assert.equal(firstDifference({ a: 1, c: 3 }, { a: 1 }, "$"), 'at $: missing key "c"');
  });

  test("numeric: a number within the tolerance passes (thousands separators read); others fail listing what was found", () => {
    assert.deepEqual(numbersIn("4891 x 7238 = 35,401,058.5 and -2e3"), [4891, 7238, 35401058.5, -2000]);
    assert.deepEqual(score("The product is 35,401,058.", "35401058", "numeric"), { passed: true, reason: "the answer states 35401058 (expected 35401058)" });
    assert.equal(score("about 3.14", 3.1416, { method: "numeric", tolerance: 0.01 }).passed, true);
    assert.deepEqual(score("about 3.14", 3.1416, "numeric"), { passed: false, reason: "no number in the answer is equal to 3.1416 (found: 3.14)" });
    assert.deepEqual(score("no digits here", 7, "numeric"), { passed: false, reason: "the answer holds no number (expected 7)" });
    // Float noise is not a failure.
    assert.equal(score(String(0.1 + 0.2), 0.3, "numeric").passed, true);
  });
});
