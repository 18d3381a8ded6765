import type { CaseResult } from "../../shared/result/result.ts";
import { aggregateRepeats } from "../../shared/trials/fold-repeats.ts";
import type { SelectedCase } from "./select.ts";

/**
 * The trials of a distributed run's cases (`--repeat`): each trial is its own delivery, so its
 * results arrive in any order, from any worker, any number of times. The ledger keeps the first
 * result per (case, trial), knows how many trials each case has planned (a fixed `--repeat N`, or
 * more as adaptive repeats ask for them), and folds a case's trials into its one result, in trial
 * order, exactly once: when its last planned trial arrives and no more are planned. Pure; no I/O.
 */

/** One trial of one case: what a case message carries. */
export interface Delivery {
  index: number;
  /** 1-based. */
  trial: number;
}

/** The key of a delivery in maps and sets: `<index>:<trial>`. */
export function deliveryKey(index: number, trial: number): string {
  return `${index}:${trial}`;
}

/** What {@link TrialLedger.record} did with a trial's result. */
export type TrialOutcome =
  /** The first result of the trial; `folded` is the case's result when it was the last trial planned. */
  | { kind: "accepted"; folded: CaseResult | null }
  /** The trial had a result already. */
  | { kind: "duplicate" }
  /** Not a planned trial of a selected case (or the name does not match). */
  | { kind: "unknown" };

/** Per-case bookkeeping. */
interface Entry {
  sel: SelectedCase;
  /** Trials planned so far. */
  planned: number;
  /** Results by trial - 1. */
  trials: Array<CaseResult | undefined>;
  received: number;
  /** Set once the case's trials were folded (no more trials are accepted). */
  folded: boolean;
}

/** Keeps the trials of every selected case and folds each case once. */
export class TrialLedger {
  readonly #entries: Array<Entry | undefined> = [];
  readonly #ordered: Entry[] = [];

  /**
   * `trials` is the number each case plans first (`--repeat N`, or MIN of `--repeat MIN..MAX`),
   * an integer >= 1. A case listed twice is kept once.
   */
  constructor(selected: readonly SelectedCase[], trials: number) {
    if (!Number.isInteger(trials) || trials < 1) throw new RangeError(`trials must be an integer >= 1, got ${trials}`);
    for (const sel of [...selected].sort((a, b) => a.index - b.index)) {
      if (this.#entries[sel.index]) continue;
      const entry: Entry = { sel, planned: trials, trials: [], received: 0, folded: false };
      this.#entries[sel.index] = entry;
      this.#ordered.push(entry);
    }
  }

  /** Trials planned for the case at `index` (0 when it is not selected). */
  planned(index: number): number {
    return this.#entries[index]?.planned ?? 0;
  }

  /** Trials of the case at `index` with a result. */
  received(index: number): number {
    return this.#entries[index]?.received ?? 0;
  }

  /** The results of the case's trials received so far, in trial order (holes left out). */
  trialsOf(index: number): CaseResult[] {
    return (this.#entries[index]?.trials ?? []).filter((r): r is CaseResult => r !== undefined);
  }

  /** Whether the trial is a planned trial of a selected case. */
  isPlanned(index: number, trial: number): boolean {
    const e = this.#entries[index];
    return e !== undefined && Number.isInteger(trial) && trial >= 1 && trial <= e.planned;
  }

  /** Whether the trial has its result. */
  has(index: number, trial: number): boolean {
    return this.#entries[index]?.trials[trial - 1] !== undefined;
  }

  /** Whether the case's trials were folded into its result. */
  isFolded(index: number): boolean {
    return this.#entries[index]?.folded ?? false;
  }

  /**
   * Plans `more` trials for a case not folded yet whose planned trials have all arrived (adaptive
   * repeats' next batch); returns the new trials' deliveries. Throws a RangeError otherwise.
   */
  extend(index: number, more: number): Delivery[] {
    const e = this.#entries[index];
    if (!e) throw new RangeError(`case ${index} is not selected`);
    if (e.folded) throw new RangeError(`case ${index} is folded already`);
    if (!Number.isInteger(more) || more < 1) throw new RangeError(`more must be an integer >= 1, got ${more}`);
    const from = e.planned + 1;
    e.planned += more;
    return Array.from({ length: more }, (_, i) => ({ index, trial: from + i }));
  }

  /**
   * Offers one trial's result; the first per (case, trial) wins. When it completes the case's
   * planned trials and `fold` says so (default: always), the case is folded and its result returned.
   */
  record(trial: number, result: CaseResult, fold: (trials: readonly CaseResult[]) => boolean = () => true): TrialOutcome {
    const e = this.#entries[result.index];
    if (!e || e.sel.case.name !== result.name || !this.isPlanned(result.index, trial)) return { kind: "unknown" };
    if (e.trials[trial - 1] !== undefined || e.folded) return { kind: "duplicate" };
    e.trials[trial - 1] = result;
    e.received++;
    if (e.received < e.planned) return { kind: "accepted", folded: null };
    const all = e.trials as CaseResult[];
    if (!fold(all)) return { kind: "accepted", folded: null };
    return { kind: "accepted", folded: this.#fold(e) };
  }

  /** Folds a case whose planned trials have all arrived (adaptive repeats decided it). Throws a RangeError otherwise. */
  foldNow(index: number): CaseResult {
    const e = this.#entries[index];
    if (!e || e.folded || e.received < e.planned) throw new RangeError(`case ${index} cannot be folded now`);
    return this.#fold(e);
  }

  /**
   * Folds a case not folded yet with `fill(trial)` standing for each planned trial without a result
   * (a run that ended early: its trials not run are skipped). Throws a RangeError when the case is
   * not selected or folded already.
   */
  foldPartial(index: number, fill: (trial: number) => CaseResult): CaseResult {
    const e = this.#entries[index];
    if (!e || e.folded) throw new RangeError(`case ${index} cannot be folded now`);
    for (let t = 1; t <= e.planned; t++) if (e.trials[t - 1] === undefined) e.trials[t - 1] = fill(t);
    return this.#fold(e);
  }

  #fold(e: Entry): CaseResult {
    e.folded = true;
    const all = e.trials as CaseResult[];
    // One trial is the case's result as it is (a run without --repeat reads as before).
    return all.length === 1 ? all[0]! : aggregateRepeats(all);
  }

  /** The planned trials without a result, of cases not folded, in declaration then trial order. */
  missing(): Array<Delivery & { sel: SelectedCase }> {
    const out: Array<Delivery & { sel: SelectedCase }> = [];
    for (const e of this.#ordered) {
      if (e.folded) continue;
      for (let t = 1; t <= e.planned; t++) if (e.trials[t - 1] === undefined) out.push({ sel: e.sel, index: e.sel.index, trial: t });
    }
    return out;
  }
}
