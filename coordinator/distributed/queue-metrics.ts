import type { NatsConnection } from "@nats-io/transport-node";
import { Gauge, Registry } from "prom-client";
import { openBroker, type Broker } from "../../shared/broker/setup.ts";
import { connectNats, processLabel, type NatsSettings } from "../../shared/broker/connection.ts";
import { errorMessage } from "../../shared/errors.ts";
import { silentLogger, type Logger } from "../../shared/logger.ts";
import { CASES_STREAM, runConsumer, runKeys } from "../../shared/broker/subjects.ts";
import { RunManifestSchema, RunStateSchema, tryParseJson } from "../../shared/wire/nats.ts";
import { HealthServer, type HealthCheck, type JsonAnswer } from "../../shared/process/health-server.ts";

/**
 * `evalfleet queue-metrics`: how many cases of one suite's runs are queued and in flight, for an
 * autoscaler. KEDA's nats-jetstream scaler reads one named, long-lived consumer, and evalfleet's
 * consumers are per run (that is what gives each run its own ack wait, delivery limit, lost-case
 * reconciliation, cancel and resume), so this small standing process adds up, over the suite's
 * active runs, exactly what that scaler computes for one consumer (`num_pending + num_ack_pending`)
 * and serves it as JSON for KEDA's metrics-api scaler and as Prometheus gauges. It runs apart from
 * the workers, so it answers while the worker pool is scaled to zero.
 */

/** One run's share of the queue. */
export interface RunQueueDepth {
  runId: string;
  /** Cases not yet delivered to a worker (the run consumer's `num_pending`). */
  queued: number;
  /** Cases delivered and not yet acknowledged (`num_ack_pending`). */
  inFlight: number;
}

/** The queue of one suite, as `/queue` serves it. */
export interface QueueDepth {
  suite: string;
  /** The suite fingerprint (64 hex): only runs a worker with this suite would serve are counted. */
  fingerprint: string;
  /** Active runs of the suite (their consumer exists and their state is not terminal). */
  runs: number;
  queued: number;
  inFlight: number;
  /** `queued + inFlight`: what KEDA scales on (`valueLocation: lag`). */
  lag: number;
  byRun: RunQueueDepth[];
  /** ISO time of the measurement. */
  measuredAt: string;
}

/**
 * Measures the queue of the runs of the suite with `fingerprint`: one consumer listing of the cases
 * stream, plus a manifest and state lookup per run (manifests are cached; they never change).
 */
export class QueueMeter {
  readonly #broker: Broker;
  readonly #suite: { name: string; fingerprint: string };
  /** Run id -> whether the run belongs to this suite (null: not a run consumer or unreadable manifest). */
  readonly #ours = new Map<string, boolean>();
  /** Runs seen in a terminal state: they stay terminal. */
  readonly #terminal = new Set<string>();

  constructor(broker: Broker, suite: { name: string; fingerprint: string }) {
    this.#broker = broker;
    this.#suite = suite;
  }

