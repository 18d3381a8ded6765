// Fitting a result message to the broker's limit (shared/wire/fit-result.ts).
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { aggregateRepeats } from "../../../shared/trials/fold-repeats.ts";
import { fitResultForWire } from "../../../shared/wire/fit-result.ts";
import { resultToWire } from "../../../worker/pool/result-wire.ts";
import { expectationResult as result } from "../../support/results.ts";

describe("repeats on the wire", () => {
  test("a result message cuts each repeat's output so the case fits the broker's limit", () => {
    const big = "x".repeat(200_000);
    const agg = aggregateRepeats([result("z", true, { output: big }), result("z", true, { output: big }), result("z", true, { output: big })]);
    const wire = fitResultForWire(resultToWire(agg));
    const bytes = Buffer.byteLength(JSON.stringify(wire));
    assert.ok(bytes < 300 * 1024, `${bytes} bytes`);
    // The marker counts toward each share (65536 bytes), so what is kept is a little less.
    assert.match(wire.repeats![2]!.output!, /\[evalfleet: output truncated: 200000 bytes, kept the first \d+\]$/);
    assert.ok(Buffer.byteLength(wire.repeats![2]!.output!) <= 65536);
    assert.equal(wire.response, null);
  });
});

describe("a cut never splits a secret", () => {
  test("an output cut where a known key sits keeps no piece of it: the text is redacted before it is cut", async () => {
    const { truncateOutput } = await import("../../../shared/wire/fit-result.ts");
    const { registerSecret } = await import("../../../shared/redaction/secrets.ts");
    const key = "cut-key-Q7f2LmX9vT4wZ1bN8c0123";
    registerSecret(key);
    const max = 1024;
    // Every position of the key around the cut: before it, across it, after it.
    for (let at = max - 200; at < max; at += 3) {
      const text = `${"a".repeat(at)}${key}${"b".repeat(2000)}`;
      const out = truncateOutput(text, max)!;
      assert.ok(Buffer.byteLength(out) <= max);
      for (let i = 0; i + 6 <= key.length; i++) assert.ok(!out.includes(key.slice(i, i + 6)), `key at ${at}: a piece of it (${key.slice(i, i + 6)}) is left`);
      assert.match(out, /\[evalfleet: output truncated: \d+ bytes, kept the first \d+\]$/);
    }
    assert.equal(truncateOutput(`short ${key}`, max), `short ${key}`, "a text that is not cut is left to the outputs' own redaction");
  });
});

describe("the reliability check's details on the wire", () => {
  test("a run of thousands of calls keeps its first steps and failures, and says how many there were", async () => {
    const { evaluateReliability } = await import("../../../index.ts");
    const { CaseResult } = await import("../../../shared/result/result.ts");
    const tools = Array.from({ length: 5000 }, (_, i) => ({ toolName: `tool_${i % 50}`, toolArgs: { i }, result: "ok" }));
    const details = evaluateReliability({ content: "x", tools }, { expectedToolCalls: ["tool_0"], allowAdditionalToolCalls: false });
    assert.equal(details.trajectory!.steps.length, 5000);
    assert.equal(details.trajectory!.failures.length, 4900);
    const wire = fitResultForWire(resultToWire(new CaseResult({ name: "many", reliabilityPassed: false, reliability: details })));
    const t = wire.reliability!.trajectory!;
    assert.equal(t.steps.length, 1000);
    assert.equal(t.failures.length, 200);
    assert.deepEqual(t.cut, { steps: 5000, failures: 4900 });
    assert.deepEqual(t.steps[999], details.trajectory!.steps[999], "the first steps are kept as they were");
    assert.equal(wire.reliability!.failedToolCalls.length, 1001);
    assert.equal(wire.reliability!.failedToolCalls[1000], "... 3900 more");
    assert.equal(wire.reliability!.reason, details.reason);
    assert.ok(Buffer.byteLength(JSON.stringify(wire)) < 300 * 1024, `${Buffer.byteLength(JSON.stringify(wire))} bytes`);
    const small = evaluateReliability({ content: "x", tools: tools.slice(0, 3) }, { expectedToolCalls: ["tool_0"], allowAdditionalToolCalls: true });
    assert.deepEqual(fitResultForWire(resultToWire(new CaseResult({ name: "few", reliabilityPassed: true, reliability: small }))).reliability, small, "a small one crosses whole");
    assert.equal(new CaseResult({ name: "many", reliabilityPassed: false, reliability: wire.reliability }).toJSON().trajectory!.cut!.steps, 5000);
  });
});
