import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { evalfleetVersion } from "../shared/runtime/package-files.ts";

/**
 * The worker's Prometheus metrics (served on `/metrics` by shared/process/health-server.ts). Counters are
 * per process and start at zero, as Prometheus expects; `rate()` and `increase()` survive restarts.
 *
 * | metric | type | meaning |
 * | --- | --- | --- |
 * | `evalfleet_worker_cases_run_total` | counter | cases this worker ran and reported a result for |
 * | `evalfleet_worker_cases_passed_total` | counter | of those, passed |
 * | `evalfleet_worker_cases_failed_total` | counter | of those, failed (timed out ones included) |
 * | `evalfleet_worker_cases_timed_out_total` | counter | of those, timed out |
 * | `evalfleet_worker_cases_in_flight` | gauge | cases being handled now |
 * | `evalfleet_worker_case_duration_seconds` | histogram | the reported duration of each case run |
 * | `evalfleet_worker_redeliveries_total` | counter | cases delivered to this worker with a delivery count above 1 |
 * | `evalfleet_worker_cases_handed_back_total{reason}` | counter | cases given back for redelivery: `shutdown`, `thread_crash`, `publish_failed` |
 * | `evalfleet_worker_slots` | gauge | cases this worker may run at once (`--concurrency`) |
 * | `evalfleet_worker_ready` | gauge | 1 when `/readyz` answers 200 |
 * | `evalfleet_worker_nats_connected` | gauge | 1 while connected to NATS |
 * | `evalfleet_worker_provider_requests_total{key}` | counter | model requests this worker's threads got a permit for, per provider key |
 * | `evalfleet_worker_provider_in_flight{key}` | gauge | of those, not given back yet (the key's concurrency from this worker) |
 * | `evalfleet_worker_provider_rate_limited_total{key}` | counter | answers 429 (rate limited) |
 * | `evalfleet_worker_provider_failed_total{key}` | counter | answers 5xx or 408, or no answer at all |
 * | `evalfleet_worker_provider_tokens_total{key}` | counter | tokens the answers reported using (prompt + completion) |
 * | `evalfleet_worker_info{suite,fingerprint,version}` | gauge | always 1; identifies the suite and evalfleet version |
 *
 * Plus prom-client's default Node.js process metrics (`process_*`, `nodejs_*`).
 */

/** Why a case was handed back for redelivery instead of finishing on this worker. */
export type HandBackReason = "shutdown" | "thread_crash" | "publish_failed";

/** What a run server reports about the cases it handles (see worker/run-server.ts). */
export interface CaseMetricsSink {
  /** A case message arrived; `deliveryCount` above 1 is a redelivery. */
  caseReceived(deliveryCount: number): void;
  /** This worker ran a case and published its result. */
  caseFinished(result: { passed: boolean; timedOut: boolean; durationSeconds: number; modelCache?: { hits: number; misses: number } | null }): void;
  /** A case was handed back (nak) for redelivery. */
  caseHandedBack(reason: HandBackReason): void;
}

/**
 * Buckets of `evalfleet_worker_case_duration_seconds`, in seconds: agent cases range from
 * sub-second stubs to ten-minute tool-using runs.
 */
export const CASE_DURATION_BUCKETS: readonly number[] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Options of {@link WorkerMetrics}. */
export interface WorkerMetricsOptions {
  suite: { name: string; fingerprint: string };
  /** `--concurrency`: cases this worker may run at once. */
  slots: number;
  /** Cases in flight, read at scrape time. */
  inFlight: () => number;
  /** Whether the worker is ready (read at scrape time). */
  ready: () => boolean;
  /** Whether the NATS connection is up (read at scrape time). */
  natsConnected: () => boolean;
  /** Also collect Node.js process metrics (CPU, memory, event loop lag, GC). Default true. */
  processMetrics?: boolean;
}

/** The worker's metrics registry. */
export class WorkerMetrics implements CaseMetricsSink {
  /** The registry `/metrics` renders. */
  readonly registry = new Registry();
  readonly #run: Counter;
  readonly #passed: Counter;
  readonly #failed: Counter;
  readonly #timedOut: Counter;
  readonly #duration: Histogram;
  readonly #redeliveries: Counter;
  readonly #handedBack: Counter<"reason">;
  readonly #providerRequests: Counter<"key">;
  readonly #providerInFlight: Gauge<"key">;
  readonly #providerRateLimited: Counter<"key">;
  readonly #providerFailed: Counter<"key">;
  readonly #providerTokens: Counter<"key">;
  readonly #cacheHits: Counter;
  readonly #cacheMisses: Counter;

