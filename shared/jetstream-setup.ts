import type { NatsConnection } from "@nats-io/transport-node";
import { nanos } from "@nats-io/transport-node";
import {
  jetstream,
  jetstreamManager,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { EvalfleetError, ErrorCode, errorMessage } from "./errors.ts";
import { CASES_STREAM, CASES_STREAM_SUBJECTS, RESULTS_STREAM, RESULTS_STREAM_SUBJECTS, RUNS_BUCKET } from "./subjects.ts";

/**
 * The JetStream resources evalfleet needs, created on first use and checked on every start:
 * an existing stream with an incompatible configuration is a clear error, never silently changed.
 */

/** A connection with its JetStream handles and the runs bucket. */
export interface Broker {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
}

/** Options of {@link openBroker}. */
export interface BrokerOptions {
  /**
   * Replicas of the streams and the bucket when this call creates them (3 on a 3-node cluster);
   * existing ones keep theirs. Default `$EVALFLEET_STREAM_REPLICAS`, else 1.
   */
  replicas?: number;
  /** Days results are kept. Default 14. */
  resultRetentionDays?: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Binds (creating where missing) the cases and results streams and the runs bucket. */
export async function openBroker(nc: NatsConnection, options: BrokerOptions = {}): Promise<Broker> {
  const replicas = options.replicas ?? streamReplicasFromEnvironment();
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: 10_000 });
  } catch (err) {
    throw new EvalfleetError(ErrorCode.BrokerConfig, `JetStream is not available on ${nc.getServer()}: ${errorMessage(err)} (start nats-server with -js)`);
  }
  await ensureStream(jsm, {
    name: CASES_STREAM,
    subjects: CASES_STREAM_SUBJECTS,
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_age: nanos(2 * DAY_MS),
    duplicate_window: nanos(HOUR_MS),
    num_replicas: replicas,
  });
  await ensureStream(jsm, {
    name: RESULTS_STREAM,
    subjects: RESULTS_STREAM_SUBJECTS,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos((options.resultRetentionDays ?? 14) * DAY_MS),
    duplicate_window: nanos(HOUR_MS),
    num_replicas: replicas,
  });
  const js = jetstream(nc, { timeout: 10_000 });
  let kv: KV;
  try {
    kv = await new Kvm(js).create(RUNS_BUCKET, { history: 5, ttl: 30 * DAY_MS, replicas });
  } catch (err) {
    throw new EvalfleetError(ErrorCode.BrokerConfig, `cannot open the KV bucket ${RUNS_BUCKET}: ${errorMessage(err)}`);
  }
  return { nc, js, jsm, kv };
}

/** `EVALFLEET_STREAM_REPLICAS` (1-5, JetStream's range), or 1 when unset. */
export function streamReplicasFromEnvironment(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.EVALFLEET_STREAM_REPLICAS?.trim();
  if (!raw) return 1;
  const n = Number(raw);
  if (!/^[1-5]$/.test(raw)) throw new EvalfleetError(ErrorCode.Usage, `EVALFLEET_STREAM_REPLICAS must be 1 to 5, got '${env.EVALFLEET_STREAM_REPLICAS}'`, { field: "EVALFLEET_STREAM_REPLICAS" });
  return n;
}

async function ensureStream(jsm: JetStreamManager, wanted: Partial<StreamConfig> & { name: string; subjects: string[]; retention: RetentionPolicy }): Promise<void> {
  try {
    const info = await jsm.streams.info(wanted.name);
    const have = info.config;
    const problems: string[] = [];
    if (have.retention !== wanted.retention) problems.push(`retention ${have.retention}, expected ${wanted.retention}`);
    const subjects = [...(have.subjects ?? [])].sort().join(",");
    if (subjects !== [...wanted.subjects].sort().join(",")) problems.push(`subjects ${subjects || "(none)"}, expected ${wanted.subjects.join(",")}`);
    if (have.deny_purge && wanted.retention === RetentionPolicy.Workqueue) problems.push("deny_purge is set, so a cancelled run cannot purge its queue");
    if (problems.length > 0) {
      throw new EvalfleetError(ErrorCode.BrokerConfig, `stream ${wanted.name} exists with an incompatible configuration: ${problems.join("; ")}; delete it (nats stream rm ${wanted.name}) and let evalfleet recreate it`, {
        stream: wanted.name,
      });
    }
  } catch (err) {
    if (err instanceof EvalfleetError) throw err;
    if (err instanceof JetStreamApiError && err.code === 10059) {
      try {
        await jsm.streams.add(wanted);
        return;
      } catch (addErr) {
        // Another process may have created it in between; check again.
        if (addErr instanceof JetStreamApiError && /already in use|exists/i.test(addErr.message)) return ensureStream(jsm, wanted);
        throw new EvalfleetError(ErrorCode.BrokerConfig, `cannot create stream ${wanted.name}: ${errorMessage(addErr)}`);
      }
    }
    throw new EvalfleetError(ErrorCode.BrokerConfig, `cannot inspect stream ${wanted.name}: ${errorMessage(err)}`);
  }
}
