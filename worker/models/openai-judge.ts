import type { ChatCompletion } from "openai/resources/chat/completions";
import type { JudgeCallOptions, JudgeModel, JudgeRequest, JudgeUsage } from "../../shared/case/judge-model.ts";
import { ConfigError, ErrorCode, ModelCallError } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { optionKeys, rejectUnknownOptions } from "../../shared/option-keys.ts";
import { ChatCompletionsClient, resolveConnection, usageOf, type ChatBody, type OpenAIConnectionOptions } from "./openai-chat.ts";

/**
 * The LLM judge over the OpenAI-compatible chat API. It asks for structured output (a JSON
 * schema response format) and falls back to plain text with the schema in the prompt for servers
 * that refuse it; the answer is validated by the judge check (worker/runtime/checks/judge.ts), not here.
 */

/** How the judge asks for its JSON answer. */
export type StructuredOutputMode = "auto" | "json_schema" | "text";

/** Options of {@link openAIJudge}. */
export interface OpenAIJudgeOptions extends OpenAIConnectionOptions {
  /**
   * `"auto"` (default): ask for a JSON schema response format, and if the server refuses it
   * (HTTP 400/422) switch to plain text with the schema described in the prompt, for this and
   * every later call. `"json_schema"`: never fall back. `"text"`: never ask for it.
   */
  structuredOutput?: StructuredOutputMode;
  /** Sampling temperature. Default: not sent (some models, such as gpt-5-mini, accept only their default). */
  temperature?: number | null;
  /** `reasoning_effort` for reasoning models (`"minimal"`, `"low"`, ...). Default: not sent. */
  reasoningEffort?: string | null;
  /** Extra fields merged into every request body (server-specific parameters). */
  extraBody?: Record<string, unknown> | null;
}

/** The known keys of {@link openAIJudge}'s options. */
export const JUDGE_OPTION_KEYS: ReadonlySet<string> = optionKeys<OpenAIJudgeOptions>({
  model: true, baseURL: true, apiKey: true, organization: true, project: true, headers: true, requestTimeoutMs: true, logger: true,
  limitKey: true, maxRetries: true, baseDelayMs: true, maxDelayMs: true, maxRetryAfterMs: true,
  structuredOutput: true, temperature: true, reasoningEffort: true, extraBody: true,
});

/** Cumulative token usage of a judge. */
export interface JudgeUsageTotals {
  /** Model calls made (attempts that got an answer). */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** A {@link JudgeModel} over the OpenAI-compatible chat API; see {@link openAIJudge}. */
export class OpenAIJudge implements JudgeModel {
  /** The model name. */
  readonly id: string;
  readonly #client: ChatCompletionsClient;
  readonly #mode: StructuredOutputMode;
  readonly #extra: Record<string, unknown>;
  #schemaRefused = false;
  readonly #usage: JudgeUsageTotals = { calls: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  readonly #log;

