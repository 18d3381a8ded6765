import type OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { ConfigError, ErrorCode, errorMessage, errorName } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { scopedSignal } from "../scoped-signal.ts";
import { DEFAULT_RETRY_POLICY, isRetryableStatus, withRetries, type AttemptFailure, type RetryPolicy } from "./retry.ts";

/**
 * The OpenAI-compatible chat completions endpoint, through the official `openai` client, with
 * evalfleet's own retries (429/5xx/connection, Retry-After, the case deadline) and the API key
 * kept out of every log line and error message. One implementation serves OpenAI, Azure OpenAI's
 * v1 endpoint, vLLM, Ollama, llama.cpp's server and LiteLLM.
 */

/** Connection settings shared by the judge and the built-in agent. */
export interface OpenAIConnectionOptions extends RetryPolicy {
  /** The model name sent with every request. Required. */
  model: string;
  /**
   * The API's base URL, e.g. `http://localhost:11434/v1` for Ollama. Default: `$OPENAI_BASE_URL`,
   * then `https://api.openai.com/v1`.
   */
  baseURL?: string | null;
  /**
   * The API key. Default: `$OPENAI_API_KEY`. Required for OpenAI itself; a server given by
   * `baseURL` may need none (a placeholder is sent).
   */
  apiKey?: string | null;
  /** OpenAI organization and project headers. */
  organization?: string | null;
  project?: string | null;
  /** Extra headers on every request (e.g. Azure's `api-key`, a LiteLLM tag). */
  headers?: Record<string, string> | null;
  /** Per-attempt HTTP timeout in milliseconds. Default 600000; the case timeout usually ends a call first. */
  requestTimeoutMs?: number | null;
  /** Where retries and failures are logged (debug/warn). Default: silent. */
  logger?: Logger | null;
}

/** Settings after validation and environment defaults. */
export interface ResolvedConnection {
  model: string;
  baseURL: string | undefined;
  organization: string | undefined;
  project: string | undefined;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  retry: Required<RetryPolicy>;
  logger: Logger;
  /** Kept out of the object's enumerable fields, so logging the settings cannot leak it. */
  readonly secret: SecretBox;
}

/** Holds a credential without exposing it to JSON.stringify, pino or util.inspect. */
export class SecretBox {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return "[redacted]";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "[redacted]";
  }
}

/** Placeholder key for local servers that need none (the client refuses an empty key). */
export const NO_KEY_PLACEHOLDER = "evalfleet-no-key";

/**
 * Validates connection options. Throws a {@link ConfigError} whose message starts with `who`
 * and names the field and the value (never the value of `apiKey`).
 */
