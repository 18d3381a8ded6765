import { setMaxListeners } from "node:events";
import { RemoteLimiter } from "./remote-limiter.ts";
import { localProcessLimiter } from "../shared/providers/process-limiter.ts";
import type { NatsConnection } from "@nats-io/transport-node";
import { openBroker, type Broker } from "../shared/broker/setup.ts";
import { BucketResponseStore } from "../shared/broker/response-cache-bucket.ts";
import { BucketCassetteStore } from "../shared/broker/cassette-bucket.ts";
import { connectNats, processLabel, type NatsSettings } from "../shared/broker/connection.ts";
import type { LoadedSuite } from "../shared/suite/suite.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { errorMessage } from "../shared/errors.ts";
import { runKeys, runOfManifestKey } from "../shared/broker/subjects.ts";
import { RunStateSchema, isFinishedPhase, tryParseJson, type RunManifest } from "../shared/wire/nats.ts";
import { CasePool } from "./pool/case-pool.ts";
import { RunServer, type RunServeEnd, type RunServerDeps } from "./run-server.ts";
import { checkManifest, type ManifestCheck } from "./manifest-check.ts";
import { RunPresence } from "./presence.ts";
import { HealthServer, type HealthCheck } from "../shared/process/health-server.ts";
import { WorkerMetrics } from "./metrics.ts";
import { Slots } from "./slots.ts";

/**
 * The worker process: connects (and reconnects forever), loads the suite once, and serves one run
 * (`--run`) or every run of its suite as it appears. States: starting -> running -> draining -> stopped.
 */

/** Worker lifecycle states. */
export type WorkerState = "starting" | "running" | "draining" | "stopped";

/** Options of {@link WorkerService}. */
export interface WorkerServiceOptions {
  suite: LoadedSuite;
  nats: NatsSettings;
  /** Serve only this run and stop when it is over; default: every run of this suite, forever. */
  runId?: string | null;
  /** Worker threads, >= 1 (worker/config.ts resolves `--threads`: by default the smaller of the CPUs and `concurrency`). */
  threads: number;
  /** Cases in flight in this process (across runs), >= 1 (worker/config.ts resolves `--concurrency`). */
  concurrency: number;
  /** Seconds past a case deadline before a stuck thread is terminated (worker/config.ts resolves `--grace`). */
  graceSeconds: number;
  threadMemoryMb?: number | null;
  /** Stop (exit 0) after this many seconds without a case. Default: never. */
  exitWhenIdleSeconds?: number | null;
  /** On shutdown, seconds in-flight cases get to finish before they are aborted and handed back (worker/config.ts resolves `--drain`). */
  drainSeconds: number;
  /** Level of the threads' loggers (worker/config.ts resolves `--log-level`). */
  logLevel: string;
  logger?: Logger;
  /** Told of every state change. */
  onStateChange?: (state: WorkerState) => void;
  /**
   * Serve `/healthz` (liveness), `/readyz` (readiness) and `/metrics` (Prometheus) on this port
   * (0 picks a free one) and host (worker/config.ts resolves `--http-host`). Default: no HTTP endpoint.
   */
  http?: { port: number; host: string } | null;
  /** Told the bound HTTP address once the endpoint listens. */
  onHttpListening?: (address: { host: string; port: number }) => void;
}

/** How the worker ended; `code` is the process exit code. */
export interface WorkerExit {
  /** 0: the run is over (or an idle/standing worker was stopped cleanly); 1: work was interrupted; 2: refused the run (another suite or protocol version). */
  code: 0 | 1 | 2;
  reason: string;
}

/** One worker process. */
export class WorkerService {
  readonly #o: WorkerServiceOptions;
  readonly #log: Logger;
  readonly #stopping = new AbortController();
  readonly #abort = new AbortController();
  readonly #servers = new Map<string, RunServer>();
  /** The provider limiters of the runs being served, latest last: the pool's threads ask the latest one's coordinator. */
  readonly #limiters: Array<{ runId: string; limiter: RemoteLimiter }> = [];
  #state: WorkerState = "starting";
  /** Whether the NATS connection is up (false before the first connect and while reconnecting). */
  #connected = false;
  #lastActivity = Date.now();
  /** Set when the worker stopped because it was idle (a clean exit). */
  #idle: string | null = null;

