import type { JsMsg } from "@nats-io/jetstream";
import type { Broker } from "../shared/broker/setup.ts";
import { isAlreadyTaken } from "../shared/broker/api-codes.ts";
import { RESULTS_STREAM, eventBatchSubject, eventSubject, resultMsgId, resultSubject } from "../shared/broker/subjects.ts";
import { errorMessage } from "../shared/errors.ts";
import type { Logger } from "../shared/logger.ts";
import type { CaseResult } from "../shared/result/result.ts";
import { redactJson, redactResultData } from "../shared/redaction/secrets.ts";
import { sleep } from "../shared/process/sleep.ts";
import { MAX_RESULT_MESSAGE_BYTES, fitResultForWire, truncateOutput } from "../shared/wire/fit-result.ts";
import { boundTranscript } from "../shared/result/transcript.ts";
import { NATS_PROTOCOL, type EventMessage, type ResultMessage } from "../shared/wire/nats.ts";
import { resultSeal } from "../shared/wire/case-token.ts";
import type { CaseMetricsSink } from "./metrics.ts";
import { resultToWire } from "./pool/result-wire.ts";
import { EventBatcher } from "./event-batcher.ts";

/** Room kept free when a transcript is cut to fit its result message (the cut marker, JSON's quoting), in bytes. */
const TRANSCRIPT_MARGIN_BYTES = 4096;

/**
 * What a worker sends back for a run: each case's result, published create-only (the first result
 * per case wins; a later one finds the subject taken, which is fine), then the case message acked;
 * and the disposable live events (a case started, its run events). Nothing goes out with a secret
 * this worker knows in it (shared/redaction/secrets.ts); a secret split across two events is the run
 * server's to find (it passes each case's events through one streaming redactor).
 */

/** Attempts per result before it is handed back unpublished (with a growing pause between them). */
const PUBLISH_ATTEMPTS = 5;
/** Output kept when a result is still too big after {@link fitResultForWire}, in characters. */
const LAST_RESORT_OUTPUT_CHARS = 4096;

/** Options of {@link ResultPublisher}. */
export interface ResultPublisherOptions {
  broker: Broker;
  runId: string;
  /** `<host>/<pid>`, written on every result and event. */
  workerId: string;
  /** Fires when the drain grace is over: a failing publish stops retrying. */
  abort: AbortSignal;
  metrics?: CaseMetricsSink | null;
  /** Largest output kept on a published result, in bytes (the run's `--max-output-kb`). Default 256 KiB. */
  maxOutputBytes?: number;
  /** Send live events in batches, one message per tick (the manifest's `eventBatches`). Default false: one message per event. */
  batchEvents?: boolean;
}

/** Publishes a run's results and events from one worker. */
export class ResultPublisher {
  readonly #o: ResultPublisherOptions;
  #tick: Promise<void> | null = null;
  /** Case messages whose results are stored, to be acked on the next tick ({@link #ack}). */
  #acks: JsMsg[] = [];
  /** Resolves once the acks in {@link #acks} are sent; null when none is due. */
  #acksSent: Promise<void> | null = null;
  readonly #events: EventBatcher | null;

  constructor(options: ResultPublisherOptions) {
    this.#o = options;
    const { broker, runId, workerId } = options;
    const subject = eventBatchSubject(runId);
    this.#events = options.batchEvents
      ? new EventBatcher({
          runId,
          workerId,
          tick: () => this.nextTick(),
          send: (body) => {
            try {
              broker.nc.publish(subject, body);
            } catch {
              // Live events are disposable.
            }
          },
        })
      : null;
  }

  /**
   * Publishes the case's result, then acks its message. When the result cannot be published the
   * case must come back: it is handed back (nak) rather than acked. A lost ack only means a
   * redelivery, which finds the result (see {@link hasResult}) and acks again.
   */
  async publishThenAck(m: JsMsg, result: CaseResult, token: string, trial: number, log: () => Logger): Promise<void> {
    try {
      await this.nextTick();
      await this.publishResult(result, token, trial);
    } catch (err) {
      log().error({ err: errorMessage(err) }, "could not publish a result; handing the case back");
      this.#o.metrics?.caseHandedBack("publish_failed");
      m.nak(1000);
      return;
    }
    await this.#ack(m);
    this.#o.metrics?.caseFinished(result);
  }

