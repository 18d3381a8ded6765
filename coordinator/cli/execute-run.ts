import type { SuiteResult } from "../../shared/result/result.ts";
import { processEnvironment, tracingSettingsFrom } from "../../shared/environment.ts";
import { shutdownTracing, startTracing } from "../../shared/tracing/sdk.ts";
import { Attr, SpanKind, SpanNames, contextWith, endSpan, runInContext, startSpan } from "../../shared/tracing/spans.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import type { SuiteHooks } from "../../shared/hooks.ts";
import { errorMessage } from "../../shared/errors.ts";
import { createLogger, type Logger } from "../../shared/logger.ts";
import { localResponseCacheDir } from "../../shared/response-cache-dir.ts";
import { compileRunSettings, type RunSettings } from "../../shared/run-settings.ts";
import type { ThreadCache } from "../../shared/wire/thread.ts";
import { safeText } from "../../shared/text.ts";
import { ExitCode, exitCodeFor } from "../run/exit-code.ts";
import { describeSelector, selectCases, type SelectedCase } from "../run/select.ts";
import { ConsoleReporter, printCaseList, printSummary } from "../report/console.ts";
import { jsonReportText, writeReport } from "../report/files.ts";
import { writeJsonReport } from "../report/json-report.ts";
import { toJUnitXml } from "../report/junit.ts";
import type { CliRecording } from "../history/recording/cli-recording.ts";
import { cliSettingsInput, type RunConfig } from "./config.ts";
import type { ResolvedIO } from "./io.ts";
import { installSignalHandlers } from "./signals.ts";
import { narrowSelection, narrowsSelection, type RegradeNarrowing } from "./iterate-selection.ts";

/**
 * The run pipeline every run command shares (`run`, `list`, `coordinator run|resume`, a script's
 * `cli(cases)`): the selection (made once, here, and handed to the runner and the recording),
 * `--list`, opening the results store, the run with its progress display and signals, the
 * summary, the reports and the exit code. How the cases run is the {@link Runner}'s business.
 */

/** What a runner gets from the pipeline: the selected cases, presentation hooks, the cancel signal. */
export interface RunnerContext {
  /** The selected cases in the order they are to start (`--order`; their indexes give the declaration order), never empty. */
  selected: readonly SelectedCase[];
  hooks: SuiteHooks;
  /** The run id fixed by the pipeline (a recorded run), or null for the runner's default. */
  runId: string | null;
  signal: AbortSignal;
  /** The run's compiled settings (shared/run-settings.ts): flags, environment and suite, defaults applied once. */
  settings: RunSettings;
  /** The response cache (`--cache`): a local one resolved to its folder; null: off. */
  cache: ThreadCache | null;
  logger: Logger;
  /** A one-line note above the progress display. */
  note: (line: string) => void;
  /** Extra text in the live display. */
  status: (text: string) => void;
  /** Seconds the run is expected to go on, from history; null without history. */
  etaSeconds: (() => number) | null;
}

/** Runs the selected cases one way or another (inline, thread pool, NATS). */
export type Runner = (ctx: RunnerContext) => Promise<{ suite: SuiteResult; incomplete?: string | null }>;

/** How many case names `no cases selected` lists. */
const AVAILABLE_NAMES_SHOWN = 100;

/**
 * Selection, `--list`, the run with its progress, the summary, the reports and the exit code.
 * `newRunId` makes the id of a recorded run of the runner's kind (default a UUID).
 */
