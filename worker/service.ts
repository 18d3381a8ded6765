import { setMaxListeners } from "node:events";
import { availableParallelism } from "node:os";
import type { NatsConnection } from "@nats-io/transport-node";
import { openBroker, type Broker } from "../shared/jetstream-setup.ts";
import { connectNats, processLabel, type NatsSettings } from "../shared/nats-connection.ts";
import type { LoadedSuite } from "../shared/suite.ts";
import { silentLogger, type Logger } from "../shared/logger.ts";
import { errorMessage } from "../shared/errors.ts";
import { runKeys, runOfManifestKey } from "../shared/subjects.ts";
import { RunManifestSchema, RunStateSchema, type RunManifest, tryParseJson } from "../shared/wire.ts";
import { CasePool, DEFAULT_GRACE_SECONDS } from "./pool.ts";
import { RunServer, type RunServeEnd } from "./consumer.ts";
import { HealthServer, type HealthCheck } from "./health-server.ts";
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
  /** Worker threads. Default: min(CPUs, concurrency). */
  threads?: number;
  /** Cases in flight in this process (across runs). Default 4. */
  concurrency?: number;
  /** Seconds past a case deadline before a stuck thread is terminated. Default 5. */
  graceSeconds?: number;
  threadMemoryMb?: number | null;
  /** Stop (exit 0) after this many seconds without a case. Default: never. */
  exitWhenIdleSeconds?: number | null;
  /** On shutdown, seconds in-flight cases get to finish before they are aborted and handed back. Default 20. */
  drainSeconds?: number;
  logLevel?: string;
  logger?: Logger;
  /** Told of every state change. */
  onStateChange?: (state: WorkerState) => void;
  /**
   * Serve `/healthz` (liveness), `/readyz` (readiness) and `/metrics` (Prometheus) on this port
   * (0 picks a free one) and host (default `0.0.0.0`). Default: no HTTP endpoint.
   */
  http?: { port: number; host?: string } | null;
  /** Told the bound HTTP address once the endpoint listens. */
  onHttpListening?: (address: { host: string; port: number }) => void;
}

/** How the worker ended; `code` is the process exit code. */
export interface WorkerExit {
  /** 0: the run is over (or an idle/standing worker was stopped cleanly); 1: work was interrupted; 2: refused the run. */
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
    const drain = setTimeout(() => this.#abort.abort(new DOMException("drain grace over", "AbortError")), (this.#o.drainSeconds ?? 20) * 1000);
    drain.unref();
  }

  /** Runs until the work is over; never throws for a run's problems (they are logged and reflected in the exit). */
  async run(): Promise<WorkerExit> {
    const o = this.#o;
    const concurrency = Math.max(1, o.concurrency ?? 4);
    const threads = Math.max(1, o.threads ?? Math.min(availableParallelism(), concurrency));
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
      fingerprint: o.suite.fingerprint,
      threads,
      concurrency,
      graceSeconds: o.graceSeconds ?? DEFAULT_GRACE_SECONDS,
      threadMemoryMb: o.threadMemoryMb ?? null,
      logLevel: o.logLevel,
      logger: this.#log,
      // Results go out without the raw response: no need to bring it across from the threads.
      keepResponses: false,
    });
    const slots = new Slots(concurrency);
    const idle = o.exitWhenIdleSeconds ? setInterval(() => this.#checkIdle(), 1000) : null;
    let exit: WorkerExit;
    try {
      // A least-privilege worker may not create the streams: it waits for a coordinator to.
      const broker = await openBroker(nc, { waitForCreation: { signal: this.#stopping.signal, onWait: (line) => this.#log.warn(line) } });
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

  async #serveOne(broker: Broker, runId: string, deps: ConstructorParameters<typeof RunServer>[1]): Promise<WorkerExit> {
    const manifest = await this.#waitForManifest(broker, runId);
    if (!manifest) return this.#idle ? { code: 0, reason: this.#idle } : { code: 1, reason: "stopped before the run started" };
    const server = new RunServer(manifest, deps);
    this.#servers.set(runId, server);
    const end = await server.serve();
    this.#servers.delete(runId);
    if (end.kind === "stopped" && this.#idle) return { code: 0, reason: this.#idle };
    return exitOf(end);
  }

  async #serveAll(broker: Broker, deps: ConstructorParameters<typeof RunServer>[1]): Promise<WorkerExit> {
    const serving = new Map<string, Promise<RunServeEnd>>();
    let interrupted = 0;
    const watch = await broker.kv.watch({ key: runKeys.allManifests() });
    const stopWatch = (): void => watch.stop();
    this.#stopping.signal.addEventListener("abort", stopWatch, { once: true });
    try {
      for await (const e of watch) {
        if (this.#stopping.signal.aborted) break;
        if (e.operation !== "PUT") continue;
        const runId = runOfManifestKey(e.key);
        if (!runId || serving.has(runId)) continue;
        const manifest = RunManifestSchema.safeParse(tryParseJson(e.string()));
        if (!manifest.success) {
          this.#log.warn({ key: e.key }, "ignoring a malformed run manifest");
          continue;
        }
        if (manifest.data.suite.fingerprint !== this.#o.suite.fingerprint) continue; // another suite's run
        if (await isTerminal(broker, runId)) continue;
        this.#lastActivity = Date.now();
        const server = new RunServer(manifest.data, deps);
        this.#servers.set(runId, server);
        this.#log.info({ run: runId }, "serving run");
        serving.set(
          runId,
          server.serve().then(
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

  async #waitForManifest(broker: Broker, runId: string): Promise<RunManifest | null> {
    const watch = await broker.kv.watch({ key: runKeys.manifest(runId) });
    const stop = (): void => watch.stop();
    this.#stopping.signal.addEventListener("abort", stop, { once: true });
    try {
      for await (const e of watch) {
        if (e.operation !== "PUT") continue;
        const m = RunManifestSchema.safeParse(tryParseJson(e.string()));
        if (m.success) return m.data;
        this.#log.error({ run: runId }, "the run's manifest is malformed");
        return null;
      }
      return null;
    } finally {
      this.#stopping.signal.removeEventListener("abort", stop);
    }
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

async function isTerminal(broker: Broker, runId: string): Promise<boolean> {
  try {
    const e = await broker.kv.get(runKeys.state(runId));
    const s = e ? RunStateSchema.safeParse(tryParseJson(e.string())) : null;
    return Boolean(s?.success && (s.data.phase === "completed" || s.data.phase === "cancelled"));
  } catch {
    return false;
  }
}