  /**
   * Acks a case whose result is stored, on the next tick with every other ack due by then: they go
   * out in the socket write of that tick's results and events. Acked at once, each PubAck's ack
   * took a write of its own, or a few (writes were the largest cost left per case). Resolves once
   * the ack is handed to the client; a lost ack only means a redelivery ({@link hasResult}).
   */
  #ack(m: JsMsg): Promise<void> {
    this.#acks.push(m);
    return (this.#acksSent ??= this.nextTick().then(() => {
      this.#acksSent = null;
      const acks = this.#acks;
      this.#acks = [];
      for (const due of acks) {
        try {
          due.ack();
        } catch {
          // A closed connection: the case comes back, and its redelivery finds the result.
        }
      }
    }));
  }

  /**
   * Publishes a trial's result create-only, echoing the case message's delivery token, on the
   * subject sealed with it: if the subject already holds one, another worker won, which is fine.
   */
  async publishResult(result: CaseResult, token: string, trial: number): Promise<void> {
    const { broker, runId, workerId, abort } = this.#o;
    const wire = resultToWire(result, { response: false });
    const payload: ResultMessage = {
      v: NATS_PROTOCOL,
      runId,
      index: result.index,
      trial,
      name: result.name,
      workerId,
      token,
      // The response is left out and outputs are cut (repeats included) to fit a message; secrets
      // are removed first, since a cut through one would leave a piece no redactor recognises.
      result: fitResultForWire(redactResultData(wire), this.#o.maxOutputBytes),
    };
    // Encoded once: its length is the message's size, and the client sends these bytes as they are.
    let body = Buffer.from(JSON.stringify(payload));
    const transcript = payload.result.transcript;
    if (transcript && body.length > MAX_RESULT_MESSAGE_BYTES) {
      // The transcript travels with its result: it gives way first, cut to what the message has room for.
      const rest = Buffer.byteLength(JSON.stringify({ ...payload, result: { ...payload.result, transcript: null } }));
      payload.result = { ...payload.result, transcript: boundTranscript(transcript, MAX_RESULT_MESSAGE_BYTES - rest - TRANSCRIPT_MARGIN_BYTES) };
      body = Buffer.from(JSON.stringify(payload));
    }
    if (body.length > MAX_RESULT_MESSAGE_BYTES) {
      // Many fields near their limits at once: keep the verdicts, cut the output hard.
      body = Buffer.from(JSON.stringify({ ...payload, result: { ...payload.result, output: truncateOutput(payload.result.output, LAST_RESORT_OUTPUT_CHARS) } }));
    }
    const seal = resultSeal(token);
    for (let tries = 1; ; tries++) {
      try {
        await broker.publisher.publish(resultSubject(runId, result.index, seal, trial), body, {
          msgId: resultMsgId(runId, result.index, seal, trial),
          expectLastSubjectSequence: 0,
        });
        return;
      } catch (err) {
        if (isAlreadyTaken(err)) return;
        if (tries >= PUBLISH_ATTEMPTS || abort.aborted) throw err;
        await sleep(200 * 2 ** tries);
      }
    }
  }

  /**
   * Whether the case already has a result on the stream (a redelivered case whose result went
   * out). Asked of the stream's subjects, not its messages: a worker may not read results, and
   * only a holder of the case's token can have stored anything under its sealed subject.
   */
  async hasResult(index: number, trial: number, token: string): Promise<boolean> {
    const subject = resultSubject(this.#o.runId, index, resultSeal(token), trial);
    try {
      const info = await this.#o.broker.jsm.streams.info(RESULTS_STREAM, { subjects_filter: subject });
      return (info.state.subjects?.[subject] ?? 0) > 0;
    } catch {
      return false;
    }
  }

  /**
   * Publishes a live event on the next tick, in that tick's batch when the coordinator reads
   * batches (worker/event-batcher.ts); disposable, so a failure is ignored.
   */
  publishEvent(event: Omit<EventMessage, "v" | "runId" | "workerId">): void {
    if (this.#events) {
      this.#events.add(redactJson(event));
      return;
    }
    const { broker, runId, workerId } = this.#o;
    const message: EventMessage = { v: NATS_PROTOCOL, runId, workerId, ...redactJson(event) };
    void this.nextTick().then(() => {
      try {
        broker.nc.publish(eventSubject(runId, message.index), JSON.stringify(message));
      } catch {
        // Live events are disposable.
      }
    });
  }

  /**
   * Resolves on the next turn of the event loop, the same promise for everyone waiting in this turn.
   * Publishes and acks made right after it go out in one socket write: the client flushes what was
   * queued before its next microtask, and per-case writes were the largest cost left per case.
   */
  nextTick(): Promise<void> {
    return (this.#tick ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#tick = null;
        resolve();
      }),
    ));
  }
}
