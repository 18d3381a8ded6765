import type { Broker } from "../../shared/broker/setup.ts";
import { openRunKeys } from "../../shared/broker/setup.ts";
import { decodeSelection } from "../../shared/wire/case-selection.ts";
import { CaseResult } from "../../shared/result/result.ts";
import { COORDINATOR_LOST_SECONDS } from "./coordinator-heartbeat.ts";
import { CASES_STREAM, RESULTS_STREAM, caseSubjects, deliveryOfSubject, runConsumer, runKeys, resultSubjects } from "../../shared/broker/subjects.ts";
import { CancelSchema, WorkerRecordSchema, isFinishedPhase, tryParseJson, type WorkerRecord } from "../../shared/wire/nats.ts";
import { checkResultMessage } from "./result-check.ts";
import { readRunKey } from "./run-key.ts";
import { readManifest, readRunState } from "./run-records.ts";
import { LimitsRecordSchema } from "../../shared/wire/limits.ts";
import { BUILTIN_PRICES, priceUsage, usageTotals, type UsageTotals } from "../../shared/providers/prices.ts";
import type { CaseUsage } from "../../shared/wire/result-data.ts";
import type { KeySnapshot } from "../../shared/providers/limiter-core.ts";
import { deliveryKey } from "../run/trial-ledger.ts";

/**
 * A distributed run's progress as any machine can read it from NATS (`coordinator status`). Not
 * the agent run's `RunStatus` of shared/case/agent.ts.
 *
 * Every selected delivery is in exactly one bucket: `done + reporting + running + queued + noResult
 * = selected`. A delivery is one trial of one case (`--repeat N`: each case is N deliveries; without
 * it, a delivery is a case). The cases stream is read before the results, so a case that finishes between the
 * two reads is counted once (as done), never in no bucket at all.
 */
export interface RunProgress {
  runId: string;
  /** The phase the coordinator last recorded (`unknown` before its first record). */
  phase: string;
  /** The cancel reason, when the run was cancelled. */
  cancel: string | null;
  suite: string;
  fingerprint: string;
  createdAt: string;
  /** When the coordinator last wrote the run's state (its heartbeat), or null. */
  heartbeatAt: string | null;
  /** Seconds the coordinator expected the run to go on at `heartbeatAt`, from the recorded durations; null without history. */
  etaSeconds: number | null;
  /**
   * True when the run is not over and its coordinator's heartbeat has stopped for more than
   * COORDINATOR_LOST_SECONDS (coordinator-heartbeat.ts): `coordinator resume` finishes it.
   */
  coordinatorLost: boolean;
  /**
   * Deliveries of the run: selected cases times `trials`; with adaptive repeats, plus the later
   * trials planned so far (those queued or with a result: a case's next batch is planned as its
   * trials come in, so the count grows while the run goes on).
   */
  selected: number;
  /** Selected cases. */
  cases: number;
  /** Trials per case (`--repeat`, 1 without it; MIN of `--repeat MIN..MAX`). */
  trials: number;
  /** The most trials a case may get: MAX of `--repeat MIN..MAX`, else `trials`. */
  trialsMax: number;
  /** Deliveries whose result is stored (and proves its delivery). */
  done: number;
  passed: number;
  failed: number;
  /**
   * Cases no longer queued or held by a worker whose result is not stored yet: between their
   * acknowledgement and the stored result, or lost cases the coordinator records itself.
   */
  reporting: number;
  /** Delivered to a worker and not yet acknowledged. */
  running: number;
  /** Waiting for a worker (or, while the coordinator publishes, for their message). */
  queued: number;
  /** A finished run's cases without a stored result: skipped at a cancel, or lost (the coordinator's report has them). */
  noResult: number;
  /** Workers seen in the last 30 seconds. */
  workers: WorkerRecord[];
  /** The coordinator's provider limiter per key (pace, in flight, 429s, tokens), as last recorded; empty before any model call. */
  providers: KeySnapshot[];
  /** Tokens and cost of the stored results, priced by the built-in table (the suite's own prices are the coordinator's report's). */
  usage: UsageTotals;
}

/** Presence records older than this are not listed, in ms. */
const RECENT_WORKER_MS = 30_000;

