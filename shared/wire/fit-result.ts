// runs in: both
import { redactText } from "../redaction/secrets.ts";
import type { CaseResultData, ReliabilityDetails } from "./result-data.ts";

/**
 * Bounds on what a result carries across a boundary: the output, the texts, the whole message.
 * No I/O; a text about to be cut passes the process's redactor first.
 */

/** Largest case output kept in a result, in bytes (UTF-8); longer output is cut with a marker. */
export const MAX_OUTPUT_BYTES = 256 * 1024;
/** Largest text field other than the output kept in a result (errors, reasons), in bytes. */
export const MAX_TEXT_BYTES = 16 * 1024;
/** Largest result message, in bytes: well under NATS's default 1 MiB payload limit. */
export const MAX_RESULT_MESSAGE_BYTES = 768 * 1024;

/** Most steps of a reliability check's trajectory a result carries across (a run of more calls keeps its first ones). */
export const MAX_TRAJECTORY_STEPS = 1000;
/** Most failures of a reliability check's trajectory a result carries across. */
export const MAX_TRAJECTORY_FAILURES = 200;
/** Most names in each of the reliability check's lists (passed, failed, additional, missing) a result carries across. */
const MAX_TOOL_NAMES = 1000;

/** A list of names cut to {@link MAX_TOOL_NAMES}, its last entry saying how many more there were. */
function names(list: readonly string[]): string[] {
  return list.length > MAX_TOOL_NAMES ? [...list.slice(0, MAX_TOOL_NAMES), `... ${list.length - MAX_TOOL_NAMES} more`] : [...list];
}

/** The reliability details within their bounds: the reason cut as texts are, the lists and the trajectory to their first entries. */
export function fitReliability(r: ReliabilityDetails | null): ReliabilityDetails | null {
  if (!r) return null;
  const t = r.trajectory;
  const cut = t && (t.steps.length > MAX_TRAJECTORY_STEPS || t.failures.length > MAX_TRAJECTORY_FAILURES);
  return {
    ...r,
    passedToolCalls: names(r.passedToolCalls),
    failedToolCalls: names(r.failedToolCalls),
    additionalToolCalls: names(r.additionalToolCalls),
    missingToolCalls: names(r.missingToolCalls),
    ...(r.reason !== undefined ? { reason: truncateOutput(r.reason ?? null, MAX_TEXT_BYTES) } : {}),
    ...(t && cut
      ? {
          trajectory: {
            ...t,
            steps: t.steps.slice(0, MAX_TRAJECTORY_STEPS),
            failures: t.failures.slice(0, MAX_TRAJECTORY_FAILURES).map((f) => ({ ...f, message: truncateOutput(f.message, MAX_TEXT_BYTES)! })),
            cut: { steps: t.steps.length, failures: t.failures.length },
          },
        }
      : {}),
  };
}

/**
 * Makes a result fit on the wire: the output is cut to `maxOutputBytes` (default
 * {@link MAX_OUTPUT_BYTES}, `--max-output-kb`; shared with its
 * repeats, so that the case and its repeats stay within it together), errors and reasons to
 * {@link MAX_TEXT_BYTES} (evaluation functions' reasons too), the reliability check's lists and
 * trajectory to their first entries ({@link fitReliability}), a scorer's detail and a case's metadata
 * over that size are replaced by a note, the raw response
 * is dropped (it never reaches the report). Each cut ends with a marker saying so.
 */
export function fitResultForWire(result: CaseResultData, maxOutputBytes: number = MAX_OUTPUT_BYTES): CaseResultData {
  const repeats = result.repeats ?? null;
  const share = repeats && repeats.length > 0 ? Math.max(1024, Math.floor(maxOutputBytes / (repeats.length + 1))) : maxOutputBytes;
  return {
    ...result,
    response: null,
    output: truncateOutput(result.output, share),
    ...(repeats && repeats.length > 0 ? { repeats: repeats.map((r) => ({ ...r, output: truncateOutput(r.output, share) })) } : {}),
    error: truncateOutput(result.error, MAX_TEXT_BYTES),
    judgeReason: truncateOutput(result.judgeReason, MAX_TEXT_BYTES),
    toolsCalled: result.toolsCalled.length > 1000 ? [...result.toolsCalled.slice(0, 1000), `... ${result.toolsCalled.length - 1000} more`] : result.toolsCalled,
    reliability: fitReliability(result.reliability),
    score: result.score
      ? {
          ...result.score,
          reason: truncateOutput(result.score.reason ?? null, MAX_TEXT_BYTES),
          detail:
            result.score.detail && Buffer.byteLength(JSON.stringify(result.score.detail)) > MAX_TEXT_BYTES
              ? { truncated: "detail over 16 KiB left out by evalfleet" }
              : (result.score.detail ?? null),
        }
      : null,
    ...(result.expectations?.evalFunctions
      ? { expectations: { ...result.expectations, evalFunctions: result.expectations.evalFunctions.map((f) => ({ ...f, reason: truncateOutput(f.reason, MAX_TEXT_BYTES)! })) } }
      : {}),
    ...(result.metadata && Buffer.byteLength(JSON.stringify(result.metadata)) > MAX_TEXT_BYTES ? { metadata: { truncated: "metadata over 16 KiB left out by evalfleet" } } : {}),
  };
}

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes (default {@link MAX_OUTPUT_BYTES}), marker
 * included: the end says how long the text was and how much was kept. Idempotent: a text already
 * within the limit is returned as is. A text that is cut has its secrets removed first
 * (shared/redaction/secrets.ts): a cut through a secret would leave a piece of it no redactor recognises.
 */
export function truncateOutput(given: string | null, maxBytes: number = MAX_OUTPUT_BYTES): string | null {
  if (given === null) return null;
  if (Buffer.byteLength(given, "utf8") <= maxBytes) return given;
  const text = redactText(given);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const markerFor = (kept: number): string => `\n[evalfleet: output truncated: ${bytes} bytes, kept the first ${kept}]`;
  const keep = Math.max(0, maxBytes - Buffer.byteLength(markerFor(maxBytes)));
  // Cut on a character boundary: decoding a byte slice drops a partial last character.
  const kept = Buffer.from(text, "utf8").subarray(0, keep).toString("utf8").replace(/\uFFFD$/, "");
  return kept + markerFor(Buffer.byteLength(kept));
}
