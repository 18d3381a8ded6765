import type { CaseInput, RequestedToolCall, RunOutput } from "../../shared/case/agent.ts";
import type { CaseResult } from "../../shared/result/result.ts";
import { boundTranscript, inputDigest } from "../../shared/result/transcript.ts";
import { TRANSCRIPT_VERSION, type Transcript, type TranscriptRun } from "../../shared/wire/transcript.ts";
import { toPlainData } from "./evidence.ts";

/**
 * Captures a case's transcript (shared/wire/transcript.ts) from its result, where the agent ran
 * (the thread, or the calling thread inline): the raw response never leaves it, the transcript
 * does, as plain data within its bound.
 */

/** The transcript of a finished case, within `maxBytes` of JSON (cut, saying so, when bigger); null when `maxBytes` is 0 or less. */
export function captureTranscript(result: CaseResult, input: CaseInput, maxBytes: number): Transcript | null {
  if (maxBytes <= 0) return null;
  const response = result.response ? toPlainData(result.response) : null;
  const plainInput = toPlainData(input);
  const whole: Transcript = {
    v: TRANSCRIPT_VERSION,
    run: response ? projectRun(response) : null,
    status: result.runStatus ?? null,
    error: result.error,
    usage: result.usage ?? null,
    cut: null,
    input: plainInput,
    inputSha256: inputDigest(plainInput),
  };
  return boundTranscript(whole, maxBytes);
}

/** The fields of a `RunOutput` the transcript keeps (plain data already), members to any depth. */
function projectRun(o: RunOutput): TranscriptRun {
  const run: TranscriptRun = {};
  if (o.content !== undefined) run.content = o.content;
  if (typeof o.status === "string") run.status = o.status;
  if (Array.isArray(o.tools)) {
    run.tools = o.tools
      .filter((t) => t !== null && typeof t === "object")
      .map((t) => ({
        toolName: typeof t.toolName === "string" ? t.toolName : null,
        toolArgs: storedArgs(t.toolArgs),
        ...(t.result !== undefined ? { result: t.result } : {}),
        ...(t.toolCallError !== undefined && t.toolCallError !== null ? { toolCallError: t.toolCallError } : {}),
        ...(t.isPaused ? { isPaused: true } : {}),
      }));
  }
  if (Array.isArray(o.memberResponses)) run.memberResponses = o.memberResponses.filter((m) => m !== null && typeof m === "object").map(projectRun);
  if (Array.isArray(o.messages)) {
    run.messages = o.messages
      .filter((m) => m !== null && typeof m === "object")
      .map((m) => ({
        role: typeof m.role === "string" ? m.role : String(m.role),
        ...(m.content !== undefined ? { content: m.content } : {}),
        ...(Array.isArray(m.toolCalls)
          ? {
              toolCalls: m.toolCalls
                .filter((c: RequestedToolCall) => c && typeof c === "object" && c.function && typeof c.function.name === "string")
                .map((c: RequestedToolCall) => ({
                  ...(typeof c.id === "string" ? { id: c.id } : {}),
                  function: { name: c.function.name, ...(typeof c.function.arguments === "string" ? { arguments: c.function.arguments } : {}) },
                })),
            }
          : {}),
        ...(m.fromHistory ? { fromHistory: true } : {}),
      }));
  }
  if (o.metrics && typeof o.metrics === "object") run.metrics = o.metrics as Record<string, unknown>;
  if (typeof o.model === "string") run.model = o.model;
  if (typeof o.agentId === "string") run.agentId = o.agentId;
  if (Array.isArray(o.knowledgeSources)) run.knowledgeSources = o.knowledgeSources.filter((s): s is string => typeof s === "string");
  return run;
}

/**
 * A call's arguments as the transcript keeps them: an object as it is; arguments an adapter gave
 * as JSON text, parsed (the trajectory check reads them so, and a regrade must see what it saw);
 * anything else, null.
 */
function storedArgs(args: unknown): Record<string, unknown> | null {
  if (args && typeof args === "object" && !Array.isArray(args)) return args as Record<string, unknown>;
  if (typeof args === "string" && args.trimStart().startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(args);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Not JSON: no arguments a check could read.
    }
  }
  return null;
}
