import { randomUUID } from "node:crypto";
import { Piscina } from "piscina";
import type { ThreadWorkerData } from "../../shared/wire/thread.ts";
import type { SuiteModule } from "../../shared/suite/suite.ts";
import { packageFile } from "../../shared/runtime/package-files.ts";

/**
 * The worker threads of a case pool (case-pool.ts), started apart from it: the CLI starts them
 * while the suite loads, and the pool adopts them when their shape fits.
 */

/** How long unused prestarted threads are given to finish starting before they are stopped, ms. */
const PRESTART_SETTLE_MS = 5_000;

/** What a pool's threads are started with: a prestarted set fits a pool of the same shape. */
export interface ThreadShape {
  threads: number;
  /** Cases in flight across the pool (sets the tasks per thread). */
  concurrency: number;
  threadMemoryMb: number | null;
}

/** The shape of the pool these options make: their threads and concurrency (compiled by the caller's config), at least 1 each. */
export function threadShape(options: { threads: number; concurrency: number; threadMemoryMb?: number | null }): ThreadShape {
  const concurrency = Math.max(1, options.concurrency);
  const threads = Math.max(1, options.threads);
  return { threads, concurrency, threadMemoryMb: options.threadMemoryMb ?? null };
}

/**
 * The suite a pool's threads import as they start, instead of on their first batch: its absolute
 * path and the module to import (what the main thread's load has imported or will import; a
 * plain JavaScript suite's is known before that load starts). Each thread then imports it while the
 * main thread is still loading it and selecting cases.
 */
export interface SuitePreload {
  path: string;
  module: SuiteModule;
}

/**
 * A pool's worker threads, started before the pool itself: `evalfleet run` starts them as it
 * begins to load the suite, so the threads import evalfleet while the main thread imports the
 * suite (about a quarter of a second of the demo's start-up on two cores). Messages the threads
 * post before a pool listens are kept for it.
 */
export class PrestartedThreads {
  readonly piscina: Piscina;
  readonly controlChannel = `evalfleet.pool.${randomUUID()}`;
  readonly limiterChannel = `evalfleet.limits.${randomUUID()}`;
  readonly #shape: ThreadShape;
  #early: unknown[] | null = [];
  /** Threads that said `ready`, and who waits for all of them (discard). */
  #ready = 0;
  #allReady: (() => void) | null = null;
  readonly #keep = (raw: unknown): void => {
    this.#early?.push(raw);
    if ((raw as { kind?: unknown } | null)?.kind === "ready" && ++this.#ready >= this.#shape.threads) this.#allReady?.();
  };
  #adopted = false;

  private constructor(shape: ThreadShape, preload: SuitePreload | null) {
    this.#shape = shape;
    this.piscina = new Piscina({
      filename: threadEntry(),
      minThreads: shape.threads,
      maxThreads: shape.threads,
      concurrentTasksPerWorker: Math.ceil(shape.concurrency / shape.threads),
      idleTimeout: 60_000,
      atomics: "disabled",
      maxQueue: "auto",
      // Threads load tsx themselves; inheriting --import tsx as well would register it twice.
      execArgv: threadExecArgv(process.execArgv),
      // Threads open the control channel as they start, before their first task (see thread.ts).
      workerData: { controlChannel: this.controlChannel, limiterChannel: this.limiterChannel, ...(preload ? { preloadSuite: preload } : {}) } satisfies ThreadWorkerData,
      ...(shape.threadMemoryMb ? { resourceLimits: { maxOldGenerationSizeMb: shape.threadMemoryMb } } : {}),
    });
    this.piscina.on("message", this.#keep);
    // A thread that fails to start before a pool adopts these is the pool's to report.
    this.piscina.on("error", () => undefined);
  }

  /**
   * Starts `shape.threads` threads now.
   *
   * @param preload the suite the threads import as soon as they start (see {@link SuitePreload}); default none.
   */
  static start(shape: ThreadShape, preload: SuitePreload | null = null): PrestartedThreads {
    return new PrestartedThreads(shape, preload);
  }

  /** These threads, for a pool of `shape`; null (and the threads stopped) when they were started otherwise. */
  adopt(shape: ThreadShape): PrestartedThreads | null {
    if (this.#adopted) return null;
    const s = this.#shape;
    if (s.threads !== shape.threads || Math.ceil(s.concurrency / s.threads) !== Math.ceil(shape.concurrency / shape.threads) || s.threadMemoryMb !== shape.threadMemoryMb) {
      void this.discard();
      return null;
    }
    this.#adopted = true;
    return this;
  }

  /** The messages kept until now; from here on the adopting pool listens itself. */
  takeEarlyMessages(): unknown[] {
    const early = this.#early ?? [];
    this.#early = null;
    this.piscina.off("message", this.#keep);
    return early;
  }

  /** Stops the threads unless a pool adopted them (the run ended before it needed them). */
  async discard(): Promise<void> {
    if (this.#adopted) return;
    this.#adopted = true;
    // Terminating a thread while Node is still starting it can abort the whole process (one exit
    // 134 seen here, an early error exit beside a busy CPU): let them finish starting, within a bound.
    if (this.#ready < this.#shape.threads) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, PRESTART_SETTLE_MS);
        timer.unref();
        this.#allReady = () => (clearTimeout(timer), resolve());
      });
    }
    this.#early = null;
    this.piscina.off("message", this.#keep);
    await this.piscina.destroy().catch(() => undefined);
  }
}

/**
 * The module each thread starts from. Compiled (dist/): thread.cjs (worker/pool/thread-start.ts),
 * which loads the thread's runtime through a code cache and never loads tsx for a .js/.mjs suite
 * (a .ts suite is bundled, or registers tsx in loadSuite). From the sources (the unit tests):
 * thread-entry.mjs, which registers tsx to import thread.ts.
 */
export function threadEntry(): string {
  return packageFile("worker/pool/thread-entry.mjs", "dist/worker/pool/thread.cjs").href;
}

/**
 * The parent's flags that a worker thread may inherit. Per-process flags (`--expose-gc`,
 * `--max-old-space-size`, `--inspect`, ...) make `new Worker` throw, and tsx must not be registered
 * twice (the thread entry registers it), so only flags that shape module loading and diagnostics pass.
 */
export function threadExecArgv(parent: readonly string[]): string[] {
  const keep: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const a = parent[i]!;
    if (a === "--conditions" || a === "-C") {
      if (parent[i + 1] !== undefined) keep.push(a, parent[i + 1]!);
      i++;
    } else if (/^--cpu-prof-(dir|name|interval)$/.test(a)) {
      // The profiler's options also come as two words (`--cpu-prof-interval 200`): keep the value with its flag.
      if (parent[i + 1] !== undefined) keep.push(a, parent[i + 1]!);
      i++;
    } else if (/^(--conditions=|-C=|--enable-source-maps$|--no-warnings$|--no-deprecation$|--trace-warnings$|--experimental-|--cpu-prof)/.test(a)) {
      keep.push(a);
    } else if ((a === "--import" || a === "--require" || a === "-r" || a === "--loader") && parent[i + 1] !== undefined) {
      i++; // a preload of the parent (tsx, a tracer) is not the thread's business
    }
  }
  return keep;
}
