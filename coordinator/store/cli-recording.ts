import { randomUUID } from "node:crypto";
import type { Writable } from "node:stream";
import { InvalidArgumentError, Option, type Command } from "commander";
import { ErrorCode } from "../../shared/errors.ts";
import { SuiteResult } from "../../shared/result.ts";
import type { LoadedSuite } from "../../shared/suite.ts";
import type { SuiteHooks } from "../engine.ts";
import type { SelectedCase, Selector } from "../select.ts";
import { findRegressions } from "../history/regression.ts";
import { safeText } from "../report/console.ts";
import { StoreError } from "./driver.ts";
import { Recording, type Baseline, type DbOption } from "./record-run.ts";
import { DEFAULT_STORE_TIMEOUT_SECONDS } from "./store.ts";

/**
 * The results store on the command line of `evalfleet run`, `evalfleet coordinator run|resume`
 * and `cli(cases)`: the `--db`, `--db-timeout` and `--fail-on-regression` flags, opening the
 * store before any case runs, and what is printed about it afterwards.
 */

/** The store flags, as commander parses them. */
export interface StoreFlags {
  /** The store URL (`--db`, else `$EVALFLEET_DB`). */
  db?: string;
  /** Seconds. */
  dbTimeout?: number;
  failOnRegression?: boolean;
}

/** How a run is made, for its record. */
export type RunMode = "inline" | "threads" | "distributed";

/** Adds `--db`, `--db-timeout` and `--fail-on-regression` to a run command; `env: false` leaves `$EVALFLEET_DB` to the caller. */
export function addStoreFlags(cmd: Command, opts: { env?: boolean } = {}): void {
  const db = new Option("--db <url>", "record the run in a results store: sqlite:PATH (sqlite: alone: .evalfleet/results.db next to the suite) or postgres://USER@HOST/DB (default $EVALFLEET_DB)");
  cmd
    .addOption(opts.env === false ? db : db.env("EVALFLEET_DB"))
    .addOption(new Option("--db-timeout <seconds>", "bound on connecting to the results store, on each write and on the final flush").argParser(parsePositiveSeconds("--db-timeout")).default(DEFAULT_STORE_TIMEOUT_SECONDS))
    .option("--fail-on-regression", "exit 1 when a case that passed in the last recorded run of this suite on the same branch fails now, even if a pass threshold is met (needs --db)");
}

/** What the CLI knows when it opens the store. */
export interface CliRecordingRequest {
  /** The store: `--db`, `$EVALFLEET_DB`, or `cli(cases, { db })`; null: none. */
  db: DbOption | null;
  suite: LoadedSuite;
  /** The run's flags: the store flags, and the settings recorded with the run. */
  flags: StoreFlags;
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
}

/** The settings worth keeping with a run (never a credential: no NATS URL or token). */
const CONFIG_FLAGS = ["concurrency", "threads", "grace", "threadMemory", "repeat", "passThreshold", "maxAttempts", "ackWait", "waitForWorkers", "deadline", "cancelGrace", "brokerTimeout"] as const;

/** A run being recorded from the command line. */
export class CliRecording {
  readonly recording: Recording;
  readonly #failOnRegression: boolean;
  readonly #baseline: Baseline | null;
  /** Where warnings go; the CLI points it at the progress display while the run is shown. */
  warn: (line: string) => void;

  private constructor(recording: Recording, failOnRegression: boolean, baseline: Baseline | null, warn: (line: string) => void) {
    this.recording = recording;
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
      if (req.flags.failOnRegression) {
        throw new StoreError(ErrorCode.Usage, "--fail-on-regression needs a results store: pass --db URL or set EVALFLEET_DB", { field: "failOnRegression" });
      }
      return null;
    }
    const config: Record<string, unknown> = { mode: req.mode };
    const flags = req.flags as Record<string, unknown>;
    for (const k of CONFIG_FLAGS) if (flags[k] !== undefined && flags[k] !== null) config[k] = flags[k];
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
      },
      { db, timeoutSeconds: req.flags.dbTimeout, onWarning: (m) => warn(`warning: ${m}`), resume: req.resume, withBaseline: Boolean(req.flags.failOnRegression) },
    );
    const cli = new CliRecording(recording, Boolean(req.flags.failOnRegression), recording.baseline, (line) => warn(line));
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
   * the regressions since the baseline. Returns them (empty without the flag).
   */
  async finish(result: SuiteResult, incomplete: boolean, out: Writable): Promise<{ regressions: string[] }> {
    const outcome = await this.recording.finish(result, { incomplete });
    const store = this.recording.store.display;
    out.write(`${safeText(`results store: run ${this.runId} recorded in ${store} (${outcome.recorded} of ${result.total} case result${result.total === 1 ? "" : "s"})`)}\n`);
    if (!this.#failOnRegression) return { regressions: [] };
    const branch = this.recording.run.gitBranch;
    const where = `suite '${this.recording.run.suiteName}'${branch ? ` on branch ${branch}` : " (no branch)"}`;
    if (!this.#baseline) {
      out.write(`${safeText(`regressions: no earlier recorded run of ${where} to compare with`)}\n`);
      return { regressions: [] };
    }
    const regressions = findRegressions(this.#baseline.cases, result.results.map((r) => ({ name: r.name, passed: r.passed, skipped: r.skipped, judgeScore: r.judgeScore, scoreValue: r.score?.value ?? null, durationSeconds: r.durationSeconds })));
    const since = `since run ${this.#baseline.run.id} (${this.#baseline.run.startedAt}) of ${where}`;
    out.write(
      `${safeText(regressions.length === 0 ? `regressions: none ${since}` : `regressions: ${regressions.length} case${regressions.length === 1 ? "" : "s"} passed ${since} and fail now: ${regressions.join(", ")}`)}\n`,
    );
    return { regressions };
  }
}

function parsePositiveSeconds(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a number of seconds > 0, got '${value}'`);
    return n;
  };
}
