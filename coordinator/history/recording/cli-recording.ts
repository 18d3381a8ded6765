import { randomUUID } from "node:crypto";
import type { Writable } from "node:stream";
import { ErrorCode } from "../../../shared/errors.ts";
import { SuiteResult } from "../../../shared/result/result.ts";
import type { LoadedSuite } from "../../../shared/suite/suite.ts";
import type { SuiteHooks } from "../../../shared/hooks.ts";
import type { SelectedCase, Selector } from "../../run/select.ts";
import { trialCase } from "../case-trials.ts";
import { decideGate } from "../gate.ts";
import { significanceLines } from "../significance-text.ts";
import { safeText } from "../../../shared/text.ts";
import { StoreError } from "../store/driver.ts";
import { Recording, type Baseline, type DbOption, type RunDefinition } from "./record-run.ts";

/**
 * The results store on the command line of `evalfleet run`, `evalfleet coordinator run|resume`
 * and `cli(cases)`: opening the store before any case runs (as `--db`, `--db-timeout` and
 * `--fail-on-regression` ask; the flags are in coordinator/cli/flags.ts), and what is printed about
 * it afterwards.
 */

/** How a run is made, for its record. */
export type RunMode = "inline" | "threads" | "distributed";

/** What the CLI knows when it opens the store. */
export interface CliRecordingRequest {
  /** The store: `--db`, `$EVALFLEET_DB`, or `cli(cases, { db })`; null: none. */
  db: DbOption | null;
  suite: LoadedSuite;
  /** Seconds: bound on connecting, each write and the final flush (`--db-timeout`). */
  timeoutSeconds: number;
  /** The confidence of the intervals in the case rows (`--confidence`). Default: the statistics' (0.95). */
  confidence?: number;
  /** `--fail-on-regression`: read the baseline before the run, report the regressions after it. */
  failOnRegression: boolean;
  /** The gate's settings: `--regression-alpha` and the intervals' confidence (from the compiled run settings), `--baseline` (null: the last run on the branch), `--quarantine-flaky`. */
  gate: { alpha: number; confidence: number; baselineRunId: string | null; quarantineFlaky: boolean };
  /** The settings recorded with the run, by flag name (never a credential). */
  settings: Readonly<Record<string, unknown>>;
  selected: readonly SelectedCase[];
  selector: Selector;
  /** Seconds. */
  defaultTimeout: number;
  mode: RunMode;
  /** The run id, when it is already fixed (a resumed run, `--run-id`). */
  runId?: string | null;
  /** A new run id of the mode's kind. Default: a UUID. */
  newRunId?: () => string;
  /** Reopen a run already recorded (a resumed distributed run). */
  resume?: boolean;
  /** The recorded run this one regrades (`evalfleet regrade`). Default none. */
  regradedFrom?: string | null;
  /** The run in Exulu's terms (`--run-name`, `--description`, `--eval-function`, `--scoring-method`, the pass threshold). */
  definition?: RunDefinition;
}

/** A run being recorded from the command line. */
export class CliRecording {
  readonly recording: Recording;
  readonly #failOnRegression: boolean;
  readonly #baseline: Baseline | null;
  readonly #gate: CliRecordingRequest["gate"];
  /** Where warnings go; the CLI points it at the progress display while the run is shown. */
  warn: (line: string) => void;

  private constructor(recording: Recording, failOnRegression: boolean, baseline: Baseline | null, gate: CliRecordingRequest["gate"], warn: (line: string) => void) {
    this.recording = recording;
    this.#gate = gate;
    this.#failOnRegression = failOnRegression;
    this.#baseline = baseline;
    this.warn = warn;
  }

  /** The recorded run's id (the runner must use it). */
  get runId(): string {
    return this.recording.run.id;
  }

