// runs in: both
import { createHash } from "node:crypto";
import type { RunOutput } from "../case/agent.ts";
import { TRANSCRIPT_VERSION, TranscriptSchema, type Transcript, type TranscriptCut, type TranscriptRun } from "../wire/transcript.ts";

/**
 * Bounding a case's transcript (shared/wire/transcript.ts) and reading one back as the agent's
 * output. Pure; no I/O.
 */

/** The size of a transcript's JSON, in bytes (UTF-8). */
export function transcriptBytes(t: Transcript): number {
  return Buffer.byteLength(JSON.stringify(t), "utf8");
}

/** Longest string kept, in characters, at each round of cutting strings. */
const STRING_LIMITS = [16_384, 4096, 1024, 256] as const;

/**
 * `t` within `maxBytes` of JSON: as is when it fits; otherwise cut in steps, each tried only when
 * the one before was not enough: long strings shortened (each ends with a marker saying how long
 * it was), then the messages left out (the tool calls stay: they are what reliability grades),
 * then the members' outputs, then the tool calls; at last only the content (cut) and the status.
 * A cut transcript says so in `cut`, with its original size. A `maxBytes` of 0 or less gives null;
 * one below the envelope (about 200 bytes) gives the envelope alone, a little over it.
 */
export function boundTranscript(t: Transcript, maxBytes: number): Transcript | null {
  if (maxBytes <= 0) return null;
  const originalBytes = transcriptBytes(t);
  if (originalBytes <= maxBytes) return t;
  const steps: TranscriptCut["steps"] = [];
  let input: unknown = t.input;
  const { input: _whole, ...envelope } = t;
  const cutAs = (run: TranscriptRun | null, error: string | null): Transcript => ({ ...envelope, run, error, ...(input !== undefined ? { input } : {}), cut: { originalBytes, maxBytes, steps: [...steps] } });
  const fits = (x: Transcript): boolean => transcriptBytes(x) <= maxBytes;

  let run: TranscriptRun | null = t.run;
  let error: string | null = t.error;
  steps.push("strings");
  for (const limit of STRING_LIMITS) {
    // Always from the whole texts, so each marker names a text's own length.
    run = t.run ? (cutStrings(t.run, limit) as TranscriptRun) : null;
    error = t.error === null ? null : cutString(t.error, limit);
    input = t.input === undefined ? undefined : cutStrings(t.input, limit);
    const candidate = cutAs(run, error);
    if (fits(candidate)) return candidate;
  }
  const stages: Array<[TranscriptCut["steps"][number], (r: TranscriptRun) => TranscriptRun]> = [
    ["messages", (r) => mapRuns(r, (x) => ({ ...x, messages: null }))],
    ["members", (r) => ({ ...r, memberResponses: null })],
    ["tools", (r) => ({ ...r, tools: null })],
  ];
  for (const [step, apply] of stages) {
    steps.push(step);
    run = run ? apply(run) : null;
    const candidate = cutAs(run, error);
    if (fits(candidate)) return candidate;
  }
  steps.push("all");
  input = undefined;
  for (const limit of [4096, 256, 0]) {
    const whole = t.run;
    const last = cutAs(whole ? { content: typeof whole.content === "string" ? cutString(whole.content, limit) : null, status: whole.status ?? null } : null, t.error === null ? null : cutString(t.error, limit));
    if (fits(last)) return last;
  }
  return { v: TRANSCRIPT_VERSION, run: null, status: t.status, error: null, usage: null, cut: { originalBytes, maxBytes, steps }, ...(t.inputSha256 ? { inputSha256: t.inputSha256 } : {}) };
}

/** SHA-256 (hex) of a case input's JSON: what a transcript records, and a regrade compares. */
export function inputDigest(input: unknown): string {
  return createHash("sha256").update(JSON.stringify(input ?? null)).digest("hex");
}

/** `text` shortened to `limit` characters, with a marker naming its length. */
function cutString(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}[evalfleet: cut, ${text.length} characters]`;
}

function cutStrings(value: unknown, limit: number): unknown {
  if (typeof value === "string") return cutString(value, limit);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, limit));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = cutStrings(v, limit);
    return out;
  }
  return value;
}

function mapRuns(run: TranscriptRun, f: (r: TranscriptRun) => TranscriptRun): TranscriptRun {
  const mapped = f(run);
  return mapped.memberResponses ? { ...mapped, memberResponses: mapped.memberResponses.map((m) => mapRuns(m, f)) } : mapped;
}

/** Validates a transcript read from outside (the store, a message): the transcript, or why not, in one line. */
export function parseTranscript(raw: unknown): { ok: true; transcript: Transcript } | { ok: false; why: string } {
  const version = raw !== null && typeof raw === "object" ? (raw as { v?: unknown }).v : undefined;
  if (version !== TRANSCRIPT_VERSION) return { ok: false, why: `transcript version ${String(version)}, this evalfleet reads ${TRANSCRIPT_VERSION}` };
  const parsed = TranscriptSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, why: `invalid transcript: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` };
  return { ok: true, transcript: parsed.data };
}

/** The stored output as the agent's `RunOutput`, for the checks of a regrade; null when the run gave none. */
export function transcriptToRunOutput(t: Transcript): RunOutput | null {
  return t.run ? (t.run as RunOutput) : null;
}
