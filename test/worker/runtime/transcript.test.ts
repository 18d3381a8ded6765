// What a stored transcript keeps of each tool call (worker/runtime/transcript.ts) is what the
// trajectory check reads: grading the stored output (a regrade) gives the verdict, the reason and
// the steps of grading the live one, members, errors, results and arguments given as JSON text included.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { Case, evaluateReliability, runCase, type RunOutput } from "../../../index.ts";
import { transcriptToRunOutput } from "../../../shared/result/transcript.ts";
import type { ReliabilityOptions } from "../../../worker/runtime/checks/reliability.ts";
import { StubAgent } from "../../support/doubles.ts";

const output: RunOutput = {
  content: "done",
  status: "completed",
  tools: [
    { toolName: "search", toolArgs: '{"q": "flights to Oslo"}' as unknown as Record<string, unknown>, result: { flights: 3 } },
    { toolName: "get_weather", toolArgs: { city: "Oslo" }, result: null, toolCallError: "HTTP 503" },
    { toolName: "get_weather", toolArgs: { city: "Oslo" }, result: "snow" },
  ],
  messages: [{ role: "assistant", toolCalls: [{ id: "c9", function: { name: "delete_user", arguments: '{"id": 3}' } }] }],
  memberResponses: [{ agentId: "booker", content: "booked", tools: [{ toolName: "book", toolArgs: { city: "Oslo", seats: 2 }, result: { ok: true } }] }],
};

const checks: ReliabilityOptions[] = [
  { expectedToolCalls: [{ name: "search", args: { q: /oslo/i } }, { name: "get_weather", result: "snow" }, { name: "booker/book", args: { seats: 2 } }], allowAdditionalToolCalls: true, toolCallOrder: "in_order" },
  { expectedToolCalls: ["search", "get_weather", "book"], allowAdditionalToolCalls: false, toolCallOrder: "exact", toolCallsMustSucceed: true, forbiddenToolCalls: [{ name: "delete_user", args: { id: 3 } }], maxToolCalls: 3 },
];

describe("the stored transcript and the trajectory check", () => {
  test("every call keeps its name, arguments (JSON text parsed), result, error and member; a regrade grades it as the live run was", async () => {
    const c = new Case({ name: "oslo", input: "trip to Oslo", agent: new StubAgent({ output }), expectedToolCalls: ["search"] });
    const result = await runCase(c, { maxTranscriptBytes: 64 * 1024 });
    const tools = result.transcript!.run!.tools!;
    assert.deepEqual(tools[0], { toolName: "search", toolArgs: { q: "flights to Oslo" }, result: { flights: 3 } });
    assert.deepEqual(tools[1], { toolName: "get_weather", toolArgs: { city: "Oslo" }, result: null, toolCallError: "HTTP 503" });
    assert.equal(result.transcript!.run!.memberResponses![0]!.agentId, "booker");
    const stored = transcriptToRunOutput(JSON.parse(JSON.stringify(result.transcript)))!;
    for (const options of checks) {
      const live = evaluateReliability(output, options);
      assert.deepEqual(evaluateReliability(stored, options), live, JSON.stringify(options.toolCallOrder));
    }
    assert.equal(evaluateReliability(stored, checks[0]!).passed, true);
    assert.deepEqual(
      evaluateReliability(stored, checks[1]!).trajectory!.failures.map((f) => f.kind),
      ["unexpected", "forbidden", "max_tool_calls", "tool_error"],
      "the errored attempt, the request that never ran and the bound are all in the stored output",
    );
  });
});