  constructor(options: OpenAIJudgeOptions) {
    rejectUnknownOptions("openAIJudge", options, JUDGE_OPTION_KEYS);
    const config = resolveConnection("openAIJudge", options);
    const mode = options.structuredOutput ?? "auto";
    if (mode !== "auto" && mode !== "json_schema" && mode !== "text") {
      throw new ConfigError(ErrorCode.ConfigInvalid, `openAIJudge: structuredOutput must be "auto", "json_schema" or "text", got ${pyRepr(mode)}`, { field: "structuredOutput" });
    }
    const extra: Record<string, unknown> = {};
    if (options.temperature !== undefined && options.temperature !== null) {
      if (typeof options.temperature !== "number" || !(options.temperature >= 0 && options.temperature <= 2)) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `openAIJudge: temperature must be a number from 0 to 2, got ${pyRepr(options.temperature)}`, { field: "temperature" });
      }
      extra.temperature = options.temperature;
    }
    if (options.reasoningEffort !== undefined && options.reasoningEffort !== null) {
      if (typeof options.reasoningEffort !== "string" || !options.reasoningEffort) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `openAIJudge: reasoningEffort must be a non-empty string, got ${pyRepr(options.reasoningEffort)}`, { field: "reasoningEffort" });
      }
      extra.reasoning_effort = options.reasoningEffort;
    }
    if (options.extraBody !== undefined && options.extraBody !== null) {
      if (typeof options.extraBody !== "object" || Array.isArray(options.extraBody)) {
        throw new ConfigError(ErrorCode.ConfigInvalid, `openAIJudge: extraBody must be an object, got ${pyRepr(options.extraBody)}`, { field: "extraBody" });
      }
      Object.assign(extra, options.extraBody);
    }
    this.id = config.model;
    this.#client = new ChatCompletionsClient(config);
    this.#mode = mode;
    this.#extra = extra;
    this.#log = config.logger;
  }

  /** Token usage summed over every call this judge made (in this thread). */
  get usage(): Readonly<JudgeUsageTotals> {
    return { ...this.#usage };
  }

  /** True once the server refused the JSON schema response format and the judge fell back to text. */
  get usesTextFallback(): boolean {
    return this.#mode === "text" || this.#schemaRefused;
  }

  /** Asks for a verdict; returns the answer text (JSON). Throws {@link ModelCallError} when the call fails. */
  async judge(request: JudgeRequest, options: JudgeCallOptions): Promise<unknown> {
    const call = { signal: options.signal, deadline: options.deadline };
    let completion: ChatCompletion;
    if (this.usesTextFallback) {
      completion = await this.#client.create(this.#body(request, false), call);
    } else {
      try {
        completion = await this.#client.create(this.#body(request, true), call);
      } catch (err) {
        if (this.#mode !== "auto" || !(err instanceof ModelCallError) || (err.status !== 400 && err.status !== 422)) throw err;
        // The server lacks structured output (or this schema): plain text from now on.
        this.#schemaRefused = true;
        this.#log.debug({ model: this.id, reason: err.message }, "judge server refused the JSON schema response format; falling back to JSON in plain text");
        try {
          completion = await this.#client.create(this.#body(request, false), call);
        } catch (second) {
          // Refused without response_format too: the 400 was about something else (the model,
          // the prompt's length), so structured output stays on for the next call.
          if (second instanceof ModelCallError && (second.status === 400 || second.status === 422)) this.#schemaRefused = false;
          throw second;
        }
      }
    }
    const usage = usageOf(completion.usage);
    this.#record(usage);
    options.onUsage?.(usage);
    const message = completion.choices[0]?.message;
    if (!message) throw new ModelCallError("the judge model answered with no choices", { status: 200 });
    if (message.refusal) throw new ModelCallError(`the judge model refused: ${this.#client.redact(message.refusal)}`, { status: 200 }, { retryable: false });
    return message.content ?? "";
  }

  #body(request: JudgeRequest, structured: boolean): ChatBody {
    const schema = { ...request.jsonSchema };
    delete schema.$schema;
    const system = structured ? request.system : `${request.system}\n\n${textModeInstruction(schema)}`;
    return {
      messages: [
        { role: "system", content: system },
        { role: "user", content: request.user },
      ],
      ...(structured ? { response_format: { type: "json_schema", json_schema: { name: `${request.schemaName}_judge_response`, schema, strict: true } } } : {}),
      ...this.#extra,
    };
  }

  #record(usage: JudgeUsage): void {
    this.#usage.calls += 1;
    this.#usage.inputTokens += usage.inputTokens ?? 0;
    this.#usage.outputTokens += usage.outputTokens ?? 0;
    this.#usage.totalTokens += usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  }
}

/** What a server without structured output is told about the answer's shape. */
export function textModeInstruction(schema: Record<string, unknown>): string {
  return `Answer with only a JSON object (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(schema)}`;
}

/**
 * A judge model over any OpenAI-compatible chat API:
 * `openAIJudge({ model: "gpt-5-mini" })` (OpenAI, key from `OPENAI_API_KEY`),
 * `openAIJudge({ model: "llama3.1", baseURL: "http://localhost:11434/v1" })` (Ollama).
 * Retries 429/5xx/connection failures (4 retries, backoff from 0.5 s doubling to 8 s, or the
 * server's Retry-After), never past the case deadline; honours the case's AbortSignal; records
 * token usage (`judge.usage`). Bad options throw a `ConfigError` naming the field.
 */
export function openAIJudge(options: OpenAIJudgeOptions): OpenAIJudge {
  return new OpenAIJudge(options);
}
