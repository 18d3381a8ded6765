// The report files (coordinator/report/files.ts): the JSON report text never carries a secret.
import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonReportText } from "../../../coordinator/report/files.ts";
import { CaseResult, SuiteResult } from "../../../shared/result/result.ts";
import { registerSecret } from "../../../shared/redaction/secrets.ts";

test("the JSON report: a key in an output, an error and a reason is [REDACTED]; the rest is the report as it was", () => {
  const key = "json-key-Q7f2LmX9vT4wZ1bN8c";
  registerSecret(key);
  const suite = new SuiteResult([
    new CaseResult({ name: "leaky", output: `the key is ${key}`, error: `teardown: Error: ${key}`, judgeReason: `saw "${key}"`, judgePassed: false }),
    new CaseResult({ name: "plain", output: "Paris", reliabilityPassed: true }),
  ]);
  const text = jsonReportText(suite.toJSON());
  assert.ok(!text.includes(key), text);
  const parsed = JSON.parse(text);
  assert.equal(parsed.cases[0].output, "the key is [REDACTED]");
  assert.equal(parsed.cases[0].error, "teardown: Error: [REDACTED]");
  assert.equal(parsed.cases[0].judge_reason, 'saw "[REDACTED]"');
  assert.deepEqual(parsed.cases[1], JSON.parse(JSON.stringify(suite.toJSON().cases[1])));
  assert.ok(text.endsWith("}\n"), "two-space JSON with a final newline, as before");
});