/** Reads a run's manifest, state, queue, results and workers. */
export async function readRunProgress(broker: Broker, runId: string, now: () => number = Date.now): Promise<RunProgress> {
  const manifest = await readManifest(broker, runId);
  const tokens = await readRunKey(await openRunKeys(broker), runId);
  const state = await readRunState(broker, runId);
  const cancelEntry = await broker.kv.get(runKeys.cancel(runId));
  const cancel = cancelEntry && cancelEntry.operation === "PUT" ? CancelSchema.safeParse(tryParseJson(cancelEntry.string())) : null;

  const records: WorkerRecord[] = [];
  for await (const key of await broker.kv.keys(runKeys.workers(runId))) {
    const e = await broker.kv.get(key);
    const w = e && e.operation === "PUT" ? WorkerRecordSchema.safeParse(tryParseJson(e.string())) : null;
    if (w?.success) records.push(w.data);
  }
  const present = new Set(records.filter((w) => w.accepted).map((w) => w.workerId));

  const selectedIndexes = decodeSelection(manifest.selection);
  const selected = new Set(selectedIndexes);
  // The queue first, then the results (see the interface's comment).
  let ackPending = 0;
  try {
    ackPending = (await broker.jsm.consumers.info(CASES_STREAM, runConsumer(runId))).num_ack_pending;
  } catch {
    // The consumer is deleted once the run is over.
  }
  const trials = manifest.repeat;
  const trialsMax = Math.max(trials, manifest.repeatMax ?? trials);
  const planned = (index: number, trial: number): boolean => selected.has(index) && trial <= trialsMax;
  // An adaptive case's trials past MIN are counted once seen, queued or with a result.
  const later = new Set<string>();
  const seen = (index: number, trial: number): void => void (trial > trials && later.add(deliveryKey(index, trial)));
  const onStream = new Set<string>();
  const cases = await broker.jsm.streams.info(CASES_STREAM, { subjects_filter: caseSubjects(runId) });
  for (const subject of Object.keys(cases.state.subjects ?? {})) {
    const d = deliveryOfSubject(subject);
    if (d !== null && planned(d.index, d.trial)) {
      onStream.add(deliveryKey(d.index, d.trial));
      seen(d.index, d.trial);
    }
  }

  const passedByIndex = new Map<string, boolean>();
  const usages: Array<CaseUsage | null> = [];
  const info = await broker.jsm.streams.info(RESULTS_STREAM, { subjects_filter: resultSubjects(runId) });
  const stored = Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  if (stored > 0) {
    const consumer = await broker.js.consumers.get(RESULTS_STREAM, { filter_subjects: resultSubjects(runId) });
    // Status does not load the suite: the names are checked by the run's coordinator.
    const nameAt = (i: number): null | undefined => (selected.has(i) ? null : undefined);
    for (let read = 0; read < stored; ) {
      const batch = await consumer.fetch({ max_messages: Math.min(1000, stored - read), expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        const check = checkResultMessage(m.data, m.subject, { runId, tokens, nameAt });
        if (check.kind === "drop") continue;
        const index = check.kind === "ok" ? check.message.index : check.index;
        const trial = check.kind === "ok" ? check.message.trial : check.trial;
        const i = deliveryKey(index, trial);
        if (!planned(index, trial) || passedByIndex.has(i)) continue;
        seen(index, trial);
        if (check.kind === "ok") usages.push(priceUsage(check.message.result.usage, BUILTIN_PRICES));
        // What the run's coordinator does with it: a result from a worker not present, or a spoiled one, is recorded as an error.
        passedByIndex.set(i, check.kind === "ok" && present.has(check.message.workerId) && CaseResult.fromData(check.message.result).passed);
      }
      read += got;
      if (got === 0) break;
    }
  }

  const done = passedByIndex.size;
  const passed = [...passedByIndex.values()].filter(Boolean).length;
  const doneOnStream = [...onStream].filter((i) => passedByIndex.has(i)).length;
  const inQueue = onStream.size - doneOnStream;
  // A case whose result is stored but not yet acknowledged is still ack-pending: it is done.
  const running = Math.min(inQueue, Math.max(0, ackPending - doneOnStream));
  let queued = inQueue - running;
  const deliveries = selectedIndexes.length * trials + later.size;
  const rest = deliveries - done - inQueue;
  const phase = state?.phase ?? "unknown";
  let reporting = 0;
  let noResult = 0;
  if (phase === "publishing") queued += rest;
  else if (isFinishedPhase(phase) || phase === "cancelling") noResult = rest;
  else reporting = rest;

  const heartbeatAt = state?.updatedAt ?? null;
  const lastSign = Date.parse(heartbeatAt ?? manifest.createdAt);
  const coordinatorLost = !isFinishedPhase(phase) && Number.isFinite(lastSign) && now() - lastSign > COORDINATOR_LOST_SECONDS * 1000;
  return {
    runId,
    phase,
    cancel: cancel?.success ? cancel.data.reason : null,
    suite: manifest.suite.name,
    fingerprint: manifest.suite.fingerprint,
    createdAt: manifest.createdAt,
    heartbeatAt,
    etaSeconds: state?.etaSeconds ?? null,
    coordinatorLost,
    selected: deliveries,
    cases: manifest.selection.count,
    trials,
    trialsMax,
    done,
    passed,
    failed: done - passed,
    reporting,
    running,
    queued,
    noResult,
    workers: records.filter((w) => now() - Date.parse(w.seenAt) < RECENT_WORKER_MS),
    providers: await readLimits(broker, runId),
    usage: usageTotals(usages),
  };
}

/** The run's `<run>.limits` record (permit-server.ts), or none. */
async function readLimits(broker: Broker, runId: string): Promise<KeySnapshot[]> {
  const e = await broker.kv.get(runKeys.limits(runId));
  if (!e || e.operation !== "PUT") return [];
  const parsed = LimitsRecordSchema.safeParse(tryParseJson(e.string()));
  return parsed.success ? parsed.data.keys : [];
}
