import type { Transcript } from "../../shared/wire/transcript.ts";

/**
 * Whether a recorded case can be graded again without its agent (`evalfleet regrade`), and why
 * not. Pure: the case as it is now, its record and its stored transcript are handed in.
 */

/** The case as the suite declares it now. */
export interface CurrentCase {
  agentId: string | null;
  teamId: string | null;
  /** SHA-256 of its input's JSON (shared/result/transcript.ts `inputDigest`). */
  inputSha256: string;
}

/** What the store recorded of the case. */
export interface RecordedCase {
  agentId: string | null;
  teamId: string | null;
  /** The case was run more than once (`--repeat`). */
  repeated: boolean;
}

/** A stored transcript as read back: the transcript, why it cannot be read, or none. */
export type StoredOutput = Transcript | { unreadable: string } | null;

/**
 * Why the case cannot be regraded, one line, or null when it can: no record in the run, no stored
 * output, an unreadable or cut one, no output to grade, a run that did not complete, a case run
 * with `--repeat`, or a case that changed in a way that needs its agent again (its input, agent or team).
 */
export function regradeSkipReason(runId: string, current: CurrentCase, record: RecordedCase | null, stored: StoredOutput): string | null {
  if (!record) return `not in run ${runId}`;
  const was = record.teamId ? `team ${record.teamId}` : `agent ${record.agentId ?? "?"}`;
  const now = current.teamId ? `team ${current.teamId}` : `agent ${current.agentId ?? "?"}`;
  if (was !== now) return `its ${current.teamId || record.teamId ? "agent or team" : "agent"} changed (${was} then, ${now} now): it needs a new agent run`;
  if (record.repeated) return "it was run with --repeat: one stored output stands for several runs";
  if (!stored) return `no output stored for it in run ${runId} (recorded without transcripts, or with --max-transcript-kb 0)`;
  if ("unreadable" in stored) return `its stored output cannot be read: ${stored.unreadable}`;
  if (stored.cut) return `its stored output was cut (${stored.cut.originalBytes} bytes over the ${stored.cut.maxBytes}-byte bound): grading it would grade another output`;
  if (!stored.inputSha256) return "its input was not stored, so a change cannot be ruled out";
  if (stored.inputSha256 !== current.inputSha256) return "its input changed: it needs a new agent run";
  if (!stored.run) return `its agent gave no output to grade${stored.error ? ` (${firstError(stored.error)})` : ""}`;
  const status = stored.run.status ?? stored.status ?? "completed";
  if (status !== "completed") return `its run ended ${status}: only completed runs are graded`;
  return null;
}

function firstError(error: string): string {
  const first = error.split("; ")[0] ?? error;
  return first.length > 200 ? `${first.slice(0, 200)}...` : first;
}
