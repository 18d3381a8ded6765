import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import { REDACTED } from "../../shared/redaction/redact.ts";
import { redactJson, redactText } from "../../shared/redaction/secrets.ts";
import { looksLikeForm, redactFormText, redactUrlQuery } from "../../shared/redaction/redact-url.ts";
import { CASSETTE_VERSION, type Cassette, type CassetteExchange, type CassetteToolCall } from "../../shared/cassette/cassette.ts";
import { CassettePlayer, normalizedUrl, requestKey, toolKey } from "../../shared/cassette/cassette-match.ts";

/**
 * One case's recorder or replayer (`--record`, `--replay`, `--replay --record-missing`): what
 * `context.fetch`, the built-in model clients and `context.tool` go through while the case runs.
 * Recording sends each request and keeps the exchange, redacted; replaying answers each request
 * from the cassette (shared/cassette/cassette-match.ts says how a request finds its answer) and
 * sends nothing; a request the cassette lacks is a miss, which throws {@link ReplayMissError} at
 * the caller and fails the case (kind `check`), or, with `recordMissing`, is sent and recorded.
 */

/** What a session does with requests. */
export type CassetteMode = "record" | "replay";

/** A `fetch` as the session wraps it (`context.fetch` takes `limitKey` and `tokens` besides). */
export type FetchLike = (input: string | URL | Request, init?: RequestInit & { limitKey?: string; tokens?: number }) => Promise<Response>;

/** Request headers whose value is a credential: recorded as `[REDACTED]`, whatever the redactor knows. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie", "x-auth-token"]);
/** Answer headers never replayed: the body is stored decoded, and its length is the stored one's. */
const DROPPED_ANSWER_HEADERS: ReadonlySet<string> = new Set(["content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"]);
/** Statuses whose answer has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A request a replayed case made that its cassette holds no answer for (code REPLAY_MISS). */
export class ReplayMissError extends EvalfleetError {
  override readonly name = "ReplayMissError";
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCode.ReplayMiss, message, details);
  }
}

/** The message of the {@link ReplayMissError} `err` is or wraps (as the OpenAI client wraps a failed fetch in `cause`); null: none. */
export function replayMissMessage(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e !== null && typeof e === "object"; depth++) {
    if ((e as { code?: unknown }).code === ErrorCode.ReplayMiss) return errorMessage(e);
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** Whether `err` is or wraps a {@link ReplayMissError}. */
export function isReplayMiss(err: unknown): boolean {
  return replayMissMessage(err) !== null;
}

/** A request URL without credentials, percent-encoded ones in its query included (shared/redaction/redact-url.ts). */
function redactRequestUrl(url: string): string {
  return redactUrlQuery(redactText(url), redactText);
}

/** A text body without credentials; a form body field by field too, since encoding hides some shapes. */
function redactBodyText(text: string): string {
  const clean = redactText(text);
  return looksLikeForm(clean) ? redactFormText(clean, redactText) : clean;
}

function bodyOf(bytes: Uint8Array): { text: string; encoding: "utf8" | "base64" } {
  try {
    return { text: redactBodyText(utf8.decode(bytes)), encoding: "utf8" };
  } catch {
    // Not text (an image, a gzip the server sent as is): kept exactly, as base64.
    return { text: Buffer.from(bytes).toString("base64"), encoding: "base64" };
  }
}

function bytesOf(body: { text: string; encoding: "utf8" | "base64" }): Uint8Array {
  return body.encoding === "base64" ? Buffer.from(body.text, "base64") : Buffer.from(body.text, "utf8");
}

function requestHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) out[name] = CREDENTIAL_HEADERS.has(name) ? REDACTED : redactText(value);
  return out;
}

function answerHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (DROPPED_ANSWER_HEADERS.has(name)) continue;
    out[name] = name === "set-cookie" ? REDACTED : redactText(value);
  }
  return out;
}

/** `context.tool` outside a recording or replay: `fn` as is (awaited). */
export function caseTool<A, R>(_name: string, fn: (args: A) => R | Promise<R>): (args: A) => Promise<R> {
  return async (args: A) => fn(args);
}

