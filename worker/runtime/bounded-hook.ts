/**
 * Bounds on the phases of a case that run outside its timeout (setup and teardown hooks), and the
 * conversion of a bound in seconds to a timer delay shared with the run's own timeout (lifecycle.ts).
 */

/** A bound in seconds as a timer delay, in ms (setTimeout's range). */
export function boundMs(seconds: number): number {
  return Math.min(Math.max(0, seconds * 1000), 2_147_483_647);
}

/** How a bounded hook ended. */
export type HookEnd = { kind: "ok"; value: unknown } | { kind: "threw"; err: unknown } | { kind: "overran" };

/**
 * Calls a setup or teardown hook and waits for it at most `seconds`. A hook past its bound is left
 * behind (its promise is not awaited any more); one that blocks its thread synchronously is the
 * watchdog's (worker/pool/) or, inline, the process watchdog's (coordinator/local/).
 */
export async function boundedHook(call: () => unknown, seconds: number): Promise<HookEnd> {
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<HookEnd>((resolve) => (timer = setTimeout(() => resolve({ kind: "overran" }), boundMs(seconds))));
  try {
    return await Promise.race([
      callMaybeAsync(call).then(
        (value): HookEnd => ({ kind: "ok", value }),
        (err: unknown): HookEnd => ({ kind: "threw", err }),
      ),
      overran,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function callMaybeAsync<T>(call: () => T): Promise<Awaited<T>> {
  return await call();
}
