// runs in: main
import type { NatsConnection } from "@nats-io/transport-node";
import { ConfirmedPublisher } from "./publisher.ts";
import { nanos } from "@nats-io/transport-node";
import {
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { EvalfleetError, ErrorCode, errorMessage } from "../errors.ts";
import { isStreamNotFound } from "./api-codes.ts";
import { CASES_STREAM, CASES_STREAM_SUBJECTS, RESULTS_STREAM, RESULTS_STREAM_SUBJECTS, RUNS_BUCKET, RUN_KEYS_BUCKET } from "./subjects.ts";
import { sleep } from "../process/sleep.ts";
import { processEnvironment, streamReplicasFromEnvironment } from "../environment.ts";

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
  /** Publishes into the streams and waits for PubAcks on one reply subscription (see ConfirmedPublisher). */
  publisher: ConfirmedPublisher;
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
  /**
   * A stream or the bucket is missing and this NATS user may not create it (a least-privilege
   * worker): wait for a coordinator to create it instead of failing, until `signal` fires.
   * `onWait` is told once per missing resource. Default: fail with the permissions error.
   */
  waitForCreation?: { signal?: AbortSignal; onWait?: (line: string) => void } | null;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** How long run records (and run keys) are kept, in ms. */
const RUN_RECORDS_TTL_MS = 30 * DAY_MS;

/** Binds (creating where missing) the cases and results streams and the runs bucket. */
export async function openBroker(nc: NatsConnection, options: BrokerOptions = {}): Promise<Broker> {
  const replicas = options.replicas ?? streamReplicasFromEnvironment(processEnvironment());
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: 10_000 });
  } catch (err) {
    if (isPermissionDenied(err)) {
      // Most often the reply subjects: a server that confines this user's replies to a prefix.
      throw new EvalfleetError(ErrorCode.BrokerConfig, `the NATS user may not use JetStream on ${nc.getServer()}: ${errorMessage(err)} (if the server allows this user only its own reply prefix, set --nats-inbox-prefix or NATS_INBOX_PREFIX to it)`);
    }
    throw new EvalfleetError(ErrorCode.BrokerConfig, `JetStream is not available on ${nc.getServer()}: ${errorMessage(err)} (start nats-server with -js)`);
  }
  const wait = options.waitForCreation ?? null;
  await ensureStream(jsm, wait, {
    name: CASES_STREAM,
    subjects: CASES_STREAM_SUBJECTS,
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_age: nanos(2 * DAY_MS),
    duplicate_window: nanos(HOUR_MS),
    num_replicas: replicas,
  });
  await ensureStream(jsm, wait, {
    name: RESULTS_STREAM,
    subjects: RESULTS_STREAM_SUBJECTS,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos((options.resultRetentionDays ?? 14) * DAY_MS),
    duplicate_window: nanos(HOUR_MS),
    num_replicas: replicas,
  });
  const js = jetstream(nc, { timeout: 10_000 });
  let kv: KV | undefined;
  let kvError: unknown;
  // The same race as the streams' (see ensureStream): retry, binding what the winner created.
  for (let attempt = 1; attempt <= 5 && !kv; attempt++) {
    try {
      kv = await withinMs(new Kvm(js).create(RUNS_BUCKET, { history: 5, ttl: RUN_RECORDS_TTL_MS, replicas }), CREATE_PATIENCE_MS, `opening the KV bucket ${RUNS_BUCKET}`);
    } catch (err) {
      kvError = err;
      if (wait && isPermissionDenied(err)) await waitForStream(jsm, `KV_${RUNS_BUCKET}`, wait);
      else await sleep(200 * attempt);
    }
  }
  if (!kv) throw new EvalfleetError(ErrorCode.BrokerConfig, `cannot open the KV bucket ${RUNS_BUCKET}: ${errorMessage(kvError)}`);
  const inboxPrefix = (nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
  const publisher = new ConfirmedPublisher(nc, { timeoutMs: 10_000, ...(inboxPrefix ? { inboxPrefix } : {}) });
  void nc.closed().then(() => publisher.close());
  return { nc, js, jsm, kv, publisher };
}

