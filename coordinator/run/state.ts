import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";

/**
 * The lifecycle of one run, as a named state machine:
 * selecting -> dispatching -> collecting -> (cancelling ->) done. Pure; no I/O.
 */

/** The phases of one run, local or distributed (the one name for them; the KV record has its own: `RunRecordPhase`). */
export type RunPhase = "selecting" | "dispatching" | "collecting" | "cancelling" | "done";

const NEXT: Record<RunPhase, readonly RunPhase[]> = {
  selecting: ["dispatching", "cancelling", "done"],
  dispatching: ["collecting", "cancelling", "done"],
  collecting: ["cancelling", "done"],
  cancelling: ["done"],
  done: [],
};

/** Tracks a run's state and refuses transitions the design does not allow. */
export class RunStateMachine {
  #state: RunPhase = "selecting";

  get state(): RunPhase {
    return this.#state;
  }

  /** True once cancelling or done. */
  get stopping(): boolean {
    return this.#state === "cancelling" || this.#state === "done";
  }

  /** Moves to `next`; throws on a transition the design does not allow. */
  to(next: RunPhase): void {
    if (next === this.#state) return;
    if (!NEXT[this.#state].includes(next)) {
      throw new EvalfleetError(ErrorCode.Internal, `run state cannot go from ${this.#state} to ${next}`);
    }
    this.#state = next;
  }

  /** Moves to `next` when allowed; returns whether it moved. */
  tryTo(next: RunPhase): boolean {
    if (next === this.#state || !NEXT[this.#state].includes(next)) return false;
    this.to(next);
    return true;
  }
}
