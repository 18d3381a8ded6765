import type { CaseResult } from "../../shared/result/result.ts";
import type { Logger } from "../../shared/logger.ts";
import type { PriceTable } from "../../shared/providers/prices.ts";
import type { SuiteHooks } from "../../shared/hooks.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import type { Delivery } from "../run/trial-ledger.ts";
import type { SelectedCase } from "../run/select.ts";
import type { AdaptiveCollecting } from "./adaptive-collecting.ts";

// What a distributed run's RunCollector (collect.ts) is given and whom it tells.

/** What a {@link RunCollector} tells the run about. */
export interface CollectListener {
  /** A case got its result: its trials folded, exactly once. */
  onAccepted(result: CaseResult): void;
  /** A trial got its result (the first one), before its case is folded: what it spent counts. Optional. */
  onTrial?(result: CaseResult): void;
  /** The cases in flight changed (a case started or ended). */
  onInFlightChanged(): void;
  /** A worker is evidently serving the run (its event arrived), whether or not its presence was seen. */
  onWorkerActive(): void;
}

/** Options of {@link RunCollector}. */
export interface RunCollectorOptions {
  runId: string;
  selected: readonly SelectedCase[];
  hooks: SuiteHooks;
  logger: Logger;
  listener: CollectListener;
  /** The run's delivery tokens: a result must echo its case's. */
  tokens: RunTokens;
  /**
   * Whether a worker is present in the run (an accepted presence record): known at once, or looked
   * up. A result from a worker that is not is not accepted.
   */
  presence: (workerId: string) => boolean | Promise<boolean>;
  /** Prices by model over the built-in table: each accepted result's cost is filled in (shared/providers/prices.ts). Default: the built-in table. */
  prices?: PriceTable | null;
  /** The run's pass rule of a repeated case (shared/trials/case-pass-rule.ts); a case's own `passRate` wins. Default: every trial. */
  casePassRate?: number | null;
  /** Trials each case plans first (`--repeat N`, or MIN of `--repeat MIN..MAX`). Default 1. */
  trials?: number;
  /**
   * Adaptive repeats (`--repeat MIN..MAX`, `trials` being MIN): when a case's planned trials are
   * all in, the stopping rule (shared/trials/adaptive-repeats.ts) says whether it needs another
   * batch; the batch is planned here and `onMore` publishes it, as many of its trials as
   * `trialsAllowed` lets run (0 when stopping, a budget's share). Each folded case is marked with
   * why it stopped. Default null: a fixed repeat.
   */
  adaptive?: AdaptiveCollecting | null;
  /** Told of the trials adaptive repeats planned, to publish them. */
  onMore?: (deliveries: Delivery[]) => void;
  /**
   * Keep each case's result in a temporary file once its hooks have run (coordinator/run/result-spool.ts),
   * not in memory: the reports read them back in declaration order. Default true; false (or a
   * spool that cannot be opened) holds every result until the end.
   */
  spool?: boolean;
}
