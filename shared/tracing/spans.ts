// runs in: both
import { lazyPackage } from "../runtime/lazy-package.ts";
import type { Attributes, Context, Span, SpanKind as ApiSpanKind } from "@opentelemetry/api";

/**
 * evalfleet's spans, through `@opentelemetry/api` only (small; agents use it too), which is
 * required on first use: a run without tracing never loads it (a worker thread's start-up is the
 * shorter for it).
 * Until the SDK is started in this thread (shared/tracing/sdk.ts, only when the OTEL_* variables
 * configure tracing) every helper here is a no-op that creates nothing: {@link tracingActive} is
 * false and the callers skip their spans, so a run without tracing pays a flag test per phase.
 *
 * The trace context crosses boundaries as a W3C `traceparent` string (the case message, the thread
 * task, the agent's `ctx.traceparent`), parsed and written here without a propagator.
 */

/** Span and attribute names, written once. GenAI names follow the OpenTelemetry GenAI semantic conventions. */
/** `@opentelemetry/api`, required on first use (a CommonJS build; its state is global, shared with every other copy). */
export const tracingApi = lazyPackage<typeof import("@opentelemetry/api")>("@opentelemetry/api");

/** The span kinds, with `@opentelemetry/api`'s values (callers pass them without loading it). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];
/** `SpanStatusCode.ERROR` and `TraceFlags.SAMPLED` of the API. */
const STATUS_ERROR = 2;
const SAMPLED = 1;

/** The context while tracing is off: evalfleet's helpers only pass it around, and run code in it as it is. */
const INACTIVE: Context = Object.freeze({ getValue: () => undefined, setValue: () => INACTIVE, deleteValue: () => INACTIVE });

/** The active context (the API's), or the inactive one while tracing is off. */
export function activeContext(): Context {
  return active ? tracingApi().context.active() : INACTIVE;
}

export const SpanNames = {
  run: "evalfleet.run",
  publish: "evalfleet.publish",
  case: "evalfleet.case",
  phase: (name: string): string => `evalfleet.phase ${name}`,
  check: (name: string): string => `evalfleet.check ${name}`,
  chat: (model: string): string => `chat ${model}`,
} as const;

/** Attribute keys. */
export const Attr = {
  runId: "evalfleet.run.id",
  suite: "evalfleet.suite",
  caseName: "evalfleet.case.name",
  caseIndex: "evalfleet.case.index",
  caseTags: "evalfleet.case.tags",
  attempt: "evalfleet.case.attempt",
  worker: "evalfleet.worker",
  passed: "evalfleet.case.passed",
  skipped: "evalfleet.case.skipped",
  timedOut: "evalfleet.case.timed_out",
  error: "evalfleet.case.error",
  cases: "evalfleet.run.cases",
  costUsd: "evalfleet.usage.cost_usd",
  checkPassed: "evalfleet.check.passed",
  genAiOperation: "gen_ai.operation.name",
  genAiProvider: "gen_ai.provider.name",
  genAiSystem: "gen_ai.system",
  genAiRequestModel: "gen_ai.request.model",
  genAiResponseModel: "gen_ai.response.model",
  genAiResponseId: "gen_ai.response.id",
  genAiFinishReasons: "gen_ai.response.finish_reasons",
  genAiInputTokens: "gen_ai.usage.input_tokens",
  genAiOutputTokens: "gen_ai.usage.output_tokens",
  genAiInputMessages: "gen_ai.input.messages",
  genAiOutputMessages: "gen_ai.output.messages",
  serverAddress: "server.address",
} as const;

let active = false;
let captureContent = false;

/** Whether spans are recorded in this thread (the SDK started here). Default false. */
export function tracingActive(): boolean {
  return active;
}

/** Whether model calls carry their messages (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). */
export function captureMessageContent(): boolean {
  return active && captureContent;
}

/** Set by the SDK loader once its provider is registered (shared/tracing/sdk.ts). */
export function markTracingActive(on: boolean, capture: boolean): void {
  active = on;
  captureContent = capture;
}

/** The tracer evalfleet's spans come from. */
export function tracer(): ReturnType<ReturnType<typeof tracingApi>["trace"]["getTracer"]> {
  return tracingApi().trace.getTracer("evalfleet");
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The context a `traceparent` names (a remote parent), or the root context for a missing or malformed one. */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  const { trace, ROOT_CONTEXT } = tracingApi();
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return ROOT_CONTEXT;
  const spanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & SAMPLED, isRemote: true };
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

/** The W3C traceparent of `span` (default: the active one), or null when tracing is off or there is none. */
export function traceparentOf(span?: Span): string | null {
  if (!active) return null;
  const { trace } = tracingApi();
  const of = span ?? trace.getActiveSpan();
  if (!of) return null;
  const sc = of.spanContext();
  if (!trace.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & SAMPLED ? 1 : 0).toString(16).padStart(2, "0")}`;
}

/** Starts a span under `parent` (default: the active context), or returns null when tracing is off. */
export function startSpan(name: string, attributes: Attributes, parent?: Context, kind: SpanKind = SpanKind.INTERNAL): Span | null {
  if (!active) return null;
  return tracer().startSpan(name, { attributes, kind: kind as ApiSpanKind }, parent ?? activeContext());
}

/** The context with `span` active (the parent's own when `span` is null). */
export function contextWith(span: Span | null, parent?: Context): Context {
  if (!span) return parent ?? activeContext();
  return tracingApi().trace.setSpan(parent ?? activeContext(), span);
}

/** Runs `fn` with `ctx` as the active context (as it is while tracing is off). */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return ctx === INACTIVE ? fn() : tracingApi().context.with(ctx, fn);
}

/** Ends a span, marking it an error with `message` when given. */
export function endSpan(span: Span | null, error?: string | null): void {
  if (!span) return;
  if (error) span.setStatus({ code: STATUS_ERROR, message: error });
  span.end();
}

/**
 * Runs `fn` inside a span (active for its duration), ending it when `fn` settles; with tracing
 * off, just runs `fn`. A throw marks the span an error and is rethrown.
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span | null) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  if (!active) return fn(null);
  const { context, trace } = tracingApi();
  const span = tracer().startSpan(name, { attributes, kind: kind as ApiSpanKind }, context.active());
  try {
    return await context.with(trace.setSpan(context.active(), span), () => fn(span));
  } catch (err) {
    span.setStatus({ code: STATUS_ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
