import { aiSdkModelKey, estimateTokens } from "../../shared/providers/limiter.ts";
import type { LimitFeedback } from "../../shared/providers/limiter-core.ts";
import { feedbackFrom, type HeaderSource } from "../../shared/providers/rate-headers.ts";
import { processLimiter } from "../../shared/providers/process-limiter.ts";

/**
 * An AI SDK language model whose every call (each step of a tool loop) waits for a permit of its
 * provider key and tells the limiter the answer's status, rate-limit headers and tokens:
 * `aiSdkJudge` wraps its model with it, and an AI SDK agent's model can be wrapped the same way
 * (`generateText({ model: withProviderLimits(openai("gpt-5-mini")), ...call })`). The model is
 * wrapped by delegation, so the AI SDK itself is not loaded here.
 */

/** The parts of an AI SDK language model object the wrapper uses (LanguageModelV2/V3). */
interface ModelObject {
  provider?: unknown;
  modelId?: unknown;
  doGenerate(options: { prompt?: unknown; abortSignal?: AbortSignal; maxOutputTokens?: number }): PromiseLike<{ usage?: unknown; response?: { headers?: HeaderSource } }>;
  doStream(options: { prompt?: unknown; abortSignal?: AbortSignal; maxOutputTokens?: number }): PromiseLike<{ response?: { headers?: HeaderSource } }>;
}

const WRAPPED = Symbol.for("evalfleet.limitedModel");

/**
 * `model` with every call paced under the key `key` (default `<provider>:<modelId>`, the provider's
 * first part: `openai:gpt-5-mini`). A model id string (the AI SDK gateway) is returned as it is.
 */
export function withProviderLimits<M>(model: M, key?: string | null): M {
  if (!model || typeof model !== "object" || typeof (model as unknown as ModelObject).doGenerate !== "function") return model;
  if ((model as Record<symbol, unknown>)[WRAPPED]) return model;
  const inner = model as unknown as ModelObject;
  const limitKey = key ?? aiSdkModelKey(inner);
  const permitFor = (options: { prompt?: unknown; abortSignal?: AbortSignal; maxOutputTokens?: number }) =>
    processLimiter().acquire(limitKey, { tokens: estimateTokens(options.prompt, options.maxOutputTokens ?? 256), signal: options.abortSignal });
  // A plain object that delegates: a class's getters and private fields stay on the model itself.
  const source = model as unknown as Record<string, unknown>;
  const wrapped = {
    [WRAPPED]: true,
    specificationVersion: source.specificationVersion,
    provider: source.provider,
    modelId: source.modelId,
    get supportedUrls(): unknown {
      return source.supportedUrls;
    },
    doGenerate: async (options: Parameters<ModelObject["doGenerate"]>[0]) => {
      const permit = await permitFor(options);
      try {
        const result = await inner.doGenerate.call(model, options);
        permit.release(feedbackFrom(200, result.response?.headers, usageTokens(result.usage)));
        return result;
      } catch (err) {
        permit.release(aiSdkErrorFeedback(err));
        throw err;
      }
    },
    doStream: async (options: Parameters<ModelObject["doStream"]>[0]) => {
      const permit = await permitFor(options);
      try {
        const result = await inner.doStream.call(model, options);
        // The permit covers the request; the stream's tokens are not known here.
        permit.release(feedbackFrom(200, result.response?.headers));
        return result;
      } catch (err) {
        permit.release(aiSdkErrorFeedback(err));
        throw err;
      }
    },
  };
  return wrapped as M;
}

/** The tokens an AI SDK usage object reports (V3's nested totals, or V2's flat numbers), or null. */
export function usageTokens(usage: unknown): number | null {
  if (!usage || typeof usage !== "object") return null;
  const u = usage as { inputTokens?: unknown; outputTokens?: unknown; totalTokens?: unknown };
  const n = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : v && typeof v === "object" && typeof (v as { total?: unknown }).total === "number" ? (v as { total: number }).total : null);
  if (typeof u.totalTokens === "number") return u.totalTokens;
  const i = n(u.inputTokens);
  const o = n(u.outputTokens);
  return i === null && o === null ? null : (i ?? 0) + (o ?? 0);
}

/** An AI SDK `APICallError`'s status and response headers, or no answer at all. */
export function aiSdkErrorFeedback(err: unknown): LimitFeedback {
  const e = err as { statusCode?: unknown; responseHeaders?: unknown };
  if (typeof e?.statusCode === "number") return feedbackFrom(e.statusCode, e.responseHeaders as HeaderSource);
  return { status: null };
}
