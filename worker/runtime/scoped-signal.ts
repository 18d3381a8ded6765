/**
 * A child AbortSignal that follows a parent for the length of one call, then lets go of it.
 * Some clients (the `openai` client, the MCP SDK) add an abort listener to the signal they are
 * given and never remove it; a case's signal is reused for every model turn and tool call of the
 * case, so handing it over directly piles listeners up (and trips Node's leak warning at 11).
 */
export interface ScopedSignal {
  readonly signal: AbortSignal;
  /** Detaches from the parent; call it when the call is over (a `finally`). */
  release(): void;
}

/** A child of `parent` that aborts with the parent's reason until {@link ScopedSignal.release}. */
export function scopedSignal(parent: AbortSignal | undefined): ScopedSignal {
  const child = new AbortController();
  if (!parent) return { signal: child.signal, release: () => undefined };
  if (parent.aborted) {
    child.abort(parent.reason);
    return { signal: child.signal, release: () => undefined };
  }
  const onAbort = (): void => child.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return { signal: child.signal, release: () => parent.removeEventListener("abort", onAbort) };
}