export async function executeRun(suite: LoadedSuite, config: RunConfig, io: ResolvedIO, runner: Runner, options: { newRunId?: () => string; regrade?: RegradeNarrowing | null } = {}): Promise<number> {
  const out = io.stdout;
  const selector = config.selector;
  // Every run-wide setting, compiled once: a bad one (an unknown `--eval-function`, ...) stops here (exit 2), before anything runs.
  const settings = compileRunSettings(cliSettingsInput(config), suite);
  const defaultTimeout = settings.defaultTimeoutSeconds;
  let selected = selectCases(suite.cases, { ...selector, evalSets: suite.evalSets ?? null });
  const chosen = selected.length;
  let narrowing: Record<string, unknown> = {};
  if (narrowsSelection(config) || options.regrade) {
    // A re-run from the store, --grep, --filter-metadata, --sample, --limit, a regrade's stored outputs: ANDed with the selector.
    const narrowed = await narrowSelection(suite, config, selected, io, options.regrade ?? null);
    if ("exit" in narrowed) return narrowed.exit;
    selected = narrowed.selected;
    narrowing = narrowed.settings;
  }
  if (selected.length === 0) {
    if (chosen > 0) {
      io.stderr.write(
        `no cases selected (${safeText(describeSelector(selector))}: ${chosen} case${chosen === 1 ? "" : "s"}, none left after ${options.regrade ? "leaving out those that cannot be regraded" : "the re-run and subset filters"})\n`,
      );
      return ExitCode.Usage;
    }
    // A dataset suite has thousands of names: show the first ones.
    const shown = suite.cases.slice(0, AVAILABLE_NAMES_SHOWN).map((c) => safeText(c.name));
    const more = suite.cases.length > AVAILABLE_NAMES_SHOWN ? `, ... (${suite.cases.length - AVAILABLE_NAMES_SHOWN} more)` : "";
    io.stderr.write(`no cases selected (${safeText(describeSelector(selector))})\n  available: ${shown.join(", ")}${more}\n`);
    return ExitCode.Usage;
  }
  if (config.list) return listCases(selected, defaultTimeout, config, io);
  if (config.estimate) {
    const { printEstimate } = await import("./schedule-run.ts");
    return printEstimate(suite, selected, settings, config, io);
  }

  // The results store is opened, and the run's start recorded, before anything runs: a bad URL or
  // an unreachable database stops here with one line (exit 2), with nothing half-recorded.
  // Tracing (OTEL_* variables; a bad value stops here, exit 2): the run's span, active while the
  // runner runs, so every case's span goes under it, in this process's threads and on remote
  // workers (the case message carries it). Without the variables nothing of the SDK is loaded.
  const tracing = await startTracing(tracingSettingsFrom(processEnvironment()), { role: "coordinator" });
  const recording = await openRecording(suite, config, selected, settings, io, options.newRunId, narrowing);
  const logger: Logger = createLogger({ level: config.logLevel, name: "evalfleet" });
  const tty = Boolean((out as { isTTY?: boolean }).isTTY);
  // The start order (--order) and the ETA, from the durations the store recorded (a resumed distributed run keeps its own order).
  const { scheduleRun } = await import("./schedule-run.ts");
  const schedule = await scheduleRun(suite, selected, settings, recording?.recording.store ?? null, config.concurrency, (line) => io.stderr.write(`${safeText(line)}\n`));
  const reporter = new ConsoleReporter({ out, total: selected.length, verbose: config.verbose, color: tty && config.color, eta: schedule.eta });
  if (schedule.note && !config.distributed?.resumeRunId) reporter.note(safeText(schedule.note));
  if (recording) recording.warn = (line) => reporter.note(safeText(line));
  const controller = new AbortController();
  const stopSignals = io.handleSignals ? installSignalHandlers(controller, reporter) : () => undefined;
  const onExternalAbort = (): void => controller.abort(io.signal?.reason);
  if (io.signal?.aborted) onExternalAbort();
  else io.signal?.addEventListener("abort", onExternalAbort, { once: true });

  let result: SuiteResult;
  let incomplete: string | null = null;
  const runSpan = tracing
    ? startSpan(SpanNames.run, { [Attr.suite]: suite.name, [Attr.cases]: selected.length, ...(recording?.runId ? { [Attr.runId]: recording.runId } : {}) }, undefined, SpanKind.SERVER)
    : null;
  try {
    const ran = await runInContext(contextWith(runSpan), () => runner({
      selected: schedule.started,
      hooks: recording ? recording.hooks(reporter.hooks()) : reporter.hooks(),
      runId: recording?.runId ?? null,
      signal: controller.signal,
      settings,
      cache: config.cache ? (config.cache.kind === "shared" ? { kind: "shared", ttlSeconds: config.cache.ttlSeconds } : { kind: "local", dir: localResponseCacheDir(), ttlSeconds: config.cache.ttlSeconds }) : null,
      logger,
      note: (line) => reporter.note(safeText(line)),
      status: (text) => reporter.status(text),
      etaSeconds: schedule.eta ? () => schedule.eta!.secondsLeft() : null,
    }));
    result = ran.suite;
    incomplete = ran.incomplete ?? null;
    if (runSpan) {
      runSpan.setAttributes({ [Attr.runId]: result.runId ?? "", "evalfleet.run.passed": result.passed, "evalfleet.run.failed": result.failed, "evalfleet.run.skipped": result.skipped });
      endSpan(runSpan, incomplete);
    }
  } catch (err) {
    endSpan(runSpan, errorMessage(err));
    // The run never produced a report (the broker unreachable, ...): its record says so.
    if (recording) await recording.abandon();
    throw err;
  } finally {
    if (tracing) await shutdownTracing();
    if (recording) recording.warn = (line) => void io.stderr.write(`${safeText(line)}\n`);
    reporter.stop();
    stopSignals();
    io.signal?.removeEventListener("abort", onExternalAbort);
  }

  printSummary(out, result, { color: tty && config.color });
  if (incomplete) out.write(`run incomplete: ${safeText(incomplete)}\n`);
  else if (result.cancelled) out.write(`run cancelled: ${result.skipped} case${result.skipped === 1 ? "" : "s"} not run\n`);
  const gate = recording ? await recording.finish(result, incomplete !== null, out) : null;
  let reportFailed = false;
  // The JSON report a case at a time: a distributed run's results are read back from its spool.
  if (config.jsonOutput) reportFailed = !(await writeReportAnnounced(io, "json", config.jsonOutput, (path) => writeJsonReport(path, result))) || reportFailed;
  if (config.junit) reportFailed = !(await writeReportAnnounced(io, "junit", config.junit, toJUnitXml(result, suite.name))) || reportFailed;
  const code = exitCodeFor(result, { reportFailed, incomplete: incomplete !== null, infraErrorsIncomplete: config.providers.infraErrorsIncomplete });
  result.release();
  // --fail-on-regression: the run is significantly worse than its baseline (gate.ts), even when a pass threshold is met.
  return code === ExitCode.Ok && gate?.failed ? ExitCode.Failed : code;
}

