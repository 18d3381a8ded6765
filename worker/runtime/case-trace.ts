import type { Context, Span } from "@opentelemetry/api";
import type { CaseResult } from "../../shared/result/result.ts";
import { Attr, SpanNames, activeContext, contextFromTraceparent, contextWith, endSpan, runInContext, startSpan, traceparentOf, tracingActive } from "../../shared/tracing/spans.ts";

/**
 * The spans of one case (worker/runtime/lifecycle.ts): the case's span, under the run's (the
 * `traceparent` the case message or the thread task carried, or the active context inline), one
 * span per phase under it (`setup`, `run`, `checks`, `teardown`), and one per check under the
 * checks phase (`judge`, `reliability`, `scorer`, `expectations`, `eval_functions`). The agent
 * runs with the run phase's span active. {@link CaseTrace.start} returns null when tracing is
 * off, and the lifecycle then skips every call.
 */

/** What the case span is told about the case. */
export interface CaseTraceStart {
  name: string;
  tags: readonly string[];
  index: number;
  attempt: number;
  worker: string;
  /** The parent's W3C traceparent; absent: the active context. */
  traceparent?: string | null;
}

/** One case's spans. */
export class CaseTrace {
  readonly #case: Span;
  readonly #name: string;
  readonly #caseContext: Context;
  #phase: Span | null = null;
  #phaseName: string | null = null;
  #phaseContext: Context;

  private constructor(span: Span, name: string, ctx: Context) {
    this.#case = span;
    this.#name = name;
    this.#caseContext = ctx;
    this.#phaseContext = ctx;
  }

  /** The case's trace, or null when tracing is off in this thread. */
  static start(s: CaseTraceStart): CaseTrace | null {
    if (!tracingActive()) return null;
    const parent = s.traceparent ? contextFromTraceparent(s.traceparent) : activeContext();
    const span = startSpan(
      SpanNames.case,
      { [Attr.caseName]: s.name, [Attr.caseIndex]: s.index, [Attr.caseTags]: [...s.tags], [Attr.attempt]: s.attempt, [Attr.worker]: s.worker },
      parent,
    );
    if (!span) return null;
    span.updateName(`${SpanNames.case} ${s.name}`);
    return new CaseTrace(span, s.name, contextWith(span, parent));
  }

  /** Ends the current phase's span and starts `name`'s (`done` ends the last one). */
  phase(name: "setup" | "run" | "checks" | "teardown" | "done"): void {
    if (this.#phaseName === name) return;
    endSpan(this.#phase);
    this.#phase = null;
    this.#phaseName = name;
    this.#phaseContext = this.#caseContext;
    if (name === "done") return;
    this.#phase = startSpan(SpanNames.phase(name), { [Attr.caseName]: this.#name }, this.#caseContext);
    this.#phaseContext = contextWith(this.#phase, this.#caseContext);
  }

  /** The context of the current phase (its span active): the agent runs in the run phase's. */
  get phaseContext(): Context {
    return this.#phaseContext;
  }

  /** The traceparent of the current phase's span (the agent's `ctx.traceparent`). */
  get traceparent(): string | undefined {
    return traceparentOf(this.#phase ?? this.#case) ?? undefined;
  }

  /** Runs one check inside its span (active, so a judge's model call nests under it); `verdict` is read when it ends. */
  async check<T>(name: string, fn: () => Promise<T>, verdict: () => boolean | null | undefined): Promise<T> {
    const span = startSpan(SpanNames.check(name), {}, this.#phaseContext);
    try {
      return await runInContext(contextWith(span, this.#phaseContext), fn);
    } finally {
      const v = verdict();
      if (span && typeof v === "boolean") span.setAttribute(Attr.checkPassed, v);
      endSpan(span);
    }
  }

  /** Ends every open span with the case's outcome. */
  end(result: CaseResult): void {
    this.phase("done");
    const s = this.#case;
    s.setAttribute(Attr.passed, result.passed);
    s.setAttribute(Attr.skipped, result.skipped);
    s.setAttribute(Attr.timedOut, result.timedOut);
    const usage = result.usage;
    if (usage?.inputTokens != null) s.setAttribute(Attr.genAiInputTokens, usage.inputTokens);
    if (usage?.outputTokens != null) s.setAttribute(Attr.genAiOutputTokens, usage.outputTokens);
    if (usage?.costUsd != null) s.setAttribute(Attr.costUsd, usage.costUsd);
    if (result.error) s.setAttribute(Attr.error, result.error);
    endSpan(s, result.error);
  }
}