  /**
   * Opens the store and records the run's start, or returns null when no store is asked for.
   * Throws before any case runs: a usage error for `--fail-on-regression` without a store, and
   * the store's typed errors (bad URL, unreachable, newer schema, run id taken).
   */
  static async open(req: CliRecordingRequest, stderr: Writable): Promise<CliRecording | null> {
    const db = typeof req.db === "string" ? req.db.trim() || null : req.db;
    if (!db) {
      if (req.failOnRegression) {
        throw new StoreError(ErrorCode.Usage, "--fail-on-regression needs a results store: pass --db URL or set EVALFLEET_DB", { field: "failOnRegression" });
      }
      return null;
    }
    const config: Record<string, unknown> = { mode: req.mode, ...req.settings };
    let warn = (line: string): void => void stderr.write(`${safeText(line)}\n`);
    const runId = req.runId || (req.newRunId ?? randomUUID)();
    const recording = await Recording.start(
      runId,
      {
        suiteName: req.suite.name,
        suitePath: req.suite.path || null,
        fingerprint: req.suite.fingerprint || null,
        selected: req.selected,
        selector: req.selector,
        config,
        judgeModel: req.suite.judgeModel,
        timeoutSeconds: req.defaultTimeout,
        definition: req.definition,
        regradedFrom: req.regradedFrom ?? null,
      },
      { db, timeoutSeconds: req.timeoutSeconds, onWarning: (m) => warn(`warning: ${m}`), resume: req.resume, withBaseline: req.failOnRegression, baselineRunId: req.gate.baselineRunId, ...(req.confidence === undefined ? {} : { confidence: req.confidence }) },
    );
    const cli = new CliRecording(recording, req.failOnRegression, recording.baseline, req.gate, (line) => warn(line));
    // Later warnings follow `cli.warn`, which the caller may point elsewhere.
    warn = (line) => cli.warn(line);
    return cli;
  }

  /** The run stopped without a report (an error before or while it ran): records it as incomplete. */
  async abandon(): Promise<void> {
    await this.recording.finish(new SuiteResult([], { runId: this.runId }), { incomplete: true }).catch(() => undefined);
  }

  /** `hooks` with each finished case also recorded. */
  hooks(hooks: SuiteHooks): SuiteHooks {
    return this.recording.wrap(hooks);
  }

  /**
   * Records the end of the run and prints what was recorded and, with `--fail-on-regression`,
   * the gate's decision against the baseline (gate.ts). `failed`: the gate fails the run (never
   * without the flag, or without a baseline).
   */
  async finish(result: SuiteResult, incomplete: boolean, out: Writable): Promise<{ failed: boolean; regressions: string[] }> {
    const outcome = await this.recording.finish(result, { incomplete });
    const store = this.recording.store.display;
    out.write(`${safeText(`results store: run ${this.runId} recorded in ${store} (${outcome.recorded} of ${result.total} case result${result.total === 1 ? "" : "s"})`)}\n`);
    if (!this.#failOnRegression) return { failed: false, regressions: [] };
    const branch = this.recording.run.gitBranch;
    const where = `suite '${this.recording.run.suiteName}'${branch ? ` on branch ${branch}` : " (no branch)"}`;
    if (!this.#baseline) {
      out.write(`${safeText(`regressions: no earlier recorded run of ${where} to compare with`)}\n`);
      return { failed: false, regressions: [] };
    }
    const base = this.#baseline;
    const gate = this.#gate;
    const decision = decideGate({
      baseline: base.cases,
      history: base.history.map((h) => h.cases),
      current: Array.from(result.cases(), (r) => trialCase(r.name, r.caseId ?? null, r.toJSON(), this.recording.checksOf(r.index))),
      alpha: gate.alpha,
      confidence: gate.confidence,
      quarantineFlaky: gate.quarantineFlaky,
    });
    const baseWhere = base.run.gitBranch === branch ? where : `suite '${base.run.suiteName}'${base.run.gitBranch ? ` on branch ${base.run.gitBranch}` : " (no branch)"}`;
    const since = `since run ${base.run.id} (${base.run.startedAt}) of ${baseWhere}`;
    const regressed = decision.result.cases.filter((c) => c.verdict === "regressed" && !c.quarantined).map((c) => c.name);
    const head = decision.failed
      ? `regressions: significant ${since}: ${regressed.length > 0 ? `${regressed.length} case${regressed.length === 1 ? "" : "s"} regressed` : "the pass rate dropped"}; the gate fails the run`
      : `regressions: none significant ${since}`;
    const history = base.history.length > 0 ? [`history: ${base.history.length} earlier run${base.history.length === 1 ? "" : "s"} of the baseline's branch joined the per-case tests`] : [];
    const quarantine = gate.quarantineFlaky ? [`quarantined (flaky over ${base.history.length + 1} run${base.history.length === 0 ? "" : "s"}): ${decision.quarantined.length ? decision.quarantined.join(", ") : "none"}`] : [];
    const only = [
      ...(decision.onlyNow.length ? [`new since the baseline, not compared (${decision.onlyNow.length}): ${decision.onlyNow.join(", ")}`] : []),
      ...(decision.onlyInBaseline.length ? [`only in the baseline (${decision.onlyInBaseline.length}): ${decision.onlyInBaseline.join(", ")}`] : []),
    ];
    for (const line of [head, ...significanceLines(decision.result).map((l) => `  ${l}`), ...history, ...quarantine, ...only]) out.write(`${safeText(line)}\n`);
    return { failed: decision.failed, regressions: regressed };
  }
}
