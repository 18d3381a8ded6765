import { EvalfleetError, ErrorCode } from "../shared/errors.ts";

/**
 * The lifecycle of one run, as a named state machine:
 * selecting -> dispatching -> collecting -> (cancelling ->) done. Pure; no I/O.
 */

/** Run states. */
export type RunPhaseName = "selecting" | "dispatching" | "collecting" | "cancelling" | "done";

const NEXT: Record<RunPhaseName, readonly RunPhaseName[]> = {
  selecting: ["dispatching", "cancelling", "done"],
  dispatching: ["collecting", "cancelling", "done"],
  collecting: ["cancelling", "done"],
  cancelling: ["done"],
  done: [],
};

/** Tracks a run's state and refuses transitions the design does not allow. */
export class RunStateMachine {
  #state: RunPhaseName = "selecting";
  readonly #listeners: Array<(state: RunPhaseName, from: RunPhaseName) => void> = [];

  get state(): RunPhaseName {
    return this.#state;
  }

  /** True once cancelling or done. */
  get stopping(): boolean {
    return this.#state === "cancelling" || this.#state === "done";
  }

  /** Moves to `next`; throws on a transition the design does not allow. */
  to(next: RunPhaseName): void {
    if (next === this.#state) return;
    if (!NEXT[this.#state].includes(next)) {
      throw new EvalfleetError(ErrorCode.Internal, `run state cannot go from ${this.#state} to ${next}`);
    }
    const from = this.#state;
    this.#state = next;
    for (const l of this.#listeners) l(next, from);
  }

  /** Moves to `next` when allowed; returns whether it moved. */
  tryTo(next: RunPhaseName): boolean {
    if (next === this.#state || !NEXT[this.#state].includes(next)) return false;
    this.to(next);
    return true;
  }

  onChange(listener: (state: RunPhaseName, from: RunPhaseName) => void): void {
    this.#listeners.push(listener);
  }
}
