/**
 * A scripted server that speaks the OpenAI-compatible chat completions API over real HTTP on a
 * free loopback port (node:http, port 0). Tests script its replies: text, tool calls, streaming
 * (SSE, whenever the request asks for `stream: true`), error statuses with headers (429 with
 * Retry-After, 500), malformed bodies, and replies that never end. It records every request.
 *
 * Usage:
 *   const server = await startScriptedOpenAI();
 *   server.reply({ content: "hello" }, { status: 429, headers: { "retry-after": "0" } });
 *   server.handle((req) => ({ content: req.lastUserText }));   // once the queue is empty
 *   ... client with baseURL: server.url ...
 *   await server.close();
 */
import { after, before } from "node:test";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted tool call in a reply. `arguments` is JSON-encoded unless it is already a string. */
export interface ScriptedToolCall {
  name: string;
  arguments?: unknown;
  /** Default `call_<n>`. */
  id?: string;
}

/** What the server answers to one request. */
export interface ScriptedReply {
  /** Assistant text. */
  content?: string | null;
  toolCalls?: readonly ScriptedToolCall[];
  refusal?: string | null;
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Token usage; default 11 prompt, 7 completion. */
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** An HTTP status other than 200 answers an OpenAI-style error body (or `body`). */
  status?: number;
  /** Extra response headers (e.g. `retry-after`). */
  headers?: Record<string, string>;
  /** The message of the error body. Default `scripted <status>`. */
  errorMessage?: string;
  /** A raw body sent as is (e.g. malformed JSON), with status 200 unless `status` says otherwise. */
  body?: string;
  /**
   * Never finish: `"before-headers"` sends nothing, `"after-headers"` sends the status line and
   * headers (and, when streaming, a first chunk) and then stalls.
   */
  hang?: "before-headers" | "after-headers";
  /** Characters per content delta when streaming. Default 4. */
  chunkSize?: number;
}

/** A request as the server saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or `undefined` when it was not JSON. */
  body: Record<string, unknown> | undefined;
  raw: string;
  /** True when the body asked for `stream: true`. */
  stream: boolean;
  /** The request's chat messages (empty when there are none). */
  messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  /** The system message's text, or `""`. */
  system: string;
  /** The text of the last user message, or `""`. */
  lastUserText: string;
  /** The last message when it is a tool result, else `undefined`. */
  lastToolResult: { toolCallId: string; content: string } | undefined;
  /** The names of the tools the request offers. */
  toolNames: string[];
}

/**
 * A provider's rate limit (`limitRate`): at most `requests` admitted in any sliding window of
 * `windowMs`; a request above it is refused with 429, `Retry-After` (seconds until a slot frees)
 * and `retry-after-ms`. Every answer carries `x-ratelimit-limit-requests`, `-remaining-requests`
 * and `-reset-requests` (time until the oldest admitted request leaves the window). Admitted
 * requests answer after a latency drawn uniformly from `latencyMs` (default none).
 */
export interface RateLimitScript {
  requests: number;
  windowMs: number;
  latencyMs?: readonly [number, number];
  /** Leave out the x-ratelimit-* headers (a provider that says nothing). Default false. */
  silent?: boolean;
  /**
   * The limit drops mid-run (a key another client started to share, a lower tier): once
   * `afterAdmitted` requests have been admitted, at most `requests` per window from then on.
   */
  lowerTo?: { requests: number; afterAdmitted: number };
}

/** What the rate limit saw: epoch ms of each admitted and each refused request. */
export interface RateLimitLog {
  admitted: number[];
  refused: number[];
  /** Every request the limit judged, in arrival order: when (epoch ms), whether refused, and its last user message (to tell whose it was). */
  seen: Array<{ at: number; refused: boolean; text: string }>;
}

