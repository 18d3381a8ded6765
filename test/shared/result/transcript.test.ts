// Bounding a case's transcript (shared/result/transcript.ts): whole when it fits; otherwise cut in steps,
// each marked, always within the bound; and read back only in its own version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { boundTranscript, parseTranscript, transcriptBytes, transcriptToRunOutput } from "../../../shared/result/transcript.ts";
import { TRANSCRIPT_VERSION, type Transcript } from "../../../shared/wire/transcript.ts";

function transcript(run: Transcript["run"], error: string | null = null): Transcript {
  return { v: TRANSCRIPT_VERSION, run, status: "completed", error, usage: null, cut: null };
}

test("a transcript within its bound is kept as is; a bound of 0 keeps none", () => {
  const t = transcript({ content: "hi", tools: [{ toolName: "a", toolArgs: { x: 1 }, result: 2 }] });
  assert.equal(boundTranscript(t, 10_000), t);
  assert.equal(boundTranscript(t, 0), null);
});

test("long texts are cut first, each marker naming the text's own length; the tool calls stay", () => {
  const t = transcript({ content: "x".repeat(40_000), tools: [{ toolName: "lookup", toolArgs: { q: "q" }, result: "r".repeat(30_000) }] });
  const cut = boundTranscript(t, 12_000)!;
  assert.ok(transcriptBytes(cut) <= 12_000);
  assert.deepEqual(cut.cut?.steps, ["strings"]);
  assert.equal(cut.cut?.originalBytes, transcriptBytes(t));
  assert.match(String(cut.run!.content), /\[evalfleet: cut, 40000 characters\]$/);
  assert.match(String(cut.run!.tools![0]!.result), /\[evalfleet: cut, 30000 characters\]$/);
  assert.deepEqual(cut.run!.tools![0]!.toolArgs, { q: "q" });
});

test("many messages go before the tool calls, members before tools, and at last only the content and status stay", () => {
  const messages = Array.from({ length: 400 }, (_, i) => ({ role: "user", content: `message ${i} ${"m".repeat(200)}` }));
  const members = Array.from({ length: 50 }, (_, i) => ({ agentId: `m${i}`, content: "c".repeat(200), messages: messages.slice(0, 5) }));
  const tools = Array.from({ length: 5 }, (_, i) => ({ toolName: `t${i}`, toolArgs: { i } }));
  const t = transcript({ content: "final", tools, messages, memberResponses: members });
  const a = boundTranscript(t, 10_000)!;
  assert.ok(transcriptBytes(a) <= 10_000);
  assert.deepEqual(a.cut?.steps, ["strings", "messages", "members"]);
  assert.equal(a.run!.messages, null);
  assert.equal(a.run!.tools!.length, 5);
  const b = boundTranscript(t, 300)!;
  assert.ok(transcriptBytes(b) <= 300, `within 300 bytes: ${transcriptBytes(b)}`);
  assert.deepEqual(b.cut?.steps, ["strings", "messages", "members", "tools"]);
  assert.deepEqual(b.run, { content: "final", messages: null, memberResponses: null, tools: null });
  const long = transcript({ content: "final ".repeat(200), tools, messages });
  const d = boundTranscript(long, 250)!;
  assert.ok(transcriptBytes(d) <= 250, `within 250 bytes: ${transcriptBytes(d)}`);
  assert.deepEqual(d.cut?.steps, ["strings", "messages", "members", "tools", "all"]);
  assert.deepEqual(Object.keys(d.run!), ["content", "status"]);
  assert.match(String(d.run!.content), /\[evalfleet: cut, 1200 characters\]$/);
  const c = boundTranscript(t, 100)!;
  assert.ok(transcriptBytes(c) <= 256, "below its envelope (about 200 bytes) a bound keeps only the envelope");
  assert.equal(c.run, null);
});

test("a stored transcript of another version, or of the wrong shape, is refused saying why; the run reads back as the agent's output", () => {
  assert.deepEqual(parseTranscript({ v: 99 }), { ok: false, why: "transcript version 99, this evalfleet reads 1" });
  const bad = parseTranscript({ v: 1, run: { tools: "no" }, status: null, error: null, usage: null, cut: null });
  assert.equal(bad.ok, false);
  const good = parseTranscript(JSON.parse(JSON.stringify(transcript({ content: "ok", memberResponses: [{ content: "m", memberResponses: [{ content: "deep" }] }] }))));
  assert.ok(good.ok);
  assert.equal(transcriptToRunOutput(good.transcript)?.memberResponses?.[0]?.memberResponses?.[0]?.content, "deep");
  assert.equal(transcriptToRunOutput(transcript(null)), null);
});
