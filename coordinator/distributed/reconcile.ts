import type { Broker } from "../../shared/broker/setup.ts";
import { CASES_STREAM, RESULTS_STREAM, caseSubject, deliveryOfSubject, resultSubject, runConsumer } from "../../shared/broker/subjects.ts";
import { errorMessage } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { tryParseJson } from "../../shared/wire/nats.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import type { RunCollector } from "./collect.ts";

/**
 * Lost cases: a trial of a case whose deliveries are used up (its workers kept dying under it) will
 * never get a result, so it is recorded as an error result naming the cause (each trial is its own
 * delivery: one lost trial is one infra trial of its case, the others still count). They are found two ways: the
 * server's max-deliveries advisory, and a periodic reconciliation that catches what the advisory
 * missed (a core message, lost while the coordinator was disconnected).
 */

/** One decoder for every advisory. */
const utf8 = new TextDecoder();

/** Why a lost case has no result. */
export function lostCaseError(deliveries: number): string {
  return `worker lost: delivered ${deliveries} times without a result`;
}

/** Options of {@link LostCases}. */
export interface LostCasesOptions {
  broker: Broker;
  runId: string;
  collector: RunCollector;
  /** The run's delivery tokens: a case's result is stored under its token's seal. */
  tokens: RunTokens;
  /** Deliveries per case (the manifest's), said in the loss record when the advisory does not say. */
  maxAttempts: number;
  /** Whether the run is collecting (reconciliation waits for the cases to be published, and stops at a cancel). */
  collecting: () => boolean;
  /** Whether a planned trial is still being published (adaptive repeats' next batch). Default: none is. */
  publishing?: (index: number, trial: number) => boolean;
  logger: Logger;
}

/** Finds and records a run's lost cases. */
export class LostCases {
  readonly #o: LostCasesOptions;
  #lost = 0;
  /** Reconciliations in a row that found nothing pending or in flight. */
  #quietRounds = 0;

  constructor(options: LostCasesOptions) {
    this.#o = options;
  }

  /** Cases recorded as lost so far. */
  get count(): number {
    return this.#lost;
  }

  /** Handles a max-deliveries advisory of the run's consumer (never throws: reconciliation catches what fails here). */
  async onMaxDeliveries(data: Uint8Array): Promise<void> {
    const advisory = tryParseJson(utf8.decode(data)) as { stream_seq?: number; deliveries?: number } | undefined;
    if (!advisory?.stream_seq) return;
    try {
      const stored = await this.#o.broker.jsm.streams.getMessage(CASES_STREAM, { seq: advisory.stream_seq });
      const delivery = stored ? deliveryOfSubject(stored.subject) : null;
      if (delivery === null) return;
      await this.#recordLost(delivery.index, delivery.trial, advisory.deliveries ?? this.#o.maxAttempts, advisory.stream_seq);
    } catch (err) {
      this.#o.logger.warn({ err: errorMessage(err) }, "could not process a max-deliveries advisory; reconciliation will catch the case");
    }
  }

  /** Finds cases that can no longer get a result (max-delivered leftovers the advisory missed). */
  async reconcile(): Promise<void> {
    const { broker, runId, collector } = this.#o;
    if (!this.#o.collecting() || collector.complete) return;
    const info = await broker.jsm.consumers.info(CASES_STREAM, runConsumer(runId));
    if (info.num_pending > 0 || info.num_ack_pending > 0) {
      this.#quietRounds = 0;
      return;
    }
    // A case handed back with a delay may be briefly counted nowhere: require two quiet rounds in a row.
    if (++this.#quietRounds < 2) return;
    for (const d of collector.missingTrials()) {
      // The next batch of an adaptive case may be planned and not yet published: not lost.
      if (this.#o.publishing?.(d.index, d.trial)) continue;
      const queued = await broker.jsm.streams.getMessage(CASES_STREAM, { last_by_subj: caseSubject(runId, d.index, d.trial) }).catch(() => null);
      // Nothing pending or in flight, yet the message is still stored: the server gave up on it.
      await this.#recordLost(d.index, d.trial, this.#o.maxAttempts, queued ? queued.seq : null);
    }
  }

  /** Records a trial whose deliveries are used up, unless its result has arrived after all. */
  async #recordLost(index: number, trial: number, deliveries: number, seq: number | null): Promise<void> {
    const { broker, runId, collector } = this.#o;
    const sel = collector.selectedAt(index);
    if (!sel || collector.hasTrial(index, trial) || !collector.isPlanned(index, trial)) return;
    const stored = await broker.jsm.streams.getMessage(RESULTS_STREAM, { last_by_subj: resultSubject(runId, index, this.#o.tokens.seal(index, trial), trial) }).catch(() => null);
    if (stored) {
      collector.onResult(stored.data, stored.subject);
      return;
    }
    const result = collector.errorResult(sel, lostCaseError(deliveries), deliveries);
    this.#lost++;
    this.#o.logger.warn({ index, trial, deliveries }, "case lost after all deliveries");
    if (seq !== null) await broker.jsm.streams.deleteMessage(CASES_STREAM, seq).catch(() => undefined);
    collector.accept(result, "loss record", trial);
  }
}
