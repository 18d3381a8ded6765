// runs in: both
import * as z from "zod";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * A case's full run output (its "transcript"), as the results store keeps it and as it travels
 * from a thread or a worker to the coordinator: the final content, the messages, every tool call
 * with its arguments and result or error, the team members' outputs at every depth, the status
 * and the usage. It is the agent's `RunOutput` (shared/case/agent.ts) reduced to plain data, plus what
 * the case recorded around it, so `evalfleet regrade` can grade it again without the agent.
 *
 * Bounded per case (`--max-transcript-kb`, default DEFAULT_MAX_TRANSCRIPT_KB in shared/defaults.ts): a cut
 * transcript says so in `cut`, with the size it had (shared/result/transcript.ts does the cutting).
 */

/** Version of the transcript's shape; a reader refuses another (a regrade skips the case, saying why). */
export const TRANSCRIPT_VERSION = 1;

/** A tool call the model requested (it may never have run). */
export const TranscriptToolRequestSchema = lazySchema(() => z.object({
  id: z.string().optional(),
  function: z.object({ name: z.string(), arguments: z.string().optional() }),
}));

/** One message of the run. `content` is the message's content as plain data (text, parts, ...). */
export const TranscriptMessageSchema = lazySchema(() => z.object({
  role: z.string(),
  content: z.unknown().optional(),
  toolCalls: z.array(TranscriptToolRequestSchema).nullish(),
  fromHistory: z.boolean().optional(),
}));
export type TranscriptMessage = z.infer<typeof TranscriptMessageSchema>;

/** One tool execution: its name, arguments, result and error (`toolCallError` truthy when it failed). */
export const TranscriptToolSchema = lazySchema(() => z.object({
  toolName: z.string().nullish(),
  toolArgs: z.record(z.string(), z.unknown()).nullish(),
  result: z.unknown().optional(),
  toolCallError: z.unknown().optional(),
  isPaused: z.boolean().optional(),
}));
export type TranscriptTool = z.infer<typeof TranscriptToolSchema>;

/** One run's output (the agent's, the team's, or a member's), as plain data; members nest to any depth. */
export interface TranscriptRun {
  content?: unknown;
  status?: string | null;
  tools?: TranscriptTool[] | null;
  memberResponses?: TranscriptRun[] | null;
  messages?: TranscriptMessage[] | null;
  metrics?: Record<string, unknown> | null;
  model?: string | null;
  agentId?: string | null;
  knowledgeSources?: string[] | null;
}

/** {@link TranscriptRun} as a schema (recursive through `memberResponses`). */
export const TranscriptRunSchema: z.ZodType<TranscriptRun> = lazySchema(() => z.lazy(() =>
  z.object({
    content: z.unknown().optional(),
    status: z.string().nullish(),
    tools: z.array(TranscriptToolSchema).nullish(),
    memberResponses: z.array(TranscriptRunSchema).nullish(),
    messages: z.array(TranscriptMessageSchema).nullish(),
    metrics: z.record(z.string(), z.unknown()).nullish(),
    model: z.string().nullish(),
    agentId: z.string().nullish(),
    knowledgeSources: z.array(z.string()).nullish(),
  }),
));

/** How a transcript was cut to its bound; `null` on a whole one. */
export const TranscriptCutSchema = lazySchema(() => z.object({
  /** The size of the whole transcript's JSON, in bytes (UTF-8). */
  originalBytes: z.number().int().nonnegative(),
  /** The bound it was cut to, in bytes. */
  maxBytes: z.number().int().nonnegative(),
  /** What was cut: `strings` (long texts shortened, each with a marker), `messages`, `members`, `all` (only the summary kept). */
  steps: z.array(z.enum(["strings", "messages", "members", "tools", "all"])),
}));
export type TranscriptCut = z.infer<typeof TranscriptCutSchema>;

/** A case's transcript: see the module comment. */
export const TranscriptSchema = lazySchema(() => z.object({
  v: z.literal(TRANSCRIPT_VERSION),
  /** The final output of the agent or team, or `null` when it gave none (it threw, timed out first). */
  run: TranscriptRunSchema.nullable(),
  /** The run's status (`completed`, `cancelled`, ...; missing status means completed), `null` without output. */
  status: z.string().nullable(),
  /** The case's errors as recorded (`agent: ...; judge: ...`), or null. */
  error: z.string().nullable(),
  /** Tokens and cost as the agent reported them, or null. */
  usage: z
    .object({ inputTokens: z.number().nullable(), outputTokens: z.number().nullable(), totalTokens: z.number().nullable(), costUsd: z.number().nullable() })
    .nullable(),
  /** Set when the transcript was cut to its bound. */
  cut: TranscriptCutSchema.nullable(),
  /** The case's input as it was sent (a prompt or a conversation, plain data; long texts cut with the rest). Optional. */
  input: z.unknown().optional(),
  /**
   * SHA-256 (hex) of the input's JSON, taken before any cut: a regrade compares it with the case's
   * input now, and skips a case whose input changed. Optional (absent: the input is unknown).
   */
  inputSha256: z.string().optional(),
}));
/** A case's full run output, bounded. */
export type Transcript = z.infer<typeof TranscriptSchema>;
