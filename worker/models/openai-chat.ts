import type OpenAI from "openai";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import { ConfigError, ErrorCode, EvalfleetError, errorMessage, errorName } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { pyRepr } from "../../shared/py-format.ts";
import { REDACTED } from "../../shared/redaction/redact.ts";
import { MIN_REGISTERED_SECRET_LENGTH, redactText } from "../../shared/redaction/secrets.ts";
import { processEnvironment, type Environment } from "../../shared/environment.ts";
import { scopedSignal } from "../runtime/scoped-signal.ts";
import { Attr, SpanKind, SpanNames, captureMessageContent, endSpan, inSpan, startSpan } from "../../shared/tracing/spans.ts";
import type { Span } from "@opentelemetry/api";
import { cachedCall } from "./response-cache.ts";
import { caseFetch } from "../cassette/case-fetch.ts";
import { replayMissMessage } from "../cassette/cassette-session.ts";
import { DEFAULT_RETRY_POLICY, isRetryableStatus, withRetries, type AttemptFailure, type RetryPolicy } from "./retry.ts";
import { estimateTokens, providerKey, type LimitPermit } from "../../shared/providers/limiter.ts";
import type { LimitFeedback } from "../../shared/providers/limiter-core.ts";
import { feedbackFrom } from "../../shared/providers/rate-headers.ts";
import { processLimiter } from "../../shared/providers/process-limiter.ts";
import { LimitKeySchema } from "../../shared/providers/limiter.ts";

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
  /**
   * The provider limit key every request of this client is paced under (docs/providers.md).
   * Default: derived from the base URL and model, `openai:<model>` for OpenAI's API, else
   * `<host[:port]>:<model>`.
   */
  limitKey?: string | null;
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
  /** The provider limit key of every request. */
  limitKey: string;
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
    return REDACTED;
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return REDACTED;
  }
}

/** OpenAI's endpoint, when no base URL is given (the cache key names the endpoint). */
const OPENAI_DEFAULT_ENDPOINT = "https://api.openai.com/v1";

/** Placeholder key for local servers that need none (the client refuses an empty key). */
export const NO_KEY_PLACEHOLDER = "evalfleet-no-key";

/**
 * Validates connection options. Throws a {@link ConfigError} whose message starts with `who`
 * and names the field and the value (never the value of `apiKey`).
 */
export function resolveConnection(who: string, options: OpenAIConnectionOptions, env: Environment = processEnvironment()): ResolvedConnection {
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
    limitKey: limitKeyOf(optionalString("limitKey"), baseURL, options.model, bad),
    secret: new SecretBox(apiKey ?? NO_KEY_PLACEHOLDER),
  };
}

