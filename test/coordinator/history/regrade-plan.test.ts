// Which recorded cases a regrade can grade again from their stored outputs, and the reason for
// each one it cannot (coordinator/history/regrade-plan.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { regradeSkipReason, type CurrentCase, type RecordedCase, type StoredOutput } from "../../../coordinator/history/regrade-plan.ts";
import { inputDigest } from "../../../shared/result/transcript.ts";
import { TRANSCRIPT_VERSION, type Transcript } from "../../../shared/wire/transcript.ts";

const now: CurrentCase = { agentId: "bot", teamId: null, inputSha256: inputDigest("q") };
const rec: RecordedCase = { agentId: "bot", teamId: null, repeated: false };
const stored = (over: Partial<Transcript> = {}): Transcript => ({ v: TRANSCRIPT_VERSION, run: { content: "a", status: "completed" }, status: "completed", error: null, usage: null, cut: null, inputSha256: inputDigest("q"), ...over });
const why = (current: CurrentCase, record: RecordedCase | null, out: StoredOutput): string | null => regradeSkipReason("r1", current, record, out);

test("an unchanged case with a whole, completed stored output can be regraded", () => {
  assert.equal(why(now, rec, stored()), null);
  assert.equal(why({ ...now, agentId: null, teamId: "crew" }, { ...rec, agentId: null, teamId: "crew" }, stored()), null);
});

test("each reason a case is skipped, in one line", () => {
  assert.equal(why(now, null, null), "not in run r1");
  assert.equal(why({ ...now, agentId: "bot2" }, rec, stored()), "its agent changed (agent bot then, agent bot2 now): it needs a new agent run");
  assert.equal(why({ ...now, agentId: null, teamId: "crew" }, rec, stored()), "its agent or team changed (agent bot then, team crew now): it needs a new agent run");
  assert.equal(why(now, { ...rec, repeated: true }, stored()), "it was run with --repeat: one stored output stands for several runs");
  assert.match(why(now, rec, null)!, /^no output stored for it in run r1 /);
  assert.equal(why(now, rec, { unreadable: "transcript version 9, this evalfleet reads 1" }), "its stored output cannot be read: transcript version 9, this evalfleet reads 1");
  assert.match(why(now, rec, stored({ cut: { originalBytes: 900_000, maxBytes: 262_144, steps: ["strings"] } }))!, /^its stored output was cut \(900000 bytes over the 262144-byte bound\)/);
  assert.equal(why(now, rec, stored({ inputSha256: undefined })), "its input was not stored, so a change cannot be ruled out");
  assert.equal(why({ ...now, inputSha256: inputDigest("other") }, rec, stored()), "its input changed: it needs a new agent run");
  assert.equal(why(now, rec, stored({ run: null, error: "agent: Error: boom; cleanup: x" })), "its agent gave no output to grade (agent: Error: boom)");
  assert.equal(why(now, rec, stored({ run: { content: "x", status: "paused" } })), "its run ended paused: only completed runs are graded");
});