/** The request as it will be recorded and matched: redacted method, URL, headers and body. */
interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: { text: string; encoding: "utf8" | "base64" } | null;
  key: string;
}

/** One case's session; see the module comment. */
export class CassetteSession {
  readonly caseName: string;
  readonly trial: number;
  readonly mode: CassetteMode;
  readonly recordMissing: boolean;
  /** The miss messages so far, in order (each also thrown at its caller). */
  readonly misses: string[] = [];
  readonly #player: CassettePlayer<CassetteExchange>;
  readonly #toolPlayer: CassettePlayer<CassetteToolCall>;
  /** What will be written: the recorded cassette's entries (replay) and each new one, by request number. */
  readonly #exchanges: (CassetteExchange | undefined)[];
  readonly #tools: CassetteToolCall[];
  #requests = 0;
  #changed = false;

  /** `recorded`: the case's cassette (replay; null when there is none: every request misses). */
  constructor(options: { caseName: string; trial: number; mode: CassetteMode; recordMissing?: boolean; recorded?: Cassette | null }) {
    this.caseName = options.caseName;
    this.trial = options.trial;
    this.mode = options.mode;
    this.recordMissing = options.mode === "replay" && options.recordMissing === true;
    const recorded = options.mode === "replay" ? options.recorded : null;
    this.#player = new CassettePlayer(recorded?.exchanges ?? [], (e) => requestKey(e.method, e.url, e.body?.text ?? null));
    this.#toolPlayer = new CassettePlayer(recorded?.tools ?? [], (t) => toolKey(t.name, t.args));
    this.#exchanges = recorded ? [...recorded.exchanges] : [];
    this.#tools = recorded ? [...recorded.tools] : [];
  }

  /** Whether there is something to write: a recording, or a replay that recorded what it missed. */
  get changed(): boolean {
    return this.mode === "record" || this.#changed;
  }

  /** `base` through this session: recorded (record), answered from the cassette (replay). */
  fetch(base: FetchLike): FetchLike {
    return (input, init) => this.#fetch(base, input, init);
  }

  /**
   * `fn` as a recorded tool (`context.tool(name, fn)`): recording calls it and keeps its argument
   * and what it returned or threw (as JSON data, redacted); replaying answers from the cassette
   * without calling it (a recorded throw throws an Error with its message again).
   */
  tool<A, R>(name: string, fn: (args: A) => R | Promise<R>): (args: A) => Promise<R> {
    return async (args: A) => {
      const plainArgs = args === undefined ? undefined : redactJson(JSON.parse(JSON.stringify(args)) as unknown);
      if (this.mode === "replay") {
        const hit = this.#toolPlayer.take(toolKey(name, plainArgs));
        if (hit) {
          if (hit.error !== null) throw new Error(hit.error);
          return structuredClone(hit.result) as R;
        }
        if (!this.recordMissing) throw this.#miss(`replay: no recorded answer for tool ${name}(${plainArgs === undefined ? "" : JSON.stringify(plainArgs)}) (case ${this.caseName})`, { tool: name });
        this.#changed = true;
      }
      try {
        const result = await fn(args);
        this.#tools.push({ name, ...(plainArgs === undefined ? {} : { args: plainArgs }), result: result === undefined ? null : redactJson(JSON.parse(JSON.stringify(result)) as unknown), error: null });
        return result;
      } catch (err) {
        this.#tools.push({ name, ...(plainArgs === undefined ? {} : { args: plainArgs }), error: redactText(errorMessage(err)) });
        throw err;
      }
    };
  }

  /** The cassette to write (entries in request order; a request that got no answer is left out). */
  toCassette(now = new Date()): Cassette {
    return {
      version: CASSETTE_VERSION,
      case: this.caseName,
      trial: this.trial,
      recordedAt: now.toISOString(),
      exchanges: this.#exchanges.filter((e): e is CassetteExchange => e !== undefined).map((e, i) => ({ ...e, request: i + 1 })),
      tools: this.#tools,
    };
  }