  constructor(options: WorkerMetricsOptions) {
    const registers = [this.registry];
    this.#run = new Counter({ name: "evalfleet_worker_cases_run_total", help: "Cases this worker ran and reported a result for.", registers });
    this.#passed = new Counter({ name: "evalfleet_worker_cases_passed_total", help: "Cases run by this worker that passed.", registers });
    this.#failed = new Counter({ name: "evalfleet_worker_cases_failed_total", help: "Cases run by this worker that failed (timed out ones included).", registers });
    this.#timedOut = new Counter({ name: "evalfleet_worker_cases_timed_out_total", help: "Cases run by this worker that exceeded their timeout.", registers });
    new Gauge({
      name: "evalfleet_worker_cases_in_flight",
      help: "Cases being handled by this worker now.",
      registers,
      collect() {
        this.set(options.inFlight());
      },
    });
    this.#duration = new Histogram({
      name: "evalfleet_worker_case_duration_seconds",
      help: "Reported duration of each case this worker ran, in seconds.",
      buckets: [...CASE_DURATION_BUCKETS],
      registers,
    });
    this.#redeliveries = new Counter({ name: "evalfleet_worker_redeliveries_total", help: "Cases delivered to this worker with a delivery count above 1.", registers });
    this.#handedBack = new Counter({
      name: "evalfleet_worker_cases_handed_back_total",
      help: "Cases handed back for redelivery instead of finishing on this worker, by reason.",
      labelNames: ["reason"],
      registers,
    });
    this.#cacheHits = new Counter({ name: "evalfleet_worker_model_cache_hits_total", help: "Model calls of this worker's cases answered by the response cache (--cache): no call made.", registers });
    this.#cacheMisses = new Counter({ name: "evalfleet_worker_model_cache_misses_total", help: "Model calls of this worker's cases the response cache passed on to the model (then kept).", registers });
    // Zero series for every reason, so a dashboard sees 0 rather than no data.
    for (const reason of ["shutdown", "thread_crash", "publish_failed"] satisfies HandBackReason[]) this.#handedBack.inc({ reason }, 0);
    new Gauge({ name: "evalfleet_worker_slots", help: "Cases this worker may run at once (--concurrency).", registers }).set(options.slots);
    new Gauge({
      name: "evalfleet_worker_ready",
      help: "1 when the worker is ready (connected to NATS, suite loaded, not draining).",
      registers,
      collect() {
        this.set(options.ready() ? 1 : 0);
      },
    });
    new Gauge({
      name: "evalfleet_worker_nats_connected",
      help: "1 while the worker is connected to NATS.",
      registers,
      collect() {
        this.set(options.natsConnected() ? 1 : 0);
      },
    });
    new Gauge({ name: "evalfleet_worker_info", help: "Always 1: the suite this worker serves and the evalfleet version.", labelNames: ["suite", "fingerprint", "version"], registers }).set(
      { suite: options.suite.name, fingerprint: options.suite.fingerprint.slice(0, 12), version: evalfleetVersion() },
      1,
    );
    this.#providerRequests = new Counter({ name: "evalfleet_worker_provider_requests_total", help: "Model requests this worker's threads got a permit for, per provider key.", labelNames: ["key"], registers });
    this.#providerInFlight = new Gauge({ name: "evalfleet_worker_provider_in_flight", help: "Permits of this worker not given back yet, per provider key.", labelNames: ["key"], registers });
    this.#providerRateLimited = new Counter({ name: "evalfleet_worker_provider_rate_limited_total", help: "Model answers 429 (rate limited), per provider key.", labelNames: ["key"], registers });
    this.#providerFailed = new Counter({ name: "evalfleet_worker_provider_failed_total", help: "Model answers 5xx or 408, or none at all, per provider key.", labelNames: ["key"], registers });
    this.#providerTokens = new Counter({ name: "evalfleet_worker_provider_tokens_total", help: "Tokens the model answers reported using, per provider key.", labelNames: ["key"], registers });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  caseReceived(deliveryCount: number): void {
    if (deliveryCount > 1) this.#redeliveries.inc();
  }

  caseFinished(result: { passed: boolean; timedOut: boolean; durationSeconds: number; modelCache?: { hits: number; misses: number } | null }): void {
    this.#run.inc();
    if (result.modelCache) {
      this.#cacheHits.inc(result.modelCache.hits);
      this.#cacheMisses.inc(result.modelCache.misses);
    }
    (result.passed ? this.#passed : this.#failed).inc();
    if (result.timedOut) this.#timedOut.inc();
    this.#duration.observe(Math.max(0, result.durationSeconds));
  }

  caseHandedBack(reason: HandBackReason): void {
    this.#handedBack.inc({ reason });
  }

  /** A thread got a permit of provider `key`. */
  providerGranted(key: string): void {
    this.#providerRequests.inc({ key });
    this.#providerInFlight.inc({ key });
  }

  /** A permit of `key` came back with what the provider said. */
  providerReleased(key: string, feedback: { status?: number | null; tokens?: number | null }): void {
    this.#providerInFlight.dec({ key });
    const status = feedback.status ?? null;
    if (status === 429) this.#providerRateLimited.inc({ key });
    else if (status === null || status >= 500 || status === 408) this.#providerFailed.inc({ key });
    if (typeof feedback.tokens === "number" && feedback.tokens > 0) this.#providerTokens.inc({ key }, feedback.tokens);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
