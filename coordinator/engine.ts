import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import pLimit from "p-limit";
import type { RunEvent } from "../shared/agent.ts";
import type { Case } from "../shared/case.ts";
import { CaseResult, SuiteResult } from "../shared/result.ts";
import { EvalfleetError, ErrorCode } from "../shared/errors.ts";
import { round3 } from "../shared/py-format.ts";
import { callSyncHook } from "../worker/lifecycle.ts";
import { ResultCollector } from "./reassemble.ts";
import type { SelectedCase } from "./select.ts";

/**
 * The dispatch loop shared by the inline runner and the thread pool: bounded concurrency,
 * presentation hooks, cancellation, and reassembly in declaration order. Writes nothing to the console.
 */

/** Why unrun cases are skipped when the suite stops early (Agno's text, kept for every early stop). */
export const SUITE_ABORTED_REASON = "suite aborted after cancelled run";

/** Presentation hooks. All are sync; a throw or a returned promise is recorded on the case as `hook: ...`. */
export interface SuiteHooks {
  /** Before a case runs (not for skipped cases). */
  onCaseStart?: ((c: Case) => unknown) | null;
  /** After a case ends, skipped cases included. */
  onCaseEnd?: ((c: Case, result: CaseResult) => unknown) | null;
  /** Every streamed event except the final output. */
  onRunEvent?: ((c: Case, event: RunEvent) => unknown) | null;
}

/** Run lifecycle, for observers and logs. */
export type RunState = "selecting" | "dispatching" | "collecting" | "cancelling" | "done";

/** Runs one selected case; must never throw (a crash becomes an error result). */
export type CaseExecutor = (selected: SelectedCase, context: { signal: AbortSignal; onRunEvent: SuiteHooks["onRunEvent"] }) => Promise<CaseResult>;

/** Options of {@link runSelected}. */
export interface EngineOptions extends SuiteHooks {
  /** Cases in flight at once. Default 1 (Agno's sequential order). */
  concurrency?: number;
  /** Cancels the run: nothing new starts, in-flight cases are aborted, unrun cases are skipped. */
  signal?: AbortSignal | null;
  /** Default: a new UUID. */
  runId?: string | null;
  /** Told of every state change. */
  onStateChange?: ((state: RunState) => void) | null;
  /** The run passes when at least this fraction (0-1) of the cases pass; kept on the SuiteResult. Default: none. */
  passThreshold?: number | null;
  /** Runs per case (`--repeat`); kept on the SuiteResult (the executor runs them). Default 1. */
  repeat?: number;
}

/** Validates a concurrency-like option: a whole number >= 1. */
export function positiveInt(value: number | undefined, field: string, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new EvalfleetError(ErrorCode.Usage, `${field} must be a whole number >= 1, got ${String(value)}`, { field, value });
  }
  return v;
}

/** Runs the selected cases and returns them in declaration order, every one accounted for. */
export async function runSelected(selected: readonly SelectedCase[], execute: CaseExecutor, options: EngineOptions = {}): Promise<SuiteResult> {
  const started = performance.now();
  const concurrency = positiveInt(options.concurrency, "concurrency", 1);
  const runId = options.runId || randomUUID();
  const setState = (s: RunState): void => void options.onStateChange?.(s);
  const collector = new ResultCollector(selected);
  const cancel = new AbortController();
  // Every in-flight case listens on this signal; thousands may be in flight.
  setMaxListeners(0, cancel.signal);
  let stopped = false;
  const onAbort = (): void => {
    stopped = true;
    setState("cancelling");
    cancel.abort(options.signal?.reason);
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  setState("dispatching");
  const limit = pLimit(concurrency);
  try {
    await Promise.all(
      selected.map((sel) =>
        limit(async () => {
          if (stopped) return;
          const startErrors: string[] = [];
          if (options.onCaseStart) callSyncHook("onCaseStart", () => options.onCaseStart!(sel.case), (m) => startErrors.push(m));
          const result = await execute(sel, { signal: cancel.signal, onRunEvent: options.onRunEvent });
          // Recorded after the body and teardown, as Agno does.
          for (const m of startErrors) result.addError(m);
          if (options.onCaseEnd) callSyncHook("onCaseEnd", () => options.onCaseEnd!(sel.case, result), (m) => result.addError(m));
          collector.add(result);
          // A run that ends cancelled (a user's Ctrl-C inside the agent) stops the suite (spec M1).
          if (result.response?.status === "cancelled") stopped = true;
        }),
      ),
    );
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  setState("collecting");
  const results = collector.finish(SUITE_ABORTED_REASON);
  if (options.onCaseEnd) {
    const byIndex = new Map(selected.map((s) => [s.index, s.case]));
    for (const r of results) {
      if (r.skipped) callSyncHook("onCaseEnd", () => options.onCaseEnd!(byIndex.get(r.index)!, r), (m) => r.addError(m));
    }
  }
  setState("done");
  return new SuiteResult(results, {
    runId,
    durationSeconds: round3((performance.now() - started) / 1000),
    cancelled: Boolean(options.signal?.aborted),
    passThreshold: options.passThreshold ?? null,
    repeat: options.repeat ?? 1,
  });
}