/** The limit key of a client: the one given (checked), else the one derived from the base URL and model. */
function limitKeyOf(given: string | undefined, baseURL: string | undefined, model: string, bad: (field: string, rule: string, value: unknown) => never): string {
  if (given === undefined) return providerKey(baseURL, model);
  if (!LimitKeySchema.safeParse(given).success) bad("limitKey", "must be a key without spaces, '=', ';' or ','", given);
  return given;
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

  /** The provider limit key of every request. */
  get limitKey(): string {
    return this.#config.limitKey;
  }

  /**
   * One completion, retried as {@link withRetries} says; through the response cache when a run
   * turned it on (response-cache.ts: a cached answer makes no call at all). Every attempt waits for
   * a permit of the client's limit key (the process's limiter, fleet-wide in distributed mode) and
   * tells it the answer's status, rate-limit headers and tokens.
   */
  async create(body: ChatBody, options: CallOptions): Promise<ChatCompletion> {
    // With tracing on: one GenAI span per call (its retries inside), under the active span (a check's, or the agent's run).
    return inSpan(SpanNames.chat(this.#config.model), this.#requestAttributes(body), async (span) => {
      const completion = await cachedCall({ endpoint: this.#config.baseURL ?? OPENAI_DEFAULT_ENDPOINT, model: this.#config.model, body }, () => this.#create(body, options), {
        // A cached answer spent no tokens: its usage says so, so token counts and budgets do not count it twice.
        onHit: (completion) => ({ ...completion, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }) as ChatCompletion,
      });
      if (span) this.#responseAttributes(span, completion);
      return completion;
    }, SpanKind.CLIENT);
  }

  /** GenAI attributes of a request (semantic conventions); its messages only with content capture on. */
  #requestAttributes(body: ChatBody): Record<string, string | number | boolean> {
    const attrs: Record<string, string | number | boolean> = {
      [Attr.genAiOperation]: "chat",
      [Attr.genAiProvider]: "openai",
      [Attr.genAiSystem]: "openai",
      [Attr.genAiRequestModel]: this.#config.model,
    };
    if (this.#config.baseURL) {
      try {
        attrs[Attr.serverAddress] = new URL(this.#config.baseURL).hostname;
      } catch {
        // Not a URL the client would use either; left out.
      }
    }
    if (captureMessageContent()) attrs[Attr.genAiInputMessages] = this.redact(JSON.stringify(body.messages ?? []));
    return attrs;
  }

  #responseAttributes(span: Span, completion: ChatCompletion): void {
    if (completion.model) span.setAttribute(Attr.genAiResponseModel, completion.model);
    if (completion.id) span.setAttribute(Attr.genAiResponseId, completion.id);
    span.setAttribute(Attr.genAiFinishReasons, completion.choices.map((c) => String(c.finish_reason ?? "")));
    const usage = usageOf(completion.usage);
    if (usage.inputTokens !== undefined) span.setAttribute(Attr.genAiInputTokens, usage.inputTokens);
    if (usage.outputTokens !== undefined) span.setAttribute(Attr.genAiOutputTokens, usage.outputTokens);
    if (captureMessageContent()) span.setAttribute(Attr.genAiOutputMessages, this.redact(JSON.stringify(completion.choices.map((c) => c.message))));
  }

  async #create(body: ChatBody, options: CallOptions): Promise<ChatCompletion> {
    const client = await this.#openai();
    return this.#retrying("chat completion", options, async () => {
      const permit = await this.#permit(body, options);
      let feedback: LimitFeedback = { status: null };
      const scope = scopedSignal(options.signal);
      try {
        const { data, response } = await client.chat.completions
          .create({ ...body, model: this.#config.model, stream: false } as ChatCompletionCreateParamsNonStreaming, {
            signal: scope.signal,
            maxRetries: 0,
          })
          .withResponse();
        const completion = data as ChatCompletion;
        feedback = feedbackFrom(response.status, response.headers, tokensOf(completion));
        if (!completion || typeof completion !== "object" || !Array.isArray(completion.choices)) {
          throw new MalformedResponse(`the server answered something that is not a chat completion: ${truncate(JSON.stringify(completion) ?? String(completion), 200)}`);
        }
        return completion;
      } catch (err) {
        if (feedback.status === null) feedback = errorFeedback(err);
        throw err;
      } finally {
        permit.release(feedback);
        scope.release();
      }
    });
  }

  /** A streamed completion (server-sent events). Retries cover the request until the stream starts. */
  async stream(body: ChatBody, options: CallOptions): Promise<AsyncIterable<ChatCompletionChunk>> {
    const client = await this.#openai();
    // With tracing on, the call's span lasts until the stream ends.
    const span = startSpan(SpanNames.chat(this.#config.model), this.#requestAttributes(body), undefined, SpanKind.CLIENT);
    try {
      return await this.#retrying("streamed chat completion", options, async () => {
        const permit = await this.#permit(body, options);
        const scope = scopedSignal(options.signal);
        try {
          const { data: stream, response } = await (client.chat.completions.create({ ...body, model: this.#config.model, stream: true } as never, { signal: scope.signal, maxRetries: 0 }) as unknown as {
            withResponse(): Promise<{ data: AsyncIterable<ChatCompletionChunk>; response: Response }>;
          }).withResponse();
          // The permit covers the request; the stream's tokens are not known here.
          permit.release(feedbackFrom(response.status, response.headers));
          return this.#guardStream(stream, () => {
            scope.release();
            endSpan(span);
          });
        } catch (err) {
          permit.release(errorFeedback(err));
          scope.release();
          throw err;
        }
      });
    } catch (err) {
      endSpan(span, errorMessage(err));
      throw err;
    }
  }

  /** Removes the key (and bearer tokens) from a text before it reaches a message or a log. */
  redact(text: string): string {
    return redactSecret(text, this.#config.secret.reveal());
  }

  /**
   * Waits for a permit of this client's key, for a request of about `body`'s size, never past the
   * case deadline: a key paced or paused (a Retry-After) beyond it fails the call (an `infra` error).
   */
  async #permit(body: ChatBody, options: CallOptions): Promise<LimitPermit> {
    const allowance = typeof body.max_completion_tokens === "number" ? body.max_completion_tokens : typeof body.max_tokens === "number" ? body.max_tokens : 256;
    const tokens = estimateTokens(body.messages, allowance);
    const key = this.#config.limitKey;
    if (options.deadline === undefined) return processLimiter().acquire(key, { tokens, signal: options.signal });
    const byDeadline = AbortSignal.timeout(Math.max(0, options.deadline - Date.now()));
    try {
      return await processLimiter().acquire(key, { tokens, signal: AbortSignal.any([options.signal, byDeadline]) });
    } catch (err) {
      if (options.signal.aborted || !byDeadline.aborted) throw err;
      throw new EvalfleetError(ErrorCode.ProviderLimit, `no permit of provider key ${key} before the case deadline (the key is paced by its limit, or paused by the provider's Retry-After)`, { key });
    }
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
        fetch: caseFetch, // the running case's cassette under --record / --replay
      });
    });
    return this.#client;
  }

  #classify(err: unknown): AttemptFailure {
    const where = this.#config.baseURL ?? "api.openai.com";
    const e = err as { status?: unknown; headers?: AttemptFailure["headers"]; error?: unknown };
    const name = errorName(err);
    if (err instanceof MalformedResponse) return { status: 200, retryable: false, message: this.redact(err.message) };
    const miss = replayMissMessage(err); // a replay miss misses again on every try: said once, as the cassette said it
    if (miss !== null) return { status: null, retryable: false, message: miss };
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

/** What a failed request tells the limiter: the SDK error's status and headers, or no answer at all. */
function errorFeedback(err: unknown): LimitFeedback {
  const e = err as { status?: unknown; headers?: unknown };
  if (typeof e?.status === "number") return feedbackFrom(e.status, e.headers as Parameters<typeof feedbackFrom>[1]);
  return { status: null };
}

/** Tokens a completion reports (prompt + completion), or null. */
function tokensOf(completion: ChatCompletion | null | undefined): number | null {
  const u = completion?.usage;
  if (!u) return null;
  return typeof u.total_tokens === "number" ? u.total_tokens : (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0);
}

/** A response that parsed but is not what the API promises. */
class MalformedResponse extends Error {
  override readonly name = "MalformedResponse";
}

/**
 * `text` through the process's redactor (shared/redaction/secrets.ts), with this client's own key (when it is
 * long enough to be one) added: a key passed in code is not in the environment.
 */
export function redactSecret(text: string, secret: string | undefined): string {
  return redactText(text, secret && secret.length >= MIN_REGISTERED_SECRET_LENGTH && secret !== NO_KEY_PLACEHOLDER ? [secret] : []);
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

