// The API-only span helpers (shared/tracing/spans.ts): W3C traceparent in and out, and nothing recorded while tracing is off.
import { test } from "node:test";
import assert from "node:assert/strict";
import { trace } from "@opentelemetry/api";
import { contextFromTraceparent, inSpan, startSpan, traceparentOf, tracingActive } from "../../../shared/tracing/spans.ts";

const TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

test("a traceparent becomes a remote parent context; a malformed or all-zero one, none", () => {
  const sc = trace.getSpanContext(contextFromTraceparent(TP))!;
  assert.deepEqual({ ...sc }, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true });
  for (const bad of [null, "", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "00-xyz"]) {
    assert.equal(trace.getSpanContext(contextFromTraceparent(bad)), undefined, String(bad));
  }
});

test("tracing off (no SDK started): no span, no traceparent, the function still runs", async () => {
  assert.equal(tracingActive(), false);
  assert.equal(startSpan("x", {}), null);
  assert.equal(traceparentOf(), null);
  assert.equal(await inSpan("x", {}, async (span) => (span === null ? "ran" : "span")), "ran");
});
