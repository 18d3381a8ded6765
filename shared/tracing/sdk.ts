// runs in: both
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { EvalfleetError, ErrorCode, errorMessage } from "../errors.ts";
import type { TracingSettings } from "../environment.ts";
import { redactJson, redactText } from "../redaction/secrets.ts";
import { markTracingActive, tracingApi } from "./spans.ts";

/**
 * Starts the OpenTelemetry SDK in this thread, when the OTEL_* variables configure tracing
 * (`tracingSettingsFrom`, shared/environment.ts): a tracer provider with a batching processor and
 * the OTLP/HTTP exporter (`http/protobuf` or `http/json`), the AsyncLocalStorage context manager
 * (so an agent's `trace.getActiveSpan()` is its case's), registered globally through
 * `@opentelemetry/api`. The SDK packages are optional peer dependencies imported here only: a run
 * without tracing never loads them. Every span is redacted before it is exported
 * (shared/redaction/secrets.ts): its attributes, events and status message.
 *
 * Each process and each worker thread starts its own (a thread has its own module instances); a
 * case's spans are flushed before its result is sent ({@link flushTracing}), so a worker that
 * exits right after its last case loses none.
 */

interface Started {
  flush: () => Promise<void>;
  shutdown: () => Promise<void>;
}

let started: Promise<Started | null> | null = null;

/** What a process or thread adds to the resource: its role (`coordinator`, `thread`, `worker`). */
export interface TracingRole {
  role: string;
  /** More resource attributes (the worker's id). */
  attributes?: Record<string, string>;
}

/**
 * Starts tracing once per thread (later calls return the first call's outcome); resolves to
 * whether spans are now recorded. `settings` null: off, nothing loaded.
 */
export function startTracing(settings: TracingSettings | null, who: TracingRole): Promise<boolean> {
  if (!settings) return Promise.resolve(false);
  started ??= load(settings, who);
  return started.then((s) => s !== null);
}

/** Exports the spans ended so far (bounded by the exporter's timeout); no-op when tracing is off. */
export async function flushTracing(): Promise<void> {
  const s = await started;
  await s?.flush().catch(() => undefined);
}

/** Flushes and stops tracing in this thread; no-op when it is off. */
export async function shutdownTracing(): Promise<void> {
  const s = await started;
  started = null;
  markTracingActive(false, false);
  await s?.shutdown().catch(() => undefined);
}

async function load(settings: TracingSettings, who: TracingRole): Promise<Started | null> {
  let sdk: typeof import("@opentelemetry/sdk-trace-base");
  let resources: typeof import("@opentelemetry/resources");
  let hooks: typeof import("@opentelemetry/context-async-hooks");
  let Exporter: new (config: { url: string; headers: Record<string, string> }) => SpanExporter;
  try {
    [sdk, resources, hooks] = await Promise.all([import("@opentelemetry/sdk-trace-base"), import("@opentelemetry/resources"), import("@opentelemetry/context-async-hooks")]);
    Exporter =
      settings.protocol === "http/json"
        ? (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter
        : (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter;
  } catch (err) {
    throw new EvalfleetError(
      ErrorCode.Usage,
      `tracing is configured (OTEL_EXPORTER_OTLP_ENDPOINT) but the OpenTelemetry SDK cannot be loaded: ${errorMessage(err)} (npm install @opentelemetry/sdk-trace-base @opentelemetry/resources @opentelemetry/context-async-hooks @opentelemetry/exporter-trace-otlp-${settings.protocol === "http/json" ? "http" : "proto"})`,
      { field: "OTEL_EXPORTER_OTLP_ENDPOINT" },
    );
  }
  const resource = resources.resourceFromAttributes({
    ...settings.resourceAttributes,
    "service.name": settings.serviceName,
    "process.pid": process.pid,
    "evalfleet.role": who.role,
    ...who.attributes,
  });
  const exporter = new RedactingExporter(new Exporter({ url: settings.url, headers: settings.headers }));
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })] });
  const { context, trace } = tracingApi();
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  markTracingActive(true, settings.captureMessageContent);
  return { flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/** Wraps an exporter: every span is redacted before it leaves (a view over the span, the span itself untouched). */
class RedactingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }
  export(spans: ReadableSpan[], done: Parameters<SpanExporter["export"]>[1]): void {
    this.#inner.export(spans.map(redactSpan), done);
  }
  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

function redactSpan(span: ReadableSpan): ReadableSpan {
  // A view that inherits the span's methods (spanContext(), ...) and overrides what may hold text.
  return Object.create(span, {
    name: { value: redactText(span.name) },
    attributes: { value: redactJson(span.attributes) },
    events: { value: span.events.map((e) => ({ ...e, name: redactText(e.name), attributes: e.attributes ? redactJson(e.attributes) : e.attributes })) },
    status: { value: span.status.message ? { ...span.status, message: redactText(span.status.message) } : span.status },
  }) as ReadableSpan;
}