  constructor(options: WorkerServiceOptions) {
    this.#o = options;
    this.#log = options.logger ?? silentLogger();
    setMaxListeners(0, this.#abort.signal);
  }

  get state(): WorkerState {
    return this.#state;
  }

  /** Cases in flight across the runs served. */
  get busy(): number {
    let n = 0;
    for (const s of this.#servers.values()) n += s.busy;
    return n;
  }

  /** Liveness: the process answers and has not stopped. Losing NATS is not a reason to restart (it reconnects). */
  live(): HealthCheck {
    return this.#state === "stopped" ? { ok: false, detail: "stopped" } : { ok: true, detail: this.#state };
  }

  /** Readiness: suite loaded, connected to NATS, streams bound, and not draining. */
  ready(): HealthCheck {
    if (this.#state !== "running") return { ok: false, detail: this.#state === "starting" ? "starting: connecting to NATS" : this.#state };
    if (!this.#connected) return { ok: false, detail: "disconnected from NATS; reconnecting" };
    return { ok: true, detail: "running" };
  }

  /** Starts draining: no new cases; in-flight ones get `drainSeconds`, then are aborted and handed back. */
  stop(reason = "stop requested"): void {
    if (this.#stopping.signal.aborted) return;
    this.#log.info({ reason }, "draining");
    this.#setState("draining");
    this.#stopping.abort(new DOMException(reason, "AbortError"));
    const drain = setTimeout(() => this.#abort.abort(new DOMException("drain grace over", "AbortError")), this.#o.drainSeconds * 1000);
    drain.unref();
  }

  /** Runs until the work is over; never throws for a run's problems (they are logged and reflected in the exit). */
  async run(): Promise<WorkerExit> {
    const o = this.#o;
    const concurrency = Math.max(1, o.concurrency);
    const threads = Math.max(1, o.threads);
    // The endpoint comes up first: liveness holds while the worker waits for NATS, readiness does not.
    const metrics = o.http
      ? new WorkerMetrics({
          suite: { name: o.suite.name, fingerprint: o.suite.fingerprint },
          slots: concurrency,
          inFlight: () => this.busy,
          ready: () => this.ready().ok,
          natsConnected: () => this.#connected,
        })
      : null;
    const health = o.http
      ? new HealthServer({ port: o.http.port, host: o.http.host, live: () => this.live(), ready: () => this.ready(), metrics: () => metrics!.render(), logger: this.#log })
      : null;
    if (health) {
      // Not `o.onHttpListening?.(await health.start())`: an absent callback would skip the start.
      const address = await health.start();
      o.onHttpListening?.(address);
    }
    let nc: NatsConnection;
    try {
      nc = await connectNats(o.nats, {
        name: `evalfleet-worker/${processLabel()}`,
        reconnectForever: true,
        waitOnFirstConnect: true,
        onWait: (line) => this.#log.warn(line),
        signal: this.#stopping.signal,
        timeoutMs: 10_000,
      });
    } catch (err) {
      await health?.close();
      throw err;
    }
    this.#connected = true;
    this.#watchConnection(nc);
    const pool = new CasePool({
      suitePath: o.suite.path,
      suiteModule: o.suite.module ?? null,
      fingerprint: o.suite.fingerprint,
      threads,
      concurrency,
      graceMs: o.graceSeconds * 1000,
      threadMemoryMb: o.threadMemoryMb ?? null,
      logLevel: o.logLevel,
      logger: this.#log,
      // Results go out without the raw response: no need to bring it across from the threads.
      keepResponses: false,
      // The threads' model calls ask the coordinator of the run being served for permits.
      limiter: () => this.#limiters.at(-1)?.limiter ?? localProcessLimiter(),
      limiterEvents: metrics ? { onGrant: (key) => metrics.providerGranted(key), onRelease: (key, feedback) => metrics.providerReleased(key, feedback) } : null,
    });
    const slots = new Slots(concurrency);
    const idle = o.exitWhenIdleSeconds ? setInterval(() => this.#checkIdle(), 1000) : null;
    let exit: WorkerExit;
    try {
      // A least-privilege worker may not create the streams: it waits for a coordinator to.
      const broker = await openBroker(nc, { waitForCreation: { signal: this.#stopping.signal, onWait: (line) => this.#log.warn(line) } });
      // `--cache shared` runs: the threads' lookups go to the fleet's bucket through this process.
      pool.setSharedCache(new BucketResponseStore(broker.js));
      // `--record nats` / `--replay nats` runs: the threads' cassettes are kept in the fleet's bucket through this process.
      pool.setCassetteBucket(new BucketCassetteStore(broker.js));
      this.#setState("running");
      const deps = {
        broker,
        suite: o.suite,
        pool,
        onActivity: () => {
          this.#lastActivity = Date.now();
        },
        slots,
        workerId: processLabel(),
        logger: this.#log,
        stopping: this.#stopping.signal,
        abort: this.#abort.signal,
        metrics,
        graceMs: o.graceSeconds * 1000,
      };
      exit = o.runId ? await this.#serveOne(broker, o.runId, deps) : await this.#serveAll(broker, deps);
    } catch (err) {
      this.#log.error({ err: errorMessage(err) }, "worker failed");
      exit = { code: 1, reason: errorMessage(err) };
    } finally {
      if (idle) clearInterval(idle);
      await pool.destroy().catch(() => undefined);
      await nc.drain().catch(() => undefined);
      this.#connected = false;
      this.#setState("stopped");
      await health?.close();
    }
    return exit;
  }

  /** Serves a run with its coordinator's provider permits (remote-limiter.ts) for the pool's threads. */
  async #withLimiter<T>(broker: Broker, manifest: RunManifest, serve: () => Promise<T>): Promise<T> {
    const entry = { runId: manifest.runId, limiter: new RemoteLimiter(broker.nc, manifest.runId, processLabel(), manifest.limits, this.#log) };
    this.#limiters.push(entry);
    try {
      return await serve();
    } finally {
      this.#limiters.splice(this.#limiters.indexOf(entry), 1);
      entry.limiter.close();
    }
  }

  async #serveOne(broker: Broker, runId: string, deps: RunServerDeps): Promise<WorkerExit> {
    const found = await this.#waitForManifest(broker, runId);
    if (!found) return this.#idle ? { code: 0, reason: this.#idle } : { code: 1, reason: "stopped before the run started" };
    if (found.kind === "other-version") {
      // Refused as a run of another suite is: the coordinator hears why, and a Job does not retry.
      await this.#refuse(deps, runId, found.why);
      return exitOf({ kind: "refused", why: found.why });
    }
    const server = new RunServer(found.manifest, deps);
    this.#servers.set(runId, server);
    const end = await this.#withLimiter(deps.broker, found.manifest, () => server.serve());
    this.#servers.delete(runId);
    if (end.kind === "stopped" && this.#idle) return { code: 0, reason: this.#idle };
    return exitOf(end);
  }

  async #serveAll(broker: Broker, deps: RunServerDeps): Promise<WorkerExit> {
    const serving = new Map<string, Promise<RunServeEnd>>();
    /** Runs of another protocol version this worker refused (once each). */
    const refused = new Set<string>();
    let interrupted = 0;
    const watch = await broker.kv.watch({ key: runKeys.allManifests() });
    const stopWatch = (): void => watch.stop();
    this.#stopping.signal.addEventListener("abort", stopWatch, { once: true });
    try {
      for await (const e of watch) {
        if (this.#stopping.signal.aborted) break;
        if (e.operation !== "PUT") continue;
        const runId = runOfManifestKey(e.key);
        if (!runId || serving.has(runId) || refused.has(runId)) continue;
        const manifest = checkManifest(runId, e.string());
        if (manifest.kind === "malformed") {
          this.#log.warn({ key: e.key }, "ignoring a malformed run manifest");
          continue;
        }
        // Another suite's run, whatever its version, is not this worker's to serve or refuse.
        const fingerprint = manifest.kind === "ok" ? manifest.manifest.suite.fingerprint : manifest.fingerprint;
        if (fingerprint !== null && fingerprint !== this.#o.suite.fingerprint) continue;
        if (await isTerminal(broker, runId)) continue;
        if (manifest.kind === "other-version") {
          refused.add(runId);
          await this.#refuse(deps, runId, manifest.why);
          continue;
        }
        this.#lastActivity = Date.now();
        const server = new RunServer(manifest.manifest, deps);
        this.#servers.set(runId, server);
        this.#log.info({ run: runId }, "serving run");
        serving.set(
          runId,
          this.#withLimiter(deps.broker, manifest.manifest, () => server.serve()).then(
            (end) => {
              this.#servers.delete(runId);
              if (end.kind === "interrupted") interrupted++;
              return end;
            },
            (err: unknown) => {
              this.#servers.delete(runId);
              this.#log.error({ run: runId, err: errorMessage(err) }, "serving the run failed");
              return { kind: "interrupted", why: errorMessage(err) } as RunServeEnd;
            },
          ),
        );
      }
    } finally {
      this.#stopping.signal.removeEventListener("abort", stopWatch);
    }
    await Promise.all(serving.values());
    return interrupted > 0 ? { code: 1, reason: "work was interrupted by shutdown" } : { code: 0, reason: this.#idle ?? "stopped" };
  }

  /** The run's manifest once it is written: the run to serve, or one of another protocol version; null when stopped first or malformed. */
  async #waitForManifest(broker: Broker, runId: string): Promise<Exclude<ManifestCheck, { kind: "malformed" }> | null> {
    const watch = await broker.kv.watch({ key: runKeys.manifest(runId) });
    const stop = (): void => watch.stop();
    this.#stopping.signal.addEventListener("abort", stop, { once: true });
    try {
      for await (const e of watch) {
        if (e.operation !== "PUT") continue;
        const m = checkManifest(runId, e.string());
        if (m.kind !== "malformed") return m;
        this.#log.error({ run: runId }, "the run's manifest is malformed");
        return null;
      }
      return null;
    } finally {
      this.#stopping.signal.removeEventListener("abort", stop);
    }
  }

  /** Refuses a run this worker cannot serve: said in the log, and in its presence record for the run's coordinator. */
  async #refuse(deps: RunServerDeps, runId: string, why: string): Promise<void> {
    this.#log.error({ run: runId }, `refusing the run: ${why}`);
    const presence = new RunPresence({ broker: deps.broker, workerId: deps.workerId, fingerprint: deps.suite.fingerprint, slots: deps.slots.size }, runId);
    await presence.refuse(why).catch(() => undefined);
  }

  #checkIdle(): void {
    const limit = (this.#o.exitWhenIdleSeconds ?? 0) * 1000;
    if (limit > 0 && this.busy === 0 && Date.now() - this.#lastActivity > limit) {
      this.#idle = `idle for ${this.#o.exitWhenIdleSeconds}s`;
      this.stop(this.#idle);
    }
  }

  #watchConnection(nc: NatsConnection): void {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect") {
          this.#connected = false;
          this.#log.warn({ server: (s as { server?: string }).server }, "lost the NATS connection; reconnecting");
        } else if (s.type === "reconnect") {
          this.#connected = true;
          this.#log.info({ server: (s as { server?: string }).server }, "reconnected to NATS");
        }
      }
    })().catch(() => undefined);
  }

  #setState(state: WorkerState): void {
    this.#state = state;
    this.#o.onStateChange?.(state);
  }
}

function exitOf(end: RunServeEnd): WorkerExit {
  if (end.kind === "finished") return { code: 0, reason: end.why };
  if (end.kind === "refused") return { code: 2, reason: end.why };
  return { code: 1, reason: end.why };
}

/** Whether the run is over; a state record of another protocol version is read for its `phase` only. */
async function isTerminal(broker: Broker, runId: string): Promise<boolean> {
  try {
    const e = await broker.kv.get(runKeys.state(runId));
    if (!e) return false;
    const raw = tryParseJson(e.string());
    const s = RunStateSchema.safeParse(raw);
    const phase = s.success ? s.data.phase : (raw as { phase?: unknown } | undefined)?.phase;
    return isFinishedPhase(phase);
  } catch {
    return false;
  }
}
