// runs in: both
import * as z from "zod";
import type { LimitFeedback } from "./limiter-core.ts";
import { feedbackFrom } from "./rate-headers.ts";
import { lazySchema } from "../runtime/lazy-schema.ts";

/**
 * The limiter as model clients and agents see it (`RunContext.limiter`): `acquire(key, { tokens })`
 * waits for a permit of the provider key, `permit.release(feedback)` returns it with what the
 * provider said. One limiter serves a whole process (its main thread owns it, threads ask it
 * through messages) and, in distributed mode, the whole fleet (the coordinator grants the permits).
 */

/** What a caller tells the limiter when its request ended (see `LimitFeedback`). */
export type { LimitFeedback } from "./limiter-core.ts";

/** One admitted request. Release it exactly once (a second release is ignored). */
export interface LimitPermit {
  readonly key: string;
  release(feedback?: LimitFeedback): void;
}

/** A permit of `key` whose first release calls `onRelease` with the feedback; later ones are ignored. */
export function permitOf(key: string, onRelease: (feedback: LimitFeedback) => void): LimitPermit {
  let released = false;
  return {
    key,
    release: (feedback: LimitFeedback = {}) => {
      if (released) return;
      released = true;
      onRelease(feedback);
    },
  };
}

/** Options of {@link ProviderLimiter.acquire}. */
export interface AcquireOptions {
  /** Tokens the request is expected to use (prompt + completion), for the key's tokens-per-minute. Default 0. */
  tokens?: number;
  /** Stops waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A limiter of provider keys. */
export interface ProviderLimiter {
  /** Waits until a request of `key` may go; rejects when `signal` fires first. */
  acquire(key: string, options?: AcquireOptions): Promise<LimitPermit>;
  /** Tells the limiter about a request made without a permit (a client outside it), so the key still adapts. */
  observe?(key: string, feedback: LimitFeedback): void;
}

/** A limit key as people write it: no spaces, `=`, `;` or `,`. */
export const LimitKeySchema = lazySchema(() => z.string().min(1).max(200).regex(/^[^\s=;,]+$/));

/**
 * The derived key of an OpenAI-compatible endpoint and model: `openai:<model>` for OpenAI's own
 * API (no base URL, or api.openai.com), else `<host[:port]>:<model>` (`127.0.0.1:8080:llama3`).
 */
export function providerKey(baseURL: string | null | undefined, model: string): string {
  let host = "openai";
  if (baseURL) {
    try {
      const u = new URL(baseURL);
      host = u.host === "api.openai.com" ? "openai" : u.host;
    } catch {
      host = baseURL;
    }
  }
  return `${host}:${model}`.replace(/[\s=;,]/g, "_");
}

/**
 * The key of an AI SDK model (`provider` like `openai.chat`, `modelId`): the provider's first part,
 * then the model (`openai:gpt-5-mini`).
 */
export function aiSdkModelKey(model: { provider?: unknown; modelId?: unknown }): string {
  const provider = typeof model.provider === "string" && model.provider ? model.provider.split(".")[0]! : "model";
  const id = typeof model.modelId === "string" && model.modelId ? model.modelId : "unknown";
  return `${provider}:${id}`.replace(/[\s=;,]/g, "_");
}

/** A rough token estimate of a request body: a character in four is a token, plus the answer's allowance. */
export function estimateTokens(body: unknown, answerAllowance = 256): number {
  let text = "";
  try {
    text = typeof body === "string" ? body : JSON.stringify(body) ?? "";
  } catch {
    text = "";
  }
  return Math.ceil(text.length / 4) + answerAllowance;
}

/** `RunContext.fetch`: a `fetch` whose every call waits for a permit of `key` and reports the answer's rate-limit headers. */
export type LimitedFetch = (input: string | URL | Request, init?: RequestInit & { limitKey?: string; tokens?: number }) => Promise<Response>;

/**
 * A `fetch` through `limiter`: each call acquires a permit of its key (`init.limitKey`, else
 * `defaultKey`, else the URL's host), waits for the answer and releases the permit with its status
 * and `x-ratelimit-*` / `Retry-After` headers. A call that throws (no answer) releases with status null.
 */
export function limitedFetch(limiter: ProviderLimiter, defaultKey?: string | null, base: typeof fetch = fetch): LimitedFetch {
  return async (input, init = {}) => {
    const { limitKey, tokens, ...rest } = init;
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const key = limitKey ?? defaultKey ?? hostKey(url);
    const permit = await limiter.acquire(key, { tokens: tokens ?? 0, signal: rest.signal ?? undefined });
    try {
      const response = await base(input, rest);
      permit.release(feedbackFrom(response.status, response.headers));
      return response;
    } catch (err) {
      permit.release({ status: null });
      throw err;
    }
  };
}

function hostKey(url: string): string {
  try {
    return new URL(url).host || "fetch";
  } catch {
    return "fetch";
  }
}