export function resolveConnection(who: string, options: OpenAIConnectionOptions, env: NodeJS.ProcessEnv = process.env): ResolvedConnection {
  if (options === null || typeof options !== "object") {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: options must be an object, got ${pyRepr(options)}`, { field: "options" });
  }
  const bad = (field: string, rule: string, value: unknown): never => {
    throw new ConfigError(ErrorCode.ConfigInvalid, `${who}: ${field} ${rule}, got ${field === "apiKey" ? describeSecretType(value) : pyRepr(value)}`, { field });
  };
  const optionalString = (field: keyof OpenAIConnectionOptions): string | undefined => {
    const v = options[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string" || v.trim() === "") bad(field, "must be a non-empty string", v);
    return v as string;
  };
  if (typeof options.model !== "string" || options.model.trim() === "") bad("model", "must be a non-empty string", options.model);
  let baseURL = optionalString("baseURL") ?? (env.OPENAI_BASE_URL?.trim() ? env.OPENAI_BASE_URL.trim() : undefined);
  if (baseURL !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(baseURL);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      bad(options.baseURL ? "baseURL" : "baseURL (from OPENAI_BASE_URL)", "must be an http(s) URL such as http://localhost:11434/v1", baseURL);
    }
    baseURL = baseURL.replace(/\/+$/, "");
  }
  const apiKey = optionalString("apiKey") ?? (env.OPENAI_API_KEY?.trim() ? env.OPENAI_API_KEY.trim() : undefined);
  if (apiKey === undefined && baseURL === undefined) {
    throw new ConfigError(
      ErrorCode.ConfigMissing,
      `${who}: no API key: pass apiKey or set OPENAI_API_KEY (for a local server such as Ollama or vLLM, pass baseURL instead)`,
      { field: "apiKey" },
    );
  }
  const headers = options.headers ?? {};
  if (typeof headers !== "object" || Array.isArray(headers) || Object.values(headers).some((v) => typeof v !== "string")) {
    bad("headers", "must be an object of string values", headers);
  }
  const wholeAtLeast = (field: keyof OpenAIConnectionOptions, min: number, fallback: number): number => {
    const v = options[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || (field === "maxRetries" && !Number.isInteger(v))) {
      bad(field, `must be a ${field === "maxRetries" ? "whole " : ""}number >= ${min}`, v);
    }
    return v as number;
  };
  return {
    model: options.model,
    baseURL,
    organization: optionalString("organization"),
    project: optionalString("project"),
    headers: { ...headers },
    requestTimeoutMs: wholeAtLeast("requestTimeoutMs", 1, 600_000),
    retry: {
      maxRetries: wholeAtLeast("maxRetries", 0, DEFAULT_RETRY_POLICY.maxRetries),
      baseDelayMs: wholeAtLeast("baseDelayMs", 0, DEFAULT_RETRY_POLICY.baseDelayMs),
      maxDelayMs: wholeAtLeast("maxDelayMs", 0, DEFAULT_RETRY_POLICY.maxDelayMs),
      maxRetryAfterMs: wholeAtLeast("maxRetryAfterMs", 0, DEFAULT_RETRY_POLICY.maxRetryAfterMs),
    },
    logger: options.logger ?? silentLogger(),
    secret: new SecretBox(apiKey ?? NO_KEY_PLACEHOLDER),
  };
}

/** Options of one call. */
export interface CallOptions {
  signal: AbortSignal;
  /** Epoch milliseconds; no retry wait may end past it. */
  deadline?: number;
}

/** Request body without the model (the client adds it). */
export type ChatBody = Omit<ChatCompletionCreateParamsNonStreaming, "model"> & Record<string, unknown>;

/** Calls the chat completions endpoint of one server and model. */
export class ChatCompletionsClient {
  readonly #config: ResolvedConnection;
  #client: Promise<OpenAI> | undefined;

  constructor(config: ResolvedConnection) {
    this.#config = config;
  }

  /** The model name. */
  get model(): string {
    return this.#config.model;
  }

  /** The base URL, or `undefined` for OpenAI's default. */
  get baseURL(): string | undefined {
    return this.#config.baseURL;
  }

  /** One completion, retried as {@link withRetries} says. */
  async create(body: ChatBody, options: CallOptions): Promise<ChatCompletion> {
    const client = await this.#openai();
    return this.#retrying("chat completion", options, async () => {
      const scope = scopedSignal(options.signal);
      try {
        const completion = (await client.chat.completions.create({ ...body, model: this.#config.model, stream: false } as ChatCompletionCreateParamsNonStreaming, {
          signal: scope.signal,
          maxRetries: 0,
        })) as ChatCompletion;
        if (!completion || typeof completion !== "object" || !Array.isArray(completion.choices)) {
          throw new MalformedResponse(`the server answered something that is not a chat completion: ${truncate(JSON.stringify(completion) ?? String(completion), 200)}`);
        }
        return completion;
      } finally {
        scope.release();
      }
    });
  }

  /** A streamed completion (server-sent events). Retries cover the request until the stream starts. */
  async stream(body: ChatBody, options: CallOptions): Promise<AsyncIterable<ChatCompletionChunk>> {
    const client = await this.#openai();
    return this.#retrying("streamed chat completion", options, async () => {
      const scope = scopedSignal(options.signal);
      try {
        const stream = await client.chat.completions.create({ ...body, model: this.#config.model, stream: true } as never, { signal: scope.signal, maxRetries: 0 });
        return this.#guardStream(stream as unknown as AsyncIterable<ChatCompletionChunk>, scope.release);
      } catch (err) {
        scope.release();
        throw err;
      }
    });
  }

  /** Removes the key (and bearer tokens) from a text before it reaches a message or a log. */
  redact(text: string): string {
    return redactSecret(text, this.#config.secret.reveal());
  }

  async #retrying<T>(what: string, options: CallOptions, attempt: () => Promise<T>): Promise<T> {
    const log = this.#config.logger;
    return withRetries(attempt, {
      ...this.#config.retry,
      signal: options.signal,
      deadline: options.deadline,
      classify: (err) => this.#classify(err),
      onRetry: ({ attempt: n, delayMs, failure }) =>
        log.debug({ model: this.#config.model, attempt: n, delayMs: Math.round(delayMs), status: failure.status, reason: failure.message }, `${what} failed; retrying`),
    });
  }

  async *#guardStream(stream: AsyncIterable<ChatCompletionChunk>, release: () => void): AsyncGenerator<ChatCompletionChunk> {
    try {
      for await (const chunk of stream) yield chunk;
    } catch (err) {
      const failure = this.#classify(err);
      throw new MalformedResponse(`the stream broke: ${failure.message}`);
    } finally {
      release();
    }
  }

  #openai(): Promise<OpenAI> {
    // Imported on first use: a suite that never calls a model does not pay for loading the client.
    this.#client ??= import("openai").then(({ default: OpenAIClient }) => {
      const c = this.#config;
      return new OpenAIClient({
        apiKey: c.secret.reveal(),
        baseURL: c.baseURL,
        organization: c.organization ?? null,
        project: c.project ?? null,
        defaultHeaders: c.headers,
        timeout: c.requestTimeoutMs,
        maxRetries: 0,
        // The library never prints; the client's own console logger stays off.
        logLevel: "off",
      });
    });
    return this.#client;
  }

  #classify(err: unknown): AttemptFailure {
    const where = this.#config.baseURL ?? "api.openai.com";
    const e = err as { status?: unknown; headers?: AttemptFailure["headers"]; error?: unknown };
    const name = errorName(err);
    if (err instanceof MalformedResponse) return { status: 200, retryable: false, message: this.redact(err.message) };
    if (name === "APIConnectionTimeoutError") return { status: null, retryable: true, message: `request to ${where} timed out` };
    if (name === "APIConnectionError") {
      const cause = (err as { cause?: unknown }).cause;
      return { status: null, retryable: true, message: this.redact(`cannot reach ${where}: ${cause ? errorMessage(cause) : errorMessage(err)}`) };
    }
    if (typeof e?.status === "number") {
      return {
        status: e.status,
        headers: e.headers ?? null,
        retryable: isRetryableStatus(e.status),
        message: this.redact(`${where} answered ${errorMessage(err)}`),
      };
    }
    if (name === "SyntaxError") return { status: 200, retryable: false, message: this.redact(`malformed response from ${where}: ${errorMessage(err)}`) };
    return { status: null, retryable: false, message: this.redact(`${name}: ${errorMessage(err)}`) };
  }
}

/** A response that parsed but is not what the API promises. */
class MalformedResponse extends Error {
  override readonly name = "MalformedResponse";
}

/**
 * Removes `secret` (when it is long enough to be one) and anything shaped like a bearer token or
 * an OpenAI key from `text`.
 */
export function redactSecret(text: string, secret: string | undefined): string {
  let out = text;
  if (secret && secret.length >= 6 && secret !== NO_KEY_PLACEHOLDER) out = out.split(secret).join("[redacted]");
  return out.replace(/Bearer\s+[A-Za-z0-9._~+/=-]+/g, "Bearer [redacted]").replace(/\bsk-[A-Za-z0-9_-]{8,}/g, "sk-[redacted]");
}

/** Token usage of a completion in evalfleet's terms. */
export function usageOf(usage: ChatCompletion["usage"] | null | undefined): { inputTokens?: number; outputTokens?: number; totalTokens?: number } {
  if (!usage) return {};
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
}

function describeSecretType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return value === "" ? "an empty string" : "a blank string";
  return `a ${typeof value}`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