/** `--list`: the case table, and with `--json-output` the case list as JSON. Runs nothing. */
async function listCases(selected: readonly SelectedCase[], defaultTimeout: number, config: RunConfig, io: ResolvedIO): Promise<number> {
  printCaseList(io.stdout, selected.map((s) => s.case), defaultTimeout);
  if (!config.jsonOutput) return ExitCode.Ok;
  const payload = {
    cases: selected.map(({ case: c }) => ({
      name: c.name,
      agent_id: c.agent ? c.componentId : null,
      team_id: c.team ? c.componentId : null,
      tags: [...c.tags],
      timeout_seconds: c.resolveTimeout(defaultTimeout),
    })),
  };
  return (await writeReportAnnounced(io, "json", config.jsonOutput, jsonReportText(payload))) ? ExitCode.Ok : ExitCode.Failed;
}

/**
 * Opens the results store and records the run's start, or null when no store is asked for. The
 * store's modules load only when a store is asked for (or `--fail-on-regression` needs one).
 */
async function openRecording(
  suite: LoadedSuite,
  config: RunConfig,
  selected: readonly SelectedCase[],
  runSettings: RunSettings,
  io: ResolvedIO,
  newRunId?: () => string,
  settings: Record<string, unknown> = {},
): Promise<CliRecording | null> {
  const store = config.store;
  if (!store.db && !store.failOnRegression) return null;
  const { CliRecording } = await import("../history/recording/cli-recording.ts");
  return CliRecording.open(
    {
      db: store.db,
      suite,
      timeoutSeconds: store.timeoutSeconds,
      confidence: runSettings.confidence,
      failOnRegression: store.failOnRegression,
      gate: { alpha: runSettings.regressionAlpha, confidence: runSettings.confidence, baselineRunId: store.baseline, quarantineFlaky: store.quarantineFlaky },
      settings: { ...config.recorded, ...settings },
      regradedFrom: typeof settings.regradedFrom === "string" ? settings.regradedFrom : null,
      selected,
      selector: config.selector,
      defaultTimeout: runSettings.defaultTimeoutSeconds,
      mode: config.mode,
      runId: config.runId,
      newRunId,
      resume: store.resume,
      definition: { ...config.definition, passThreshold: runSettings.passThreshold },
    },
    io.stderr,
  );
}

async function writeReportAnnounced(io: ResolvedIO, kind: "json" | "junit", path: string, text: string | ((path: string) => Promise<void>)): Promise<boolean> {
  try {
    await (typeof text === "string" ? writeReport(path, text) : text(path));
    io.stdout.write(`${kind} output: ${safeText(path)}\n`);
    return true;
  } catch (err) {
    io.stderr.write(`error: cannot write ${kind} output to ${safeText(path)}: ${safeText(errorMessage(err))}\n`);
    return false;
  }
}
