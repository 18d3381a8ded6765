import { Writable } from "node:stream";

/**
 * Deterministic test doubles: a scripted agent, a scripted judge model, a stub scorer.
 * Real code paths run against them; only the model is replaced.
 */
import type { Agent, CaseInput, RunContext, RunEvent, RunOutput } from "../../index.ts";
import type { JudgeModel, JudgeRequest, Scorer, ScoreData } from "../../index.ts";

/** Resolves after `ms`, or rejects with the signal's reason when it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

/** A promise with its resolver: a latch for "no sleeps where a latch will do". */
export function latch<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

/** Options of {@link StubAgent}, after Agno's test double. */
export interface StubAgentOptions {
  id?: string | null;
  /** Events streamed before the output. */
  events?: RunEvent[];
  /** The final output; default `{ content: "stub response", status: "completed" }`. */
  output?: RunOutput;
  /** Thrown by run() before streaming. */
  error?: Error;
  /** Milliseconds before the first event. */
  delay?: number;
  /** Milliseconds after the events, before the output. */
  postDelay?: number;
  /** Milliseconds of stall after the output (the stream does not end). */
  tailDelay?: number;
  /** Emit the output at all. Default true. */
  emitOutput?: boolean;
  /** Return a promise of the output instead of a stream. */
  promise?: boolean;
  /** Ignore the abort signal while sleeping (a stubborn agent). */
  ignoreAbort?: boolean;
}

/** A scripted agent that records its calls. */
export class StubAgent implements Agent {
  readonly id: string | null;
  runCount = 0;
  readonly sessionIds: string[] = [];
  readonly inputs: CaseInput[] = [];
  readonly signals: AbortSignal[] = [];
  readonly #o: StubAgentOptions;

  constructor(options: StubAgentOptions = {}) {
    this.id = options.id === undefined ? "stub-agent" : options.id;
    this.#o = options;
  }

  run(input: CaseInput, ctx: RunContext): Promise<RunOutput> | AsyncIterable<RunEvent> {
    this.runCount++;
    this.sessionIds.push(ctx.sessionId);
    this.inputs.push(input);
    this.signals.push(ctx.signal);
    const o = this.#o;
    const output = o.output ?? { content: "stub response", status: "completed" };
    const wait = (ms: number | undefined): Promise<void> => (ms ? sleep(ms, o.ignoreAbort ? undefined : ctx.signal) : Promise.resolve());
    if (o.error) throw o.error;
    if (o.promise) {
      return (async () => {
        await wait(o.delay);
        await wait(o.postDelay);
        return output;
      })();
    }
    return (async function* () {
      await wait(o.delay);
      for (const e of o.events ?? []) yield e;
      await wait(o.postDelay);
      if (o.emitOutput !== false) yield { type: "run_output", output } as RunEvent;
      await wait(o.tailDelay);
    })();
  }
}

/** A judge answer, or a function of the request. */
export type JudgeScript = unknown | ((request: JudgeRequest) => unknown);

/** A judge model with scripted answers; records every request. */
export class ScriptedJudge implements JudgeModel {
  readonly id: string;
  readonly requests: JudgeRequest[] = [];
  readonly #answer: JudgeScript;
  readonly #delay: number;
  readonly #error: Error | undefined;

  constructor(options: { id?: string; answer?: JudgeScript; delay?: number; error?: Error } = {}) {
    this.id = options.id ?? "scripted-judge";
    this.#answer = options.answer ?? { passed: true, reason: "meets the criteria" };
    this.#delay = options.delay ?? 0;
    this.#error = options.error;
  }

  async judge(request: JudgeRequest, options: { signal: AbortSignal }): Promise<unknown> {
    this.requests.push(request);
    if (this.#delay) await sleep(this.#delay, options.signal);
    if (this.#error) throw this.#error;
    return typeof this.#answer === "function" ? (this.#answer as (r: JudgeRequest) => unknown)(request) : this.#answer;
  }
}

/** A scorer returning a fixed verdict (or throwing); records its calls. */
export class StubScorer implements Scorer {
  readonly calls: Array<{ run: RunOutput; expected: unknown }> = [];
  readonly #result: ScoreData | (() => ScoreData);
  readonly #delay: number;

  constructor(result: ScoreData | (() => ScoreData) = { value: 1, passed: true, reason: "stub ok" }, options: { delay?: number } = {}) {
    this.#result = result;
    this.#delay = options.delay ?? 0;
  }

  async score(run: RunOutput, expected: unknown, ctx: { signal: AbortSignal }): Promise<ScoreData> {
    this.calls.push({ run, expected });
    if (this.#delay) await sleep(this.#delay, ctx.signal);
    return typeof this.#result === "function" ? this.#result() : this.#result;
  }
}

/** A real Writable that keeps everything written to it (a stand-in stdout for CLI tests). */
export class MemoryStream extends Writable {
  readonly chunks: string[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    done();
  }
  get text(): string {
    return this.chunks.join("");
  }
}
