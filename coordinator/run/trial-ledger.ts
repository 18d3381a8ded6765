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

/** Trials a case may plan at most (the typed arrays' range; `--repeat` allows far fewer). */
const MAX_PLANNED = 0xffff_ffff;

/**
 * Keeps the trials of every selected case and folds each case once.
 *
 * Per case it keeps a few numbers in typed arrays indexed by declaration index (trials planned,
 * trials received, folded or not: 9 bytes) and a pointer to the selected case; a trial's result is
 * kept only while its case is open with more than one trial (a repeated case, or one whose adaptive
 * repeats want more). A folded case's results are its folded result's, held by whoever took it.
 * Before, each case had an entry object and a list of its trials for the whole run: about 260 B per
 * case that a 100,000-case coordinator held until its end (docs/design.md, "What a case costs the
 * coordinator").
 */
export class TrialLedger {
  /** The selected cases by declaration index (holes where a case is not selected). */
  readonly #selected: Array<SelectedCase | undefined> = [];
  /** The selected cases in declaration order. */
  readonly #ordered: SelectedCase[] = [];
  readonly #planned: Uint32Array;
  readonly #received: Uint32Array;
  /** 1 once the case's trials were folded (no more trials are accepted). */
  readonly #folded: Uint8Array;
  /** The results by trial - 1 of the open cases that hold some (holes where a trial has none). */
  readonly #open = new Map<number, Array<CaseResult | undefined>>();

  /**
   * `trials` is the number each case plans first (`--repeat N`, or MIN of `--repeat MIN..MAX`),
   * an integer >= 1. A case listed twice is kept once.
   */
  constructor(selected: readonly SelectedCase[], trials: number) {
    if (!Number.isInteger(trials) || trials < 1 || trials > MAX_PLANNED) throw new RangeError(`trials must be an integer >= 1, got ${trials}`);
    let size = 0;
    for (const sel of selected) size = Math.max(size, sel.index + 1);
    this.#planned = new Uint32Array(size);
    this.#received = new Uint32Array(size);
    this.#folded = new Uint8Array(size);
    for (const sel of [...selected].sort((a, b) => a.index - b.index)) {
      if (this.#selected[sel.index]) continue;
      this.#selected[sel.index] = sel;
      this.#ordered.push(sel);
      this.#planned[sel.index] = trials;
    }
  }

  /** Trials planned for the case at `index` (0 when it is not selected). */
  planned(index: number): number {
    return this.#selected[index] ? this.#planned[index]! : 0;
  }

  /** Trials of the case at `index` with a result. */
  received(index: number): number {
    return this.#selected[index] ? this.#received[index]! : 0;
  }

  /** The results of the case's trials received so far, in trial order (holes left out); none once it is folded. */
  trialsOf(index: number): CaseResult[] {
    return (this.#open.get(index) ?? []).filter((r): r is CaseResult => r !== undefined);
  }

  /** Whether the trial is a planned trial of a selected case. */
  isPlanned(index: number, trial: number): boolean {
    return this.#selected[index] !== undefined && Number.isInteger(trial) && trial >= 1 && trial <= this.#planned[index]!;
  }

  /** Whether the trial has its result (every planned trial of a folded case has). */
  has(index: number, trial: number): boolean {
    if (!this.isPlanned(index, trial)) return false;
    if (this.#folded[index] === 1) return true;
    return this.#open.get(index)?.[trial - 1] !== undefined;
  }

  /** Whether the case's trials were folded into its result. */
  isFolded(index: number): boolean {
    return this.#selected[index] !== undefined && this.#folded[index] === 1;
  }

  /**
   * Plans `more` trials for a case not folded yet whose planned trials have all arrived (adaptive
   * repeats' next batch); returns the new trials' deliveries. Throws a RangeError otherwise.
   */
  extend(index: number, more: number): Delivery[] {
    if (!this.#selected[index]) throw new RangeError(`case ${index} is not selected`);
    if (this.#folded[index] === 1) throw new RangeError(`case ${index} is folded already`);
    if (!Number.isInteger(more) || more < 1 || this.#planned[index]! + more > MAX_PLANNED) throw new RangeError(`more must be an integer >= 1, got ${more}`);
    const from = this.#planned[index]! + 1;
    this.#planned[index] = this.#planned[index]! + more;
    return Array.from({ length: more }, (_, i) => ({ index, trial: from + i }));
  }

  /**
   * Offers one trial's result; the first per (case, trial) wins. When it completes the case's
   * planned trials and `fold` says so (default: always), the case is folded and its result returned.
   */
  record(trial: number, result: CaseResult, fold: (trials: readonly CaseResult[]) => boolean = () => true): TrialOutcome {
    const index = result.index;
    const sel = this.#selected[index];
    if (!sel || sel.case.name !== result.name || !this.isPlanned(index, trial)) return { kind: "unknown" };
    if (this.#folded[index] === 1 || this.has(index, trial)) return { kind: "duplicate" };
    this.#received[index] = this.#received[index]! + 1;
    const planned = this.#planned[index]!;
    // The common case, one trial planned and it is in: no list is kept unless the case stays open.
    let trials = this.#open.get(index);
    if (!trials) {
      trials = [];
      if (planned > 1) this.#open.set(index, trials);
    }
    trials[trial - 1] = result;
    if (this.#received[index]! < planned) return { kind: "accepted", folded: null };
    const all = trials as CaseResult[];
    if (!fold(all)) {
      this.#open.set(index, trials);
      return { kind: "accepted", folded: null };
    }
    return { kind: "accepted", folded: this.#fold(index, all) };
  }

  /** Folds a case whose planned trials have all arrived (adaptive repeats decided it). Throws a RangeError otherwise. */
  foldNow(index: number): CaseResult {
    if (!this.#selected[index] || this.#folded[index] === 1 || this.#received[index]! < this.#planned[index]!) throw new RangeError(`case ${index} cannot be folded now`);
    return this.#fold(index, this.#open.get(index) as CaseResult[]);
  }

  /**
   * Folds a case not folded yet with `fill(trial)` standing for each planned trial without a result
   * (a run that ended early: its trials not run are skipped). Throws a RangeError when the case is
   * not selected or folded already.
   */
  foldPartial(index: number, fill: (trial: number) => CaseResult): CaseResult {
    if (!this.#selected[index] || this.#folded[index] === 1) throw new RangeError(`case ${index} cannot be folded now`);
    const trials = this.#open.get(index) ?? [];
    for (let t = 1; t <= this.#planned[index]!; t++) if (trials[t - 1] === undefined) trials[t - 1] = fill(t);
    return this.#fold(index, trials as CaseResult[]);
  }

  #fold(index: number, all: CaseResult[]): CaseResult {
    this.#folded[index] = 1;
    this.#open.delete(index);
    // One trial is the case's result as it is (a run without --repeat reads as before).
    return all.length === 1 ? all[0]! : aggregateRepeats(all);
  }

  /** The planned trials without a result, of cases not folded, in declaration then trial order. */
  missing(): Array<Delivery & { sel: SelectedCase }> {
    const out: Array<Delivery & { sel: SelectedCase }> = [];
    for (const sel of this.#ordered) {
      if (this.#folded[sel.index] === 1) continue;
      const trials = this.#open.get(sel.index);
      for (let t = 1; t <= this.#planned[sel.index]!; t++) if (trials?.[t - 1] === undefined) out.push({ sel, index: sel.index, trial: t });
    }
    return out;
  }
}
