// A case message written as text is the JSON.stringify of the message, fields in the schema's
// order, and the worker's schema reads it back, whatever the names and with or without a trace.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CaseMessageBody } from "../../../coordinator/distributed/case-message-body.ts";
import { CaseMessageSchema, NATS_PROTOCOL } from "../../../shared/wire/nats.ts";
import { RunTokens, newRunKey } from "../../../shared/wire/case-token.ts";

describe("CaseMessageBody", () => {
  test("is JSON.stringify of the message, which the schema reads back", () => {
    const tokens = new RunTokens(newRunKey(), "run-1");
    const fingerprint = "f".repeat(64);
    const traceparent = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    const names = ["alpha", 'quo"te\\back', "é ü 日本", "line\nbreak \u2028 \u0000", ""];
    for (const trace of [null, traceparent]) {
      const body = new CaseMessageBody("run-1", fingerprint, trace);
      for (const [i, name] of names.entries()) {
        for (const trial of [1, 7]) {
          const message = { v: NATS_PROTOCOL, runId: "run-1", index: i * 1000, trial, name, fingerprint, token: tokens.token(i * 1000, trial), ...(trace ? { traceparent: trace } : {}) };
          const text = body.encode(i * 1000, trial, name, message.token);
          assert.equal(text, JSON.stringify(message));
          assert.deepEqual(CaseMessageSchema.parse(JSON.parse(text)), message);
        }
      }
    }
  });
});
