/**
 * How long a distributed worker keeps a running case's lease alive. While a phase of the case is
 * within its deadline (setup and teardown their bounds, the run its timeout) plus the grace and
 * {@link LEASE_SLACK_MS}, the lease is renewed; past that the case is stuck beyond anything this
 * worker's watchdog should have allowed (the worker itself is wedged), so the lease is let go and
 * the broker redelivers the case to another worker after the ack wait. A case still waiting for a
 * thread (no phase yet) is renewed: its wait is bounded by the cases ahead of it. Pure.
 */

/** Time past a phase's deadline plus the grace before a lease is let go, in ms: room for the watchdog to act. */
export const LEASE_SLACK_MS = 10_000;

/** The lease bound of one running case (its repeats share it: the latest phase started counts). */
export class LeaseBound {
  readonly #graceMs: number;
  #deadline: number | null = null;

  constructor(graceMs: number) {
    this.#graceMs = graceMs;
  }

  /** A phase of the case started on a thread, with its deadline (epoch ms; null: none). */
  phase(deadline: number | null): void {
    this.#deadline = deadline;
  }

  /** Whether the lease is still renewed at `now` (epoch ms). */
  renews(now: number = Date.now()): boolean {
    return this.#deadline === null || now <= this.#deadline + this.#graceMs + LEASE_SLACK_MS;
  }
}