  async measure(): Promise<QueueDepth> {
    const byRun: RunQueueDepth[] = [];
    const live = new Set<string>();
    for await (const ci of await this.#broker.jsm.consumers.list(CASES_STREAM)) {
      const runId = runOfConsumer(ci.name);
      if (runId === null) continue;
      live.add(runId);
      if (!(await this.#isOurs(runId)) || (await this.#isTerminal(runId))) continue;
      byRun.push({ runId, queued: ci.num_pending, inFlight: ci.num_ack_pending });
    }
    // Forget runs whose consumer is gone (finished), so the caches stay as small as the active set.
    for (const runId of this.#ours.keys()) if (!live.has(runId)) this.#ours.delete(runId);
    for (const runId of this.#terminal) if (!live.has(runId)) this.#terminal.delete(runId);
    byRun.sort((a, b) => a.runId.localeCompare(b.runId));
    const queued = byRun.reduce((n, r) => n + r.queued, 0);
    const inFlight = byRun.reduce((n, r) => n + r.inFlight, 0);
    return { suite: this.#suite.name, fingerprint: this.#suite.fingerprint, runs: byRun.length, queued, inFlight, lag: queued + inFlight, byRun, measuredAt: new Date().toISOString() };
  }

  async #isOurs(runId: string): Promise<boolean> {
    const known = this.#ours.get(runId);
    if (known !== undefined) return known;
    const entry = await this.#broker.kv.get(runKeys.manifest(runId));
    // The coordinator creates the consumer just before the manifest: decide on the next poll.
    if (!entry || entry.operation !== "PUT") return false;
    const manifest = RunManifestSchema.safeParse(tryParseJson(entry.string()));
    const ours = manifest.success && manifest.data.suite.fingerprint === this.#suite.fingerprint;
    this.#ours.set(runId, ours);
    return ours;
  }

  async #isTerminal(runId: string): Promise<boolean> {
    if (this.#terminal.has(runId)) return true;
    const entry = await this.#broker.kv.get(runKeys.state(runId));
    const state = entry && entry.operation === "PUT" ? RunStateSchema.safeParse(tryParseJson(entry.string())) : null;
    const terminal = Boolean(state?.success && (state.data.phase === "completed" || state.data.phase === "cancelled"));
    if (terminal) this.#terminal.add(runId);
    return terminal;
  }
}

/** The run id of a run consumer's name (`run-<run>`), or null for any other consumer. */
export function runOfConsumer(name: string): string | null {
  const prefix = runConsumer("");
  return name.startsWith(prefix) && name.length > prefix.length ? name.slice(prefix.length) : null;
}

/** Options of {@link QueueMetricsService}. */
export interface QueueMetricsOptions {
  suite: { name: string; fingerprint: string };
  nats: NatsSettings;
  /** Where to serve `/queue`, `/metrics`, `/healthz`, `/readyz` (port 0 picks a free one; host default `0.0.0.0`). */
  http: { port: number; host: string };
  /** A measurement is reused for this long, in ms, so concurrent scrapes cost one listing. Default 1000. */
  cacheMs?: number;
  logger?: Logger;
  onHttpListening?: (address: { host: string; port: number }) => void;
}

/** The standing queue-metrics process: serves until {@link QueueMetricsService.stop}. */
export class QueueMetricsService {
  readonly #o: QueueMetricsOptions;
  readonly #log: Logger;
  readonly #stopped: Promise<void>;
  #stop!: () => void;
  #connected = false;
  #meter: QueueMeter | null = null;
  #last: { at: number; value: Promise<QueueDepth> } | null = null;
  #lastOk = false;

  constructor(options: QueueMetricsOptions) {
    this.#o = options;
    this.#log = options.logger ?? silentLogger();
    this.#stopped = new Promise((resolve) => (this.#stop = resolve));
  }

  /** Ends {@link QueueMetricsService.run}. */
  stop(): void {
    this.#stop();
  }

  /** Connects (waiting for NATS, reconnecting forever), serves, and returns once stopped. */
  async run(): Promise<void> {
    const registry = this.#registry();
    const health = new HealthServer({
      port: this.#o.http.port,
      host: this.#o.http.host,
      live: () => ({ ok: true, detail: this.#meter ? "serving" : "starting" }),
      ready: () => this.#ready(),
      metrics: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
      routes: { "/queue": () => this.#queueAnswer() },
      logger: this.#log,
    });
    const address = await health.start();
    this.#o.onHttpListening?.(address);
    let nc: NatsConnection | null = null;
    try {
      const connecting = connectNats(this.#o.nats, { name: `evalfleet-queue-metrics/${processLabel()}`, reconnectForever: true, waitOnFirstConnect: true, timeoutMs: 10_000 });
      const first = await Promise.race([connecting, this.#stopped.then(() => null)]);
      if (!first) {
        void connecting.then((c) => c.close()).catch(() => undefined);
        return;
      }
      nc = first;
      this.#connected = true;
      this.#watchConnection(nc);
      this.#meter = new QueueMeter(await openBroker(nc), this.#o.suite);
      this.#log.info({ suite: this.#o.suite.name, fingerprint: this.#o.suite.fingerprint.slice(0, 12) }, "serving queue metrics");
      await this.#stopped;
    } finally {
      await health.close();
      await nc?.drain().catch(() => undefined);
    }
  }

  /** The current queue depth (cached for `cacheMs`). */
  async depth(): Promise<QueueDepth> {
    const meter = this.#meter;
    if (!meter) throw new Error("not connected to NATS yet");
    // A request made while reconnecting would wait for the connection; KEDA's scaler gives up
    // after 3 s by default. Say at once that the number is unknown.
    if (!this.#connected) {
      this.#lastOk = false;
      throw new Error("disconnected from NATS; reconnecting");
    }
    const now = Date.now();
    if (!this.#last || now - this.#last.at > (this.#o.cacheMs ?? 1000)) {
      const value = meter.measure();
      this.#last = { at: now, value };
      value.then(
        () => (this.#lastOk = true),
        (err: unknown) => {
          this.#lastOk = false;
          // A failed measurement is not reused: the next request tries again.
          if (this.#last?.value === value) this.#last = null;
          this.#log.warn({ err: errorMessage(err) }, "measuring the queue failed");
        },
      );
    }
    return this.#last!.value;
  }

  #ready(): HealthCheck {
    if (!this.#meter) return { ok: false, detail: "starting: connecting to NATS" };
    if (!this.#connected) return { ok: false, detail: "disconnected from NATS; reconnecting" };
    return { ok: true, detail: "serving" };
  }

  async #queueAnswer(): Promise<JsonAnswer> {
    try {
      return { status: 200, body: await this.depth() };
    } catch (err) {
      // KEDA treats a failed request as a scaler error and, after `fallback.failureThreshold` of
      // them, holds the fallback replica count: never answer a made-up zero.
      return { status: 503, body: { error: errorMessage(err) } };
    }
  }

  #registry(): Registry {
    const registry = new Registry();
    const depth = (): Promise<QueueDepth | null> => this.depth().catch(() => null);
    const labels = { suite: this.#o.suite.name };
    new Gauge({
      name: "evalfleet_queue_cases",
      help: "Cases of the suite's active runs, by state: queued (not yet delivered) or in_flight (delivered, not acknowledged).",
      labelNames: ["suite", "state"],
      registers: [registry],
      async collect() {
        const d = await depth();
        // Unknown is no series, never the last value seen (see evalfleet_queue_up).
        if (!d) return this.reset();
        this.set({ ...labels, state: "queued" }, d.queued);
        this.set({ ...labels, state: "in_flight" }, d.inFlight);
      },
    });
    new Gauge({
      name: "evalfleet_queue_lag",
      help: "Queued plus in-flight cases of the suite's active runs (what KEDA scales the worker pool on).",
      labelNames: ["suite"],
      registers: [registry],
      async collect() {
        const d = await depth();
        if (d) this.set(labels, d.lag);
        else this.reset();
      },
    });
    new Gauge({
      name: "evalfleet_queue_runs",
      help: "Active runs of the suite.",
      labelNames: ["suite"],
      registers: [registry],
      async collect() {
        const d = await depth();
        if (d) this.set(labels, d.runs);
        else this.reset();
      },
    });
    const lastOk = (): boolean => this.#lastOk;
    new Gauge({
      name: "evalfleet_queue_up",
      help: "1 when the last measurement of the queue succeeded.",
      labelNames: ["suite"],
      registers: [registry],
      async collect() {
        await depth();
        this.set(labels, lastOk() ? 1 : 0);
      },
    });
    return registry;
  }

  #watchConnection(nc: NatsConnection): void {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect") {
          this.#connected = false;
          this.#log.warn("lost the NATS connection; reconnecting");
        } else if (s.type === "reconnect") {
          this.#connected = true;
          this.#log.info("reconnected to NATS");
        }
      }
    })().catch(() => undefined);
  }
}
