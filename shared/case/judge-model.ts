// runs in: both
/**
 * The judge-model contract. The judge check builds the prompt (see worker/runtime/checks/judge.ts) and
 * calls `judge`; the model answers with JSON matching the requested schema. The real
 * OpenAI-compatible client implements this; tests use a scripted one.
 */

/**
 * The score (1-10) at or above which a numeric judge's verdict passes when none is given: a
 * case's `judgeThreshold`, a dataset row's `judge_threshold`, `AgentAsJudgeEval`'s `threshold`
 * (Agno's default).
 */
export const JUDGE_PASS_THRESHOLD = 7;

/** Binary verdict: `{ passed, reason }`; numeric: `{ score (1-10 integer), reason }`. */
export type JudgeSchemaName = "binary" | "numeric";

/** One judge call. */
export interface JudgeRequest {
  /** The evaluator's system prompt (description and instructions). */
  system: string;
  /** The user message: the input and the fenced, untrusted output. */
  user: string;
  /** Which answer shape is expected. */
  schemaName: JudgeSchemaName;
  /** JSON Schema of the expected answer, for providers with structured output. */
  jsonSchema: Record<string, unknown>;
}

/** Token usage of one judge call (what {@link JudgeCallOptions.onUsage} receives). */
export interface JudgeUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** What the caller hands to {@link JudgeModel.judge} besides the request. */
export interface JudgeCallOptions {
  /** Fires at the case deadline or on cancellation: pass it to the HTTP client. */
  signal: AbortSignal;
  /**
   * The case deadline (epoch milliseconds), when there is one: a client that retries can give up
   * at once when the wait a server asks for (Retry-After) would end past it.
   */
  deadline?: number;
  /** Told the token usage of each model call the judge makes. */
  onUsage?: (usage: JudgeUsage) => void;
}

/** What a judge model returns: the parsed answer, or raw text holding JSON. */
export interface JudgeModel {
  /** Shown in reports and logs. */
  id?: string | null;
  judge(request: JudgeRequest, options: JudgeCallOptions): Promise<unknown>;
}