  async #fetch(base: FetchLike, input: string | URL | Request, init: (RequestInit & { limitKey?: string; tokens?: number }) | undefined): Promise<Response> {
    const number = ++this.#requests;
    const { limitKey, tokens, ...rest } = init ?? {};
    const recording = this.mode === "record" || this.recordMissing;
    // A URL with no body or a text one (what clients send) is read as is; anything else through a
    // Request, which reads every kind of body (bytes, form, stream) the same way.
    const simple = (typeof input === "string" || input instanceof URL) && (rest.body === undefined || rest.body === null || typeof rest.body === "string");
    const request = simple ? null : new Request(input, rest.body instanceof ReadableStream ? ({ ...rest, duplex: "half" } as RequestInit) : rest);
    const seen = request ? await seeRequest(request, recording) : seeSimple(String(input), rest, recording);
    if (this.mode === "replay") {
      const hit = this.#player.take(seen.key);
      if (hit) return answerOf(hit);
      if (!this.recordMissing) throw this.#miss(`replay: no recorded answer for ${seen.method} ${seen.url} (case ${this.caseName}, request ${number})`, { method: seen.method, url: seen.url, request: number });
      this.#changed = true;
    }
    // A recording keeps requests in the order they were made (not the order their answers came).
    const slot = this.mode === "record" ? number - 1 : -1;
    const extra = { ...(limitKey !== undefined ? { limitKey } : {}), ...(tokens !== undefined ? { tokens } : {}) };
    const response = await (request ? base(request, extra) : base(input, { ...rest, ...extra }));
    const bytes = NULL_BODY_STATUSES.has(response.status) ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
    const exchange: CassetteExchange = {
      request: number,
      method: seen.method,
      url: seen.url,
      headers: seen.headers,
      body: seen.body,
      response: { status: response.status, statusText: response.statusText, headers: answerHeaders(response.headers), body: bodyOf(bytes) },
    };
    if (slot >= 0) this.#exchanges[slot] = exchange;
    else this.#exchanges.push(exchange);
    // The caller reads the same answer it would have read from the network.
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  #miss(message: string, details: Record<string, unknown>): ReplayMissError {
    this.misses.push(message);
    return new ReplayMissError(message, { case: this.caseName, ...details });
  }
}

/** A request given as a URL and a text body (or none): nothing to parse. Headers only when they will be kept. */
function seeSimple(rawUrl: string, init: RequestInit, recording: boolean): SeenRequest {
  const method = (init.method ?? "GET").toUpperCase();
  const url = redactRequestUrl(normalizedUrl(rawUrl));
  const text = typeof init.body === "string" && init.body !== "" ? redactBodyText(init.body) : null;
  const body = text === null ? null : { text, encoding: "utf8" as const };
  return { method, url, headers: recording ? requestHeaders(new Headers(init.headers)) : {}, body, key: requestKey(method, url, text) };
}

/** A request given as a Request (or with a body of bytes, a form, a stream): read through a clone, so it can still be sent. */
async function seeRequest(request: Request, recording: boolean): Promise<SeenRequest> {
  const method = request.method.toUpperCase();
  const url = redactRequestUrl(request.url);
  let body: SeenRequest["body"] = null;
  if (request.body) {
    const bytes = new Uint8Array(await request.clone().arrayBuffer());
    if (bytes.length > 0) body = bodyOf(bytes);
  }
  return { method, url, headers: recording ? requestHeaders(request.headers) : {}, body, key: requestKey(method, url, body === null ? null : body.text) };
}

/** A recorded exchange as the Response a caller reads. */
function answerOf(e: CassetteExchange): Response {
  const r = e.response;
  // Text as a string: undici takes one in about half the time of the same bytes.
  const body = NULL_BODY_STATUSES.has(r.status) ? null : r.body.encoding === "utf8" ? r.body.text : bytesOf(r.body);
  return new Response(body, { status: r.status, statusText: r.statusText, headers: r.headers });
}
