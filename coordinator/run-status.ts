import type { Broker } from "../shared/jetstream-setup.ts";
import { decodeSelection } from "../shared/case-selection.ts";
import { CaseResult } from "../shared/result.ts";
import { CASES_STREAM, RESULTS_STREAM, runConsumer, runKeys, resultSubjects } from "../shared/subjects.ts";
import { CancelSchema, ResultMessageSchema, WorkerRecordSchema, tryParseJson, type WorkerRecord } from "../shared/wire.ts";
import { readManifest, readRunState } from "./nats-dispatch.ts";

/** A run's progress as any machine can read it from NATS. */
export interface RunStatus {
  runId: string;
  phase: string;
  /** The cancel reason, when the run was cancelled. */
  cancel: string | null;
  suite: string;
  fingerprint: string;
  createdAt: string;
  selected: number;
  done: number;
  passed: number;
  failed: number;
  /** Delivered to a worker and not yet acknowledged. */
  running: number;
  /** Waiting for a worker. */
  queued: number;
  /** Workers seen in the last 30 seconds. */
  workers: WorkerRecord[];
}

/** Reads a run's manifest, state, results, queue and workers. */
export async function runStatus(broker: Broker, runId: string): Promise<RunStatus> {
  const manifest = await readManifest(broker, runId);
  const state = await readRunState(broker, runId);
  const cancelEntry = await broker.kv.get(runKeys.cancel(runId));
  const cancel = cancelEntry && cancelEntry.operation === "PUT" ? CancelSchema.safeParse(tryParseJson(cancelEntry.string())) : null;

  const selected = new Set(decodeSelection(manifest.selection));
  const seen = new Map<number, boolean>();
  const info = await broker.jsm.streams.info(RESULTS_STREAM, { subjects_filter: resultSubjects(runId) });
  const stored = Object.keys(info.state.subjects ?? {}).length;
  if (stored > 0) {
    const consumer = await broker.js.consumers.get(RESULTS_STREAM, { filter_subjects: resultSubjects(runId) });
    while (seen.size < stored) {
      const batch = await consumer.fetch({ max_messages: 1000, expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        got++;
        const parsed = ResultMessageSchema.safeParse(tryParseJson(m.string()));
        if (parsed.success && selected.has(parsed.data.index) && !seen.has(parsed.data.index)) {
          seen.set(parsed.data.index, CaseResult.fromData(parsed.data.result).passed);
        }
      }
      if (got === 0) break;
    }
  }
  let running = 0;
  let queued = 0;
  try {
    const ci = await broker.jsm.consumers.info(CASES_STREAM, runConsumer(runId));
    running = ci.num_ack_pending;
    queued = ci.num_pending;
  } catch {
    // The consumer is deleted once the run is over.
  }
  const workers: WorkerRecord[] = [];
  const keys = await broker.kv.keys(runKeys.workers(runId));
  for await (const key of keys) {
    const e = await broker.kv.get(key);
    if (!e || e.operation !== "PUT") continue;
    const w = WorkerRecordSchema.safeParse(tryParseJson(e.string()));
    if (w.success && Date.now() - Date.parse(w.data.seenAt) < 30_000) workers.push(w.data);
  }
  const passed = [...seen.values()].filter(Boolean).length;
  return {
    runId,
    phase: state?.phase ?? "unknown",
    cancel: cancel?.success ? cancel.data.reason : null,
    suite: manifest.suite.name,
    fingerprint: manifest.suite.fingerprint,
    createdAt: manifest.createdAt,
    selected: manifest.selection.count,
    done: seen.size,
    passed,
    failed: seen.size - passed,
    running,
    queued,
    workers,
  };
}