/**
 * Binds (creating where missing) the bucket of run keys (shared/wire/case-token.ts). Coordinators
 * only: a worker's NATS user has no access to it. Kept as long as the runs bucket's records.
 */
export async function openRunKeys(broker: Broker, options: Pick<BrokerOptions, "replicas"> = {}): Promise<KV> {
  const replicas = options.replicas ?? streamReplicasFromEnvironment(processEnvironment());
  let lastError: unknown;
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      return await withinMs(new Kvm(broker.js).create(RUN_KEYS_BUCKET, { history: 1, ttl: RUN_RECORDS_TTL_MS, replicas }), CREATE_PATIENCE_MS, `opening the KV bucket ${RUN_KEYS_BUCKET}`);
    } catch (err) {
      lastError = err;
      if (isPermissionDenied(err)) break;
      await sleep(200 * attempt);
    }
  }
  throw new EvalfleetError(
    ErrorCode.BrokerConfig,
    `cannot open the KV bucket ${RUN_KEYS_BUCKET}, where a run's key is kept: ${errorMessage(lastError)}${isPermissionDenied(lastError) ? ` (a coordinator's NATS user needs $JS.API.> and $KV.${RUN_KEYS_BUCKET}.>: see deploy/nats/evalfleet-permissions.conf)` : ""}`,
  );
}

async function ensureStream(
  jsm: JetStreamManager,
  wait: BrokerOptions["waitForCreation"],
  wanted: Partial<StreamConfig> & { name: string; subjects: string[]; retention: RetentionPolicy },
): Promise<void> {
  // Two processes starting together both find the stream missing and both create it. In a
  // cluster (nats-server 2.9) the loser's create times out rather than failing fast, so every
  // failed create is followed by a fresh look: the stream may exist by now.
  let lastError: unknown;
  for (let attempt = 1; attempt <= 5; attempt++) {
    let info;
    try {
      info = await jsm.streams.info(wanted.name);
    } catch (err) {
      if (!isStreamNotFound(err)) {
        lastError = err;
        await sleep(200 * attempt);
        continue;
      }
      try {
        await withinMs(jsm.streams.add(wanted), CREATE_PATIENCE_MS, `creating stream ${wanted.name}`);
        return;
      } catch (addErr) {
        lastError = addErr;
        if (wait && isPermissionDenied(addErr)) await waitForStream(jsm, wanted.name, wait);
        else await sleep(200 * attempt);
        continue;
      }
    }
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
    return;
  }
  throw new EvalfleetError(ErrorCode.BrokerConfig, `cannot create or inspect stream ${wanted.name}: ${errorMessage(lastError)}`);
}

/** Whether the server refused an operation for lack of permission (a `Permissions Violation`). */
function isPermissionDenied(err: unknown): boolean {
  return /permissions violation/i.test(errorMessage(err)) || (err instanceof Error && err.name === "PermissionViolationError");
}

/** Polls until the stream exists (a coordinator created it), or throws when the wait is called off. */
async function waitForStream(jsm: JetStreamManager, name: string, wait: NonNullable<BrokerOptions["waitForCreation"]>): Promise<void> {
  wait.onWait?.(`stream ${name} does not exist yet and this NATS user may not create it: waiting for a coordinator to create it`);
  for (;;) {
    if (wait.signal?.aborted) throw new EvalfleetError(ErrorCode.BrokerConfig, `stopped while waiting for stream ${name} to be created`);
    try {
      await jsm.streams.info(name);
      return;
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
    }
    await sleep(1000, wait.signal);
  }
}

/**
 * How long one create may take before its answer is given up for a fresh look, in ms. A cluster
 * (nats-server 2.9) answers the winner of concurrent creates at once and lets the losers run into
 * the request timeout (10 s): every process starting with a fresh cluster would wait that long.
 */
const CREATE_PATIENCE_MS = 3_000;

/** `promise`, or a rejection after `ms` (the request itself goes on; its late answer is ignored). */
function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
