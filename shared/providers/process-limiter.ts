// runs in: both
import { LocalLimiter } from "./local-limiter.ts";
import type { LimitTable } from "./limit-spec.ts";
import type { ProviderLimiter } from "./limiter.ts";
import { processEnvironment, providerLimiterOff } from "../environment.ts";

/**
 * The one limiter of this thread, as model clients find it: a worker thread installs one that asks
 * its process's main thread (worker/pool/thread-limiter.ts); anywhere else (the inline runner, a
 * library call) it is a {@link LocalLimiter} created on first use. A limiter per thread would
 * multiply the rate by the thread count, so threads never keep their own.
 */

let installed: ProviderLimiter | null = null;
let local: LocalLimiter | null = null;
let off: boolean | undefined;

/** A limiter that grants at once (`EVALFLEET_PROVIDER_LIMITER=off`). */
const UNLIMITED: ProviderLimiter = {
  acquire: async (key, options = {}) => {
    if (options.signal?.aborted) throw options.signal.reason;
    return { key, release: () => undefined };
  },
};

/** This thread's limiter. */
export function processLimiter(): ProviderLimiter {
  if ((off ??= providerLimiterOff(processEnvironment()))) return UNLIMITED;
  return installed ?? (local ??= new LocalLimiter());
}

/** Makes `limiter` this thread's (a worker thread's, asking its main thread); null restores the local one. */
export function installProcessLimiter(limiter: ProviderLimiter | null): void {
  installed = limiter;
}

/** The local limiter of this thread (created on first use): the inline runner configures it. */
export function localProcessLimiter(): LocalLimiter {
  return (local ??= new LocalLimiter());
}

/** Sets the limits of this thread's local limiter (the suite's, `EVALFLEET_LIMITS`, `--limit`). */
export function configureProcessLimits(limits: LimitTable): void {
  localProcessLimiter().configure(limits);
}