/** A handler that picks the reply from the request. */
export type ReplyHandler = (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

/** The running server. */
export interface ScriptedOpenAIServer {
  /** Base URL for clients, ending in `/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Requests whose connection the client closed before the reply finished (hung replies, aborts). */
  readonly aborted: RecordedRequest[];
  /** Queues replies, answered in order before the handler. */
  reply(...replies: ScriptedReply[]): void;
  /** Answers requests once the queue is empty. Default: a 500 saying nothing is scripted. */
  handle(handler: ReplyHandler): void;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once `count` requests have been closed by their client before their reply ended. */
  waitForAborts(count: number): Promise<void>;
  /** Enforces a rate limit from now on (null lifts it); its log starts empty. */
  limitRate(limit: RateLimitScript | null): void;
  /** What the rate limit admitted and refused. */
  readonly rateLog: RateLimitLog;
  /** Forgets the requests seen and answers 500 "no reply scripted" from now on (the queue stays). */
  reset(): void;
  /** Stops listening and cuts every open connection (hung replies included). */
  close(): Promise<void>;
}

const DEFAULT_USAGE = { prompt_tokens: 11, completion_tokens: 7 };

/** Starts a scripted server on 127.0.0.1 and a free port. */
export async function startScriptedOpenAI(): Promise<ScriptedOpenAIServer> {
  const queue: ScriptedReply[] = [];
  let handler: ReplyHandler = () => ({ status: 500, errorMessage: "the scripted server has no reply queued for this request" });
  const requests: RecordedRequest[] = [];
  const aborted: RecordedRequest[] = [];
  const waiters: Array<{ kind: "requests" | "aborts"; count: number; resolve: () => void }> = [];
  let callCounter = 0;
  let completionCounter = 0;
  let rateLimit: RateLimitScript | null = null;
  const rateLog: RateLimitLog = { admitted: [], refused: [], seen: [] };
  /** Times of the admitted requests inside the window (a sliding log). */
  let windowLog: number[] = [];

  /** Applies the rate limit to a request that just arrived: the headers to send, and whether it is refused. */
  const admit = (text: string): { refused: boolean; headers: Record<string, string>; delayMs: number } => {
    if (!rateLimit) return { refused: false, headers: {}, delayMs: 0 };
    const now = Date.now();
    const { windowMs, lowerTo } = rateLimit;
    const limit = lowerTo && rateLog.admitted.length >= lowerTo.afterAdmitted ? lowerTo.requests : rateLimit.requests;
    windowLog = windowLog.filter((t) => t > now - windowMs);
    const refused = windowLog.length >= limit;
    rateLog.seen.push({ at: now, refused, text });
    if (refused) rateLog.refused.push(now);
    else {
      windowLog.push(now);
      rateLog.admitted.push(now);
    }
    const resetMs = windowLog.length > 0 ? Math.max(1, windowLog[0]! + windowMs - now) : windowMs;
    const headers: Record<string, string> = rateLimit.silent
      ? {}
      : { "x-ratelimit-limit-requests": String(limit), "x-ratelimit-remaining-requests": String(Math.max(0, limit - windowLog.length)), "x-ratelimit-reset-requests": `${(resetMs / 1000).toFixed(3)}s` };
    if (refused) Object.assign(headers, { "retry-after": String(Math.ceil(resetMs / 1000)), "retry-after-ms": String(Math.ceil(resetMs)) });
    const [lo, hi] = rateLimit.latencyMs ?? [0, 0];
    return { refused, headers, delayMs: refused ? 0 : lo + Math.random() * Math.max(0, hi - lo) };
  };

  const notify = (): void => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if ((w.kind === "requests" ? requests.length : aborted.length) >= w.count) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  const server: Server = createServer((req, res) => {
    void serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `scripted server failure: ${String(err)}` } }));
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded = record(req, Buffer.concat(chunks).toString("utf8"));
    requests.push(recorded);
    notify();
    let finished = false;
    res.on("close", () => {
      if (!finished && !res.writableFinished) {
        aborted.push(recorded);
        notify();
      }
    });
    const limited = admit(recorded.lastUserText);
    if (limited.refused) {
      res.writeHead(429, { "content-type": "application/json", ...limited.headers });
      finished = true;
      res.end(JSON.stringify({ error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } }));
      return;
    }
    if (limited.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, limited.delayMs));
    const reply = queue.length > 0 ? queue.shift()! : await handler(recorded);
    const headers = { ...limited.headers, ...(reply.headers ?? {}) };

    if (reply.hang === "before-headers") return;
    if (reply.status && reply.status !== 200) {
      res.writeHead(reply.status, { "content-type": "application/json", ...headers });
      finished = true;
      res.end(reply.body ?? JSON.stringify({ error: { message: reply.errorMessage ?? `scripted ${reply.status}`, type: "scripted_error", code: null } }));
      return;
    }
    if (reply.body !== undefined) {
      res.writeHead(200, { "content-type": "application/json", ...headers });
      finished = true;
      res.end(reply.body);
      return;
    }
    const id = `chatcmpl-${++completionCounter}`;
    const model = typeof recorded.body?.model === "string" ? recorded.body.model : "scripted-model";
    const toolCalls = (reply.toolCalls ?? []).map((t) => ({
      id: t.id ?? `call_${++callCounter}`,
      type: "function" as const,
      function: { name: t.name, arguments: typeof t.arguments === "string" ? t.arguments : JSON.stringify(t.arguments ?? {}) },
    }));
    const finishReason = reply.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
    const usage = reply.usage ?? DEFAULT_USAGE;
    const usageBody = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const content = reply.content ?? (toolCalls.length > 0 ? null : "");

    if (recorded.stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
      const send = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1_700_000_000, model, choices, ...extra })}\n\n`);
      };
      send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null, logprobs: null }]);
      if (reply.hang === "after-headers") return;
      const size = Math.max(1, reply.chunkSize ?? 4);
      for (let i = 0; content && i < content.length; i += size) {
        send([{ index: 0, delta: { content: content.slice(i, i + size) }, finish_reason: null, logprobs: null }]);
      }
      if (reply.refusal) send([{ index: 0, delta: { refusal: reply.refusal }, finish_reason: null, logprobs: null }]);
      toolCalls.forEach((call, index) => {
        const args = call.function.arguments;
        const half = Math.ceil(args.length / 2);
        send([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: args.slice(0, half) } }] }, finish_reason: null, logprobs: null }]);
        send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, finish_reason: null, logprobs: null }]);
      });
      send([{ index: 0, delta: {}, finish_reason: finishReason, logprobs: null }]);
      const streamOptions = recorded.body?.stream_options as { include_usage?: boolean } | undefined;
      if (streamOptions?.include_usage) send([], { usage: usageBody });
      res.write("data: [DONE]\n\n");
      finished = true;
      res.end();
      return;
    }

    res.writeHead(200, { "content-type": "application/json", ...headers });
    if (reply.hang === "after-headers") {
      res.flushHeaders();
      return;
    }
    finished = true;
    res.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created: 1_700_000_000,
        model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content, refusal: reply.refusal ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
            finish_reason: finishReason,
            logprobs: null,
          },
        ],
        usage: usageBody,
      }),
    );
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    aborted,
    reply: (...replies) => void queue.push(...replies),
    limitRate: (limit) => {
      rateLimit = limit;
      windowLog = [];
      rateLog.admitted.length = 0;
      rateLog.refused.length = 0;
      rateLog.seen.length = 0;
    },
    rateLog,
    handle: (h) => void (handler = h),
    waitForRequests: (count) => new Promise<void>((resolve) => (waiters.push({ kind: "requests", count, resolve }), notify())),
    waitForAborts: (count) => new Promise<void>((resolve) => (waiters.push({ kind: "aborts", count, resolve }), notify())),
    reset: () => {
      requests.length = 0;
      aborted.length = 0;
      handler = () => ({ status: 500, errorMessage: "no reply scripted" });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function record(req: IncomingMessage, raw: string): RecordedRequest {
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object") body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  const messages = (Array.isArray(body?.messages) ? body.messages : []) as RecordedRequest["messages"];
  const text = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.map((p: { text?: string }) => p?.text ?? "").join("")
        : "";
  const system = messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => text(m.content)).join("\n");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const last = messages[messages.length - 1];
  const tools = (Array.isArray(body?.tools) ? body.tools : []) as Array<{ function?: { name?: string }; name?: string }>;
  return {
    method: req.method ?? "GET",
    path: req.url ?? "/",
    headers: { ...req.headers },
    body,
    raw,
    stream: body?.stream === true,
    messages,
    system,
    lastUserText: text(lastUser?.content),
    lastToolResult: last?.role === "tool" ? { toolCallId: String(last.tool_call_id ?? ""), content: text(last.content) } : undefined,
    toolNames: tools.map((t) => t.function?.name ?? t.name ?? "").filter(Boolean),
  };
}

/**
 * A scripted server for the enclosing file or `describe`: started before its tests, closed after
 * them. The returned object stands for that server once it has started. Setup that needs the
 * server goes in `onStarted`, which runs in the same hook: Node 20 does not wait for one
 * file-level `before` hook before it starts the next.
 */
export function useScriptedOpenAI(onStarted?: (server: ScriptedOpenAIServer) => void | Promise<void>): ScriptedOpenAIServer {
  let server: ScriptedOpenAIServer | undefined;
  before(async () => {
    server = await startScriptedOpenAI();
    await onStarted?.(server);
  });
  after(async () => {
    await server?.close();
  });
  return new Proxy({} as ScriptedOpenAIServer, {
    get(_target, key) {
      if (!server) throw new Error("useScriptedOpenAI: the server is not started yet (use it inside a test or a later hook)");
      const value: unknown = Reflect.get(server, key);
      return typeof value === "function" ? value.bind(server) : value;
    },
  });
}
