import { cachedCall } from "./response-cache.ts";
import type { LanguageModel } from "ai";
import type { JudgeCallOptions, JudgeModel, JudgeRequest } from "../../shared/case/judge-model.ts";
import { ConfigError, ErrorCode, ModelCallError, errorMessage, errorName } from "../../shared/errors.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { optionKeys, rejectUnknownOptions } from "../../shared/option-keys.ts";
import { importOptional } from "../../shared/runtime/optional-package.ts";
import { withProviderLimits } from "./ai-sdk-limits.ts";

/**
 * Any Vercel AI SDK language model as the judge: `aiSdkJudge(openai("gpt-5-mini"))`,
 * `aiSdkJudge(anthropic("claude-..."))`, `aiSdkJudge(ollama("llama3.1"))`. The SDK's structured
 * output asks for the judge's JSON; the SDK's own retries (which honour Retry-After) apply.
 */

/** Options of {@link aiSdkJudge}. */
export interface AiSdkJudgeOptions {
  /** Shown in reports and logs. Default: the model's `provider:modelId`. */
  id?: string | null;
  /** Retries of the AI SDK itself (429/5xx, honouring Retry-After). Default 2. */
  maxRetries?: number;
  /** Sampling temperature. Default: not sent. */
  temperature?: number | null;
  /** Provider-specific options, passed through to `generateText`. */
  providerOptions?: Record<string, Record<string, unknown>> | null;
}

/** The known keys of {@link aiSdkJudge}'s options. */
export const AI_SDK_JUDGE_OPTION_KEYS: ReadonlySet<string> = optionKeys<AiSdkJudgeOptions>({ id: true, maxRetries: true, temperature: true, providerOptions: true });

/** A {@link JudgeModel} backed by an AI SDK language model. */
export class AiSdkJudge implements JudgeModel {
  readonly id: string;
  readonly #model: LanguageModel;
  readonly #options: AiSdkJudgeOptions;

  constructor(model: LanguageModel, options: AiSdkJudgeOptions = {}) {
    const isModelObject = model !== null && typeof model === "object" && typeof (model as { doGenerate?: unknown }).doGenerate === "function";
    if (!isModelObject && !(typeof model === "string" && model.trim() !== "")) {
      throw new ConfigError(
        ErrorCode.ConfigInvalid,
        `aiSdkJudge: model must be an AI SDK language model (e.g. openai("gpt-5-mini")) or a gateway model id, got ${describe(model)}`,
        { field: "model" },
      );
    }
    rejectUnknownOptions("aiSdkJudge", options, AI_SDK_JUDGE_OPTION_KEYS);
    if (options.maxRetries !== undefined && !(Number.isInteger(options.maxRetries) && options.maxRetries >= 0)) {
      throw new ConfigError(ErrorCode.ConfigInvalid, `aiSdkJudge: maxRetries must be a whole number >= 0, got ${pyRepr(options.maxRetries)}`, { field: "maxRetries" });
    }
    // Every call of the judge waits for a permit of its provider key (docs/providers.md).
    this.#model = withProviderLimits(model);
    this.#options = options;
    const m = model as { provider?: string; modelId?: string };
    this.id = options.id || (typeof model === "string" ? model : `${m.provider ?? "ai-sdk"}:${m.modelId ?? "model"}`);
  }

  /**
   * Returns the structured answer, or the model's raw text when it did not match the schema (the
   * judge check then decides); through the response cache when a run turned it on (`--cache`).
   */
  async judge(request: JudgeRequest, options: JudgeCallOptions): Promise<unknown> {
    const m = this.#model as { provider?: string; modelId?: string };
    const o = this.#options;
    return cachedCall(
      {
        endpoint: typeof this.#model === "string" ? "ai-sdk:gateway" : `ai-sdk:${m.provider ?? "unknown"}`,
        model: typeof this.#model === "string" ? this.#model : (m.modelId ?? "model"),
        body: { system: request.system, prompt: request.user, schema: request.jsonSchema, temperature: o.temperature ?? null, providerOptions: o.providerOptions ?? null },
      },
      () => this.#judge(request, options),
    );
  }

  async #judge(request: JudgeRequest, options: JudgeCallOptions): Promise<unknown> {
    // Loaded on first use: most suites never need the AI SDK.
    const { generateText, Output, jsonSchema, NoObjectGeneratedError } = await importOptional("ai", "aiSdkJudge", () => import("ai"));
    const schema = { ...request.jsonSchema };
    delete schema.$schema;
    try {
      const result = await generateText({
        model: this.#model,
        system: request.system,
        prompt: request.user,
        output: Output.object({ schema: jsonSchema(schema), name: `${request.schemaName}_judge_response` }),
        abortSignal: options.signal,
        maxRetries: this.#options.maxRetries ?? 2,
        ...(this.#options.temperature !== undefined && this.#options.temperature !== null ? { temperature: this.#options.temperature } : {}),
        ...(this.#options.providerOptions ? { providerOptions: this.#options.providerOptions as never } : {}),
      });
      options.onUsage?.({ inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, totalTokens: result.usage.totalTokens });
      return result.output;
    } catch (err) {
      if (options.signal.aborted) throw options.signal.reason;
      if (NoObjectGeneratedError.isInstance(err)) {
        if (err.usage) options.onUsage?.({ inputTokens: err.usage.inputTokens, outputTokens: err.usage.outputTokens, totalTokens: err.usage.totalTokens });
        // Text that is not the schema's JSON still goes to the judge check, which extracts JSON from prose.
        if (err.text !== undefined) return err.text;
      }
      const status = (err as { statusCode?: unknown }).statusCode;
      throw new ModelCallError(`${errorName(err)}: ${errorMessage(err)}`, { status: typeof status === "number" ? status : null });
    }
  }
}

/**
 * Uses a Vercel AI SDK language model as the judge (`aiSdkJudge(model, { maxRetries })`).
 * Bad input throws a `ConfigError` naming the field.
 */
export function aiSdkJudge(model: LanguageModel, options: AiSdkJudgeOptions = {}): AiSdkJudge {
  return new AiSdkJudge(model, options);
}

function describe(value: unknown): string {
  if (value === null || value === undefined || typeof value !== "object") return pyRepr(value);
  return `an object (${(value as object).constructor?.name ?? "Object"}) without doGenerate()`;
}
