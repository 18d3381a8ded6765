import type { Writable } from "node:stream";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import type { SuiteResult } from "../shared/result.ts";
import { SuiteLoadError, EvalfleetError, ErrorCode, errorMessage } from "../shared/errors.ts";
import { natsSettingsFrom, connectNats, processLabel, type NatsFlags } from "../shared/nats-connection.ts";
import { openBroker, type Broker } from "../shared/jetstream-setup.ts";
import { assertRunId } from "../shared/subjects.ts";
import { WorkerService } from "../worker/service.ts";
import { newRunId, readManifest, readRunState, requestCancel, resumeDistributed, runDistributed, type DistributedRunOptions } from "./nats-dispatch.ts";
import { runStatus, type RunStatus } from "./run-status.ts";
import { booleanFromEnvironment, leaveRunOnSigterm, runIdFromEnvironment } from "./job-env.ts";
import { QueueMetricsService } from "./queue-metrics.ts";
import { createLogger, type Logger } from "../shared/logger.ts";
import { loadSuite, type LoadedSuite } from "../shared/suite.ts";
import { normalizeEvalSets, type EvalSetsDefinition } from "../shared/eval-sets.ts";
import type { McpClientLike } from "../shared/mcp-client.ts";
import { DEFAULT_TIMEOUT_SECONDS } from "../worker/lifecycle.ts";
import { DEFAULT_GRACE_SECONDS } from "../worker/pool.ts";
import type { SuiteHooks } from "./engine.ts";
import { ExitCode, exitCodeFor } from "./exit-code.ts";
import { runSuiteLocal } from "./local.ts";
import { runCases } from "./run-cases.ts";
import { describeSelector, selectCases } from "./select.ts";
import { ConsoleReporter, printCaseList, printSummary, safeText } from "./report/console.ts";
import { jsonReportText, writeReport } from "./report/files.ts";
import { toJUnitXml } from "./report/junit.ts";
import { addStoreFlags, CliRecording, type RunMode, type StoreFlags } from "./store/cli-recording.ts";
import type { DbOption } from "./store/record-run.ts";
import { addHistoryCommands } from "./history/commands.ts";

/**
 * The `evalfleet` command line, and `cli(cases)` for Agno-style scripts. Presentation lives here
 * and in report/; the runner core prints nothing.
 */

/** Where the CLI writes and how it is driven (tests pass their own streams and signal). */
export interface CliIO {
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Default `process.stderr`. */
  stderr?: Writable;
  /** Cancels the run as a first Ctrl-C would. */
  signal?: AbortSignal;
  /** Install SIGINT/SIGTERM handlers for the run. Default true. */
  handleSignals?: boolean;
}

/** Options of {@link cli}. */
export interface CliOptions extends CliIO {
  /** Arguments; default `process.argv.slice(2)`. */
  argv?: readonly string[];
  /** The default per-case timeout behind `--timeout`, in seconds. Default 120. */
  defaultTimeout?: number;
  judgeModel?: JudgeModel | null;
  /** MCP clients the cases' agents use (Agno's `mcp_tools=`): connected before the first case, closed at the end; none when listing or nothing is selected. */
  mcpClients?: readonly McpClientLike[] | null;
  /**
   * Record each run in a results store: a URL (`sqlite:PATH`, `postgres://...`) or an open
   * `ResultsStore`. `--db` wins, then this, then `$EVALFLEET_DB`. Default: not recorded.
   */
  db?: DbOption | null;
  /** Eval sets for `--set NAME`: names of groups of case names or ids. Default none. */
  evalSets?: EvalSetsDefinition | null;
  /** The run passes when at least this fraction (0-1) of the cases pass (`--pass-threshold` wins). Default: every case must pass. */
  passThreshold?: number | null;
}

/** Flags common to `evalfleet run`, `evalfleet list` and `cli()`. */
interface RunFlags extends StoreFlags {
  name?: string[];
  tag?: string[];
  set?: string[];
  passThreshold?: number;
  repeat?: number;
  timeout?: number;
  jsonOutput?: string;
  junit?: string;
  list?: boolean;
  verbose?: boolean;
  concurrency?: number;
  threads?: number;
  grace?: number;
  threadMemory?: number;
  logLevel: string;
  runId?: string;
}

/**
 * The command line of a suite file that calls `cli(CASES)` (see coordinator/cli-script.ts, which
 * loads this module only when the script really runs). Returns the exit code.
 */
export async function runScript(cases: readonly Case[], options: CliOptions = {}): Promise<number> {
  const io = resolveIO(options);
  const program = new Command("evals")
    .description("Run the eval suite, or a subset with --name/--tag.")
    .helpOption("-h, --help", "Show this help");
  addSelectionAndReportFlags(program, options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS);
  addRunPolicyFlags(program);
  // $EVALFLEET_DB is read after options.db here: a script that names its store keeps it.
  addStoreFlags(program, { env: false });
  program.addOption(new Option("--concurrency <n>", "Cases in flight at once (inline, in this thread)").argParser(parseWhole("--concurrency", 1)).default(1));
  let code: number = ExitCode.Usage;
  program.action(async (flags: RunFlags) => {
    const suite = {
      name: "evals",
      path: "",
      cases,
      judgeModel: options.judgeModel ?? null,
      defaultTimeout: options.defaultTimeout ?? null,
      mcpClients: options.mcpClients ?? [],
      fingerprint: "",
      evalSets: normalizeEvalSets(options.evalSets),
      passThreshold: options.passThreshold ?? null,
    } as LoadedSuite;
    code = await executeRun(suite, flags, io, inlineRunner(suite, flags), { mode: "inline", db: options.db ?? process.env.EVALFLEET_DB ?? null });
  });
  return parseAndRun(program, options.argv ?? process.argv.slice(2), io, () => code);
}

/** The `evalfleet` binary: `run`, `list`. Returns the exit code. */
export async function main(argv: readonly string[], io: CliIO = {}): Promise<number> {
  const out = resolveIO(io);
  const program = new Command("evalfleet")
    .description("Run eval suites for LLM agents: locally on worker threads, or across machines on NATS JetStream.")
    .helpOption("-h, --help", "Show this help")
    .showHelpAfterError(false)
    .showSuggestionAfterError(false);
  let code: number = ExitCode.Usage;

  const run = program
    .command("run")
    .description("Run a suite file on a pool of worker threads (local mode, no broker)")
    .argument("[suite]", "suite file (.ts, .mts, .js, .mjs); default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(run, DEFAULT_TIMEOUT_SECONDS);
  addRunPolicyFlags(run);
  addEngineFlags(run);
  addStoreFlags(run);
  run.action(async (suitePath: string | undefined, flags: RunFlags) => {
    code = await withSuite(suitePath, out, (suite) => executeRun(suite, flags, out, flags.threads === 0 ? inlineRunner(suite, flags) : poolRunner(suite, flags), { mode: flags.threads === 0 ? "inline" : "threads" }));
  });

  const list = program
    .command("list")
    .description("List the selected cases of a suite file without running them")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(list, DEFAULT_TIMEOUT_SECONDS, { list: false });
  list.action(async (suitePath: string | undefined, flags: RunFlags) => {
    code = await withSuite(suitePath, out, (suite) => executeRun(suite, { ...flags, list: true }, out, inlineRunner(suite, flags)));
  });

  addDistributedCommands(program, out, (c) => (code = c));
  addHistoryCommands(program, out, (c) => (code = c));
  addQueueMetricsCommand(program, out, (c) => (code = c));

  return parseAndRun(program, argv, out, () => code);
}

type ResolvedIO = Required<Pick<CliIO, "stdout" | "stderr" | "handleSignals">> & Pick<CliIO, "signal">;

function resolveIO(io: CliIO): ResolvedIO {
  return { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, handleSignals: io.handleSignals ?? true, signal: io.signal };
}

async function parseAndRun(program: Command, argv: readonly string[], io: ResolvedIO, code: () => number): Promise<number> {
  const configure = (cmd: Command): void => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s), outputError: (s, write) => write(s) });
    cmd.commands.forEach(configure);
  };
  configure(program);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code();
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === "commander.helpDisplayed" || err.code === "commander.help" || err.code === "commander.version" ? ExitCode.Ok : ExitCode.Usage;
    }
    io.stderr.write(`error: ${safeText(errorMessage(err))}\n`);
    return exitCodeOfError(err);
  }
}

function addSelectionAndReportFlags(cmd: Command, defaultTimeout: number, opts: { list?: boolean } = {}): void {
  cmd
    .option("--name <name>", "Run only the case with this name (repeatable)", collect)
    .option("--tag <tag>", "Run only cases with this tag (repeatable: a case matches any)", collect)
    .option("--set <name>", "Run only the cases of this eval set (repeatable: a case matches any); ANDed with --name and --tag", collect)
    .addOption(new Option("--timeout <seconds>", "Default per-case timeout in seconds").argParser(parseSeconds("--timeout")).default(undefined, String(defaultTimeout)))
    .option("--json-output <path>", "Write machine-readable JSON results")
    .option("--junit <path>", "Write JUnit XML results (one testcase per case)");
  if (opts.list !== false) cmd.option("--list", "List selected cases without running them");
  cmd.option("-v, --verbose", "Print each case's response, tools and verdicts").addOption(
    new Option("--log-level <level>", "Structured log level on stderr").choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("warn"),
  );
}

/** `--pass-threshold` and `--repeat`: how a run passes, and how often each case runs. */
function addRunPolicyFlags(cmd: Command, opts: { repeat?: boolean } = {}): void {
  cmd.addOption(
    new Option("--pass-threshold <rate>", "The run passes when at least this fraction (0-1) of the selected cases pass (default: the suite's, else every case)").argParser(parseFraction("--pass-threshold")),
  );
  if (opts.repeat !== false) {
    cmd.addOption(new Option("--repeat <n>", "Run each case N times; the report gives each case's pass rate and pass@k (a case passes when every run passed)").argParser(parseWhole("--repeat", 1)));
  }
}

function addEngineFlags(cmd: Command): void {
  cmd
    .addOption(new Option("--concurrency <n>", "Cases in flight at once").argParser(parseWhole("--concurrency", 1)).default(4))
    .addOption(new Option("--threads <n>", "Worker threads (0 runs cases in this thread); default min(CPUs, concurrency)").argParser(parseWhole("--threads", 0)))
    .addOption(new Option("--grace <seconds>", "Seconds past a deadline before a stuck thread is terminated").argParser(parseSeconds("--grace")).default(DEFAULT_GRACE_SECONDS))
    .addOption(new Option("--thread-memory <mb>", "Per-thread heap limit in MB").argParser(parseWhole("--thread-memory", 16)))
    .option("--run-id <id>", "Run id for the report (default: a new UUID)");
}

async function withSuite(path: string | undefined, io: ResolvedIO, use: (suite: LoadedSuite) => Promise<number>): Promise<number> {
  const file = path ?? process.env.EVALFLEET_SUITE;
  if (!file) {
    io.stderr.write("error: no suite file: pass SUITE or set EVALFLEET_SUITE\n");
    return ExitCode.Usage;
  }
  let suite: LoadedSuite;
  try {
    suite = await loadSuite(file);
  } catch (err) {
    if (err instanceof SuiteLoadError) {
      io.stderr.write(`error: ${safeText(err.message)}\n`);
      return ExitCode.Usage;
    }
    throw err;
  }
  return use(suite);
}

/** Selection, `--list`, the run with its progress, the summary, the reports and the exit code. */
async function executeRun(suite: LoadedSuite, flags: RunFlags, io: ResolvedIO, runner: Runner, recordAs: RecordAs = { mode: "inline" }): Promise<number> {
  const out = io.stdout;
  const selector = { name: flags.name ?? null, tag: flags.tag ?? null, set: flags.set ?? null };
  const defaultTimeout = flags.timeout ?? suite.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  const selected = selectCases(suite.cases, { ...selector, evalSets: suite.evalSets ?? null });
  if (selected.length === 0) {
    // A dataset suite has thousands of names: show the first ones.
    const shown = suite.cases.slice(0, AVAILABLE_NAMES_SHOWN).map((c) => safeText(c.name));
    const more = suite.cases.length > AVAILABLE_NAMES_SHOWN ? `, ... (${suite.cases.length - AVAILABLE_NAMES_SHOWN} more)` : "";
    io.stderr.write(`no cases selected (${safeText(describeSelector(selector))})\n  available: ${shown.join(", ")}${more}\n`);
    return ExitCode.Usage;
  }
  if (flags.list) {
    printCaseList(out, selected.map((s) => s.case), defaultTimeout);
    if (!flags.jsonOutput) return ExitCode.Ok;
    const payload = {
      cases: selected.map(({ case: c }) => ({
        name: c.name,
        agent_id: c.agent ? c.componentId : null,
        team_id: c.team ? c.componentId : null,
        tags: [...c.tags],
        timeout_seconds: c.resolveTimeout(defaultTimeout),
      })),
    };
    return (await writeReportAnnounced(io, "json", flags.jsonOutput, jsonReportText(payload))) ? ExitCode.Ok : ExitCode.Failed;
  }

  // The results store is opened, and the run's start recorded, before anything runs: a bad URL or
  // an unreachable database stops here with one line (exit 2), with nothing half-recorded.
  const recording = await CliRecording.open({ ...recordAs, suite, flags, db: flags.db ?? recordAs.db ?? null, selected, selector, defaultTimeout, runId: recordAs.runId ?? flags.runId }, io.stderr);
  const logger: Logger = createLogger({ level: flags.logLevel, name: "evalfleet" });
  const reporter = new ConsoleReporter({ out, total: selected.length, verbose: flags.verbose });
  if (recording) recording.warn = (line) => reporter.note(safeText(line));
  const controller = new AbortController();
  const stopSignals = io.handleSignals ? installSignalHandlers(controller, reporter) : () => undefined;
  const onExternalAbort = (): void => controller.abort(io.signal?.reason);
  if (io.signal?.aborted) onExternalAbort();
  else io.signal?.addEventListener("abort", onExternalAbort, { once: true });

  let result: SuiteResult;
  let incomplete: string | null = null;
  try {
    const ran = await runner({
      hooks: recording ? recording.hooks(reporter.hooks()) : reporter.hooks(),
      runId: recording?.runId ?? null,
      selector,
      signal: controller.signal,
      defaultTimeout,
      logger,
      note: (line) => reporter.note(safeText(line)),
      status: (text) => reporter.status(text),
    });
    result = ran.suite;
    incomplete = ran.incomplete ?? null;
  } catch (err) {
    // The run never produced a report (the broker unreachable, ...): its record says so.
    if (recording) await recording.abandon();
    throw err;
  } finally {
    if (recording) recording.warn = (line) => void io.stderr.write(`${safeText(line)}\n`);
    reporter.stop();
    stopSignals();
    io.signal?.removeEventListener("abort", onExternalAbort);
  }

  printSummary(out, result, { color: Boolean((out as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR });
  if (incomplete) out.write(`run incomplete: ${safeText(incomplete)}\n`);
  else if (result.cancelled) out.write(`run cancelled: ${result.skipped} case${result.skipped === 1 ? "" : "s"} not run\n`);
  const gate = recording ? await recording.finish(result, incomplete !== null, out) : null;
  let reportFailed = false;
  if (flags.jsonOutput) reportFailed = !(await writeReportAnnounced(io, "json", flags.jsonOutput, jsonReportText(result.toJSON()))) || reportFailed;
  if (flags.junit) reportFailed = !(await writeReportAnnounced(io, "junit", flags.junit, toJUnitXml(result, suite.name))) || reportFailed;
  const code = exitCodeFor(result, { reportFailed, incomplete: incomplete !== null });
  // --fail-on-regression: a case that passed in the last run on this branch fails now, even when a pass threshold is met.
  return code === ExitCode.Ok && gate && gate.regressions.length > 0 ? ExitCode.Failed : code;
}

/** How a run is recorded in the results store (with `--db`). */
interface RecordAs {
  mode: RunMode;
  /** A resumed distributed run: its record is reopened, not refused. */
  resume?: boolean;
  /** The run id when it is fixed before the run (a resumed run). */
  runId?: string | null;
  /** A new run id of the mode's kind. */
  newRunId?: () => string;
  /** `cli(cases, { db })` (else `$EVALFLEET_DB`): the store when `--db` is not given. */
  db?: DbOption | null;
}

/** What a runner gets from the CLI: presentation hooks, the selection, the cancel signal. */
interface RunnerContext {
  hooks: SuiteHooks;
  /** The run id fixed by the CLI (a recorded run), or null for the runner's default. */
  runId: string | null;
  selector: { name: string[] | null; tag: string[] | null; set: string[] | null };
  signal: AbortSignal;
  /** Seconds, resolved: flag, suite, 120. */
  defaultTimeout: number;
  logger: Logger;
  /** A one-line note above the progress display. */
  note: (line: string) => void;
  /** Extra text in the live display. */
  status: (text: string) => void;
}

/** Runs the selected cases one way or another (inline, thread pool, NATS). */
type Runner = (ctx: RunnerContext) => Promise<{ suite: SuiteResult; incomplete?: string | null }>;

function inlineRunner(suite: LoadedSuite, flags: RunFlags): Runner {
  return async (ctx) => ({
    suite: await runCases(suite.cases, {
      ...ctx.hooks,
      ...ctx.selector,
      signal: ctx.signal,
      runId: ctx.runId ?? flags.runId ?? null,
      logger: ctx.logger,
      defaultTimeout: ctx.defaultTimeout,
      judgeModel: suite.judgeModel,
      concurrency: flags.concurrency ?? 1,
      evalSets: suite.evalSets ?? null,
      repeat: flags.repeat,
      passThreshold: flags.passThreshold ?? suite.passThreshold ?? null,
      mcpClients: suite.mcpClients,
      onWarning: warnOnce(ctx.note),
    }),
  });
}

/** Prints each distinct warning once (every worker thread reports the same failed MCP connection). */
function warnOnce(note: (line: string) => void): (message: string) => void {
  const seen = new Set<string>();
  return (message) => {
    if (seen.has(message)) return;
    seen.add(message);
    note(`warning: ${message}`);
  };
}

function poolRunner(suite: LoadedSuite, flags: RunFlags): Runner {
  return async (ctx) => ({
    suite: await runSuiteLocal(suite, {
      ...ctx.hooks,
      ...ctx.selector,
      signal: ctx.signal,
      runId: ctx.runId ?? flags.runId ?? null,
      logger: ctx.logger,
      defaultTimeout: ctx.defaultTimeout,
      concurrency: flags.concurrency,
      threads: flags.threads,
      graceSeconds: flags.grace,
      threadMemoryMb: flags.threadMemory ?? null,
      logLevel: flags.logLevel,
      onWarning: warnOnce(ctx.note),
      repeat: flags.repeat,
      // undefined: the suite's threshold applies.
      passThreshold: flags.passThreshold,
    }),
  });
}

async function writeReportAnnounced(io: ResolvedIO, kind: "json" | "junit", path: string, text: string): Promise<boolean> {
  try {
    await writeReport(path, text);
    io.stdout.write(`${kind} output: ${safeText(path)}\n`);
    return true;
  } catch (err) {
    io.stderr.write(`error: cannot write ${kind} output to ${safeText(path)}: ${safeText(errorMessage(err))}\n`);
    return false;
  }
}

/** First SIGINT/SIGTERM: cancel gracefully (teardowns run, reports are written). Second: exit at once (130). */
function installSignalHandlers(controller: AbortController, reporter: ConsoleReporter): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      reporter.stop();
      process.exit(130);
    }
    reporter.note(`${signal}: cancelling: in-flight cases are aborted and torn down, unrun cases are skipped (press Ctrl-C again to exit now)`);
    controller.abort(new DOMException(`received ${signal}`, "AbortError"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function parseSeconds(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${flag} must be a number of seconds >= 0, got '${value}'`);
    return n;
  };
}

function parseWhole(flag: string, min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min) throw new InvalidArgumentError(`${flag} must be a whole number >= ${min}, got '${value}'`);
    return n;
  };
}

function parseFraction(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\s*(\d+\.?\d*|\.\d+)\s*$/.test(value) || n < 0 || n > 1) throw new InvalidArgumentError(`${flag} must be a fraction between 0 and 1 (0.95 for 95%), got '${value}'`);
    return n;
  };
}

/** How many case names `no cases selected` lists. */
const AVAILABLE_NAMES_SHOWN = 100;

/** Exit code of an error that stopped a command before it produced a report. */
function exitCodeOfError(err: unknown): number {
  if (!(err instanceof EvalfleetError)) return ExitCode.Failed;
  switch (err.code) {
    case ErrorCode.Usage:
    case ErrorCode.RunNotFound:
    case ErrorCode.RunExists:
    case ErrorCode.SuiteMismatch:
    case ErrorCode.SuiteInvalid:
    case ErrorCode.SuiteLoadFailed:
    case ErrorCode.SuiteNotFound:
    case ErrorCode.StoreUrlInvalid:
    case ErrorCode.StoreUnavailable:
    case ErrorCode.StoreSchema:
    case ErrorCode.DatasetInvalid:
      return ExitCode.Usage;
    case ErrorCode.BrokerUnreachable:
    case ErrorCode.BrokerConfig:
      return ExitCode.Incomplete;
    default:
      return ExitCode.Failed;
  }
}

/** Flags of the NATS connection, shared by every distributed command. */
interface NatsCliFlags extends NatsFlags {
  logLevel: string;
}

function addNatsFlags(cmd: Command): void {
  cmd
    .option("--nats <url>", "NATS server URL(s), comma-separated (default $NATS_URL, then nats://127.0.0.1:4222)")
    .option("--nats-token <token>", "authenticate with a token (default $NATS_TOKEN)")
    .option("--nats-user <user>", "authenticate with a user (default $NATS_USER)")
    .option("--nats-password <password>", "the user's password (default $NATS_PASSWORD)")
    .option("--nats-nkey <file>", "authenticate with an NKey seed file (default $NATS_NKEY)")
    .option("--nats-creds <file>", "authenticate with a .creds file (default $NATS_CREDS)")
    .option("--nats-ca <file>", "TLS: CA certificates (default $NATS_CA)")
    .option("--nats-cert <file>", "TLS: client certificate (default $NATS_CERT)")
    .option("--nats-key <file>", "TLS: client key (default $NATS_KEY)")
    .option("--nats-inbox-prefix <prefix>", "prefix of this client's reply subjects, for servers that confine each user to its own (default $NATS_INBOX_PREFIX, else _INBOX)");
}

interface CoordinatorFlags extends RunFlags, NatsCliFlags {
  waitForWorkers: number;
  maxAttempts: number;
  deadline?: number;
  ackWait: number;
  cancelGrace: number;
  brokerTimeout: number;
  /** `coordinator run` only: resume the run when its id already exists (a replaced Job pod). */
  resumeExisting?: boolean;
  /** `coordinator run` only: what SIGTERM does. */
  onSigterm?: "cancel" | "leave";
}

interface WorkerFlags extends NatsCliFlags {
  threads?: number;
  concurrency: number;
  run?: string;
  exitWhenIdle?: number;
  grace: number;
  drain: number;
  threadMemory?: number;
  httpPort?: number;
  httpHost: string;
}

function distributedRunner(suite: LoadedSuite, flags: CoordinatorFlags, io: ResolvedIO, resumeRunId: string | null): Runner {
  return async (ctx) => {
    let announced: string | null = null;
    const options: DistributedRunOptions = {
      ...ctx.hooks,
      ...ctx.selector,
      nats: natsSettingsFrom(flags),
      runId: resumeRunId ?? ctx.runId ?? flags.runId ?? null,
      defaultTimeout: ctx.defaultTimeout,
      waitForWorkersSeconds: flags.waitForWorkers,
      maxAttempts: flags.maxAttempts,
      deadlineSeconds: flags.deadline ?? null,
      ackWaitSeconds: flags.ackWait,
      cancelGraceSeconds: flags.cancelGrace,
      brokerLossSeconds: flags.brokerTimeout,
      forwardEvents: Boolean(flags.verbose),
      repeat: flags.repeat,
      passThreshold: flags.passThreshold,
      signal: ctx.signal,
      logger: ctx.logger,
      onRunId: (id) => {
        // A run resumed after `--resume-existing` found its id taken is announced once.
        if (announced === id) return;
        announced = id;
        io.stdout.write(`run id: ${id}\n`);
      },
      onNote: ctx.note,
      onWorkers: (busy, joined) => ctx.status(`workers ${busy.size} busy of ${joined}${busy.size ? ` (${[...busy].map(([w, n]) => `${w}: ${n}`).slice(0, 4).join(", ")}${busy.size > 4 ? ", ..." : ""})` : ""}`),
    };
    const outcome = resumeRunId
      ? await resumeDistributed(suite, resumeRunId, options)
      : await runDistributed(suite, options).catch((err: unknown) => {
          if (flags.resumeExisting && options.runId && err instanceof EvalfleetError && err.code === ErrorCode.RunExists) {
            ctx.note(`run ${options.runId} exists: resuming it (--resume-existing)`);
            return resumeDistributed(suite, options.runId, options);
          }
          throw err;
        });
    return { suite: outcome.suite, incomplete: outcome.incomplete };
  };
}

function addDistributedCommands(program: Command, io: ResolvedIO, setCode: (code: number) => void): void {
  const coordinator = program.command("coordinator").description("Run a suite across worker machines on NATS JetStream, and manage runs");

  const run = coordinator
    .command("run")
    .description("Publish the selected cases of a suite and collect one ordered report")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(run, DEFAULT_TIMEOUT_SECONDS);
  addRunPolicyFlags(run);
  addCoordinatorFlags(run);
  addStoreFlags(run);
  run.option("--run-id <id>", "run id (default $EVALFLEET_RUN_ID, else <$EVALFLEET_RUN_PREFIX>-<trailing number of $EVALFLEET_JOB_NAME>, else a new unique id; printed first)");
  run.option("--resume-existing", "when the run id already exists, resume that run instead of failing (a replaced Kubernetes Job pod; default $EVALFLEET_RESUME_EXISTING)");
  run.addOption(
    new Option("--on-sigterm <action>", "SIGTERM cancels the run, or leaves it for a replacement to resume (exit 143)").choices(["cancel", "leave"]).env("EVALFLEET_ON_SIGTERM").default("cancel"),
  );
  run.action(async (suitePath: string | undefined, flags: CoordinatorFlags) => {
    const job: CoordinatorFlags = {
      ...flags,
      runId: flags.runId ?? runIdFromEnvironment() ?? undefined,
      resumeExisting: flags.resumeExisting || booleanFromEnvironment("EVALFLEET_RESUME_EXISTING"),
    };
    const stopLeaving = job.onSigterm === "leave" && io.handleSignals ? leaveRunOnSigterm((line) => io.stdout.write(`${safeText(line)}\n`), () => job.runId ?? null) : () => undefined;
    try {
      setCode(await withSuite(suitePath, io, (suite) => executeRun(suite, job, io, distributedRunner(suite, job, io, null), { mode: "distributed", resume: Boolean(job.resumeExisting), newRunId })));
    } finally {
      stopLeaving();
    }
  });

  const resume = coordinator
    .command("resume")
    .description("Take over a run whose coordinator died: rebuild it from NATS and finish it (nothing with a result runs again)")
    .argument("<run-id>", "the run to resume")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(resume, DEFAULT_TIMEOUT_SECONDS, { list: false });
  // A resumed run keeps its repeat count (its manifest's); its threshold may be overridden.
  addRunPolicyFlags(resume, { repeat: false });
  addStoreFlags(resume);
  addCoordinatorFlags(resume);
  resume.action(async (runId: string, suitePath: string | undefined, flags: CoordinatorFlags) => {
    setCode(await withSuite(suitePath, io, (suite) => executeRun(suite, { ...flags, name: undefined, tag: undefined, set: undefined }, io, distributedRunner(suite, flags, io, runId), { mode: "distributed", resume: true, runId })));
  });

  const cancel = coordinator.command("cancel").description("Cancel a run from any machine").argument("<run-id>", "the run to cancel");
  addNatsFlags(cancel);
  cancel.option("--reason <text>", "why (recorded in the report)", "cancelled from the command line");
  cancel.action(async (runId: string, flags: NatsCliFlags & { reason: string }) => {
    const broker = await brokerFor(flags);
    try {
      await readManifest(broker, assertRunId(runId));
      const state = await readRunState(broker, runId);
      if (state && (state.phase === "completed" || state.phase === "cancelled")) {
        io.stdout.write(`run ${runId} is already ${state.phase}\n`);
        setCode(ExitCode.Ok);
        return;
      }
      const created = await requestCancel(broker, runId, `evalfleet coordinator cancel (${processLabel()})`, flags.reason);
      io.stdout.write(created ? `cancel requested for run ${runId}: queued cases purged; the coordinator finalises the report\n` : `run ${runId} was already being cancelled\n`);
      setCode(ExitCode.Ok);
    } finally {
      await broker.nc.close().catch(() => undefined);
    }
  });

  const status = coordinator.command("status").description("Progress of a run, from any machine").argument("<run-id>", "the run");
  addNatsFlags(status);
  status.option("--json", "print the status as JSON");
  status.action(async (runId: string, flags: NatsCliFlags & { json?: boolean }) => {
    const broker = await brokerFor(flags);
    try {
      const s = await runStatus(broker, assertRunId(runId));
      io.stdout.write(flags.json ? `${JSON.stringify(s, null, 2)}\n` : formatStatus(s));
      setCode(ExitCode.Ok);
    } finally {
      await broker.nc.close().catch(() => undefined);
    }
  });

  const worker = program
    .command("worker")
    .description("Serve cases from NATS JetStream on a pool of worker threads")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addNatsFlags(worker);
  worker
    .addOption(new Option("--threads <n>", "worker threads (default min(CPUs, concurrency))").argParser(parseWhole("--threads", 1)))
    .addOption(new Option("--concurrency <n>", "cases in flight in this process").argParser(parseWhole("--concurrency", 1)).default(4))
    .option("--run <id>", "serve only this run and exit 0 when it is finished (Kubernetes Jobs); default $EVALFLEET_RUN_ID or the run id derived from $EVALFLEET_JOB_NAME, else every run of this suite, forever")
    .addOption(new Option("--exit-when-idle <seconds>", "exit 0 after this long without a case").argParser(parseSeconds("--exit-when-idle")))
    .addOption(new Option("--grace <seconds>", "seconds past a case deadline before a stuck thread is terminated").argParser(parseSeconds("--grace")).default(DEFAULT_GRACE_SECONDS))
    .addOption(new Option("--drain <seconds>", "on SIGTERM, seconds in-flight cases get to finish before they are handed back").argParser(parseSeconds("--drain")).default(20))
    .addOption(new Option("--thread-memory <mb>", "per-thread heap limit in MB").argParser(parseWhole("--thread-memory", 16)))
    .addOption(new Option("--log-level <level>", "structured log level on stderr").choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"));
  addHttpFlags(worker, "serve /healthz, /readyz and /metrics on this port");
  worker.action(async (suitePath: string | undefined, flags: WorkerFlags) => {
    setCode(
      await withSuite(suitePath, io, async (suite) => {
        const logger = createLogger({ level: flags.logLevel, name: "evalfleet.worker" });
        const runId = flags.run ? assertRunId(flags.run) : runIdFromEnvironment(); 
        const service = new WorkerService({
          suite,
          nats: natsSettingsFrom(flags),
          runId,
          http: flags.httpPort === undefined ? null : { port: flags.httpPort, host: flags.httpHost },
          threads: flags.threads,
          concurrency: flags.concurrency,
          graceSeconds: flags.grace,
          drainSeconds: flags.drain,
          threadMemoryMb: flags.threadMemory ?? null,
          exitWhenIdleSeconds: flags.exitWhenIdle ?? null,
          logLevel: flags.logLevel,
          logger,
        });
        const onSignal = (signal: NodeJS.Signals): void => {
          if (service.state === "draining") process.exit(1);
          service.stop(`received ${signal}`);
        };
        if (io.handleSignals) {
          process.on("SIGTERM", onSignal);
          process.on("SIGINT", onSignal);
        }
        try {
          logger.info({ suite: suite.path, fingerprint: suite.fingerprint.slice(0, 12), run: runId ?? "every run of this suite" }, "worker starting");
          const exit = await service.run();
          logger.info({ code: exit.code, reason: exit.reason }, "worker stopped");
          if (exit.code !== 0) io.stderr.write(`worker: ${safeText(exit.reason)}\n`);
          return exit.code;
        } finally {
          process.off("SIGTERM", onSignal);
          process.off("SIGINT", onSignal);
        }
      }),
    );
  });
}

/** `--http-port` / `--http-host`, with environment fallbacks (`EVALFLEET_HTTP_PORT`, `EVALFLEET_HTTP_HOST`). */
function addHttpFlags(cmd: Command, what: string, required = false): void {
  cmd
    .addOption(new Option("--http-port <port>", `${what} (0 picks a free port)${required ? "; required" : "; default: no HTTP endpoint"}`).argParser(parseWhole("--http-port", 0)).env("EVALFLEET_HTTP_PORT"))
    .addOption(new Option("--http-host <host>", "interface the HTTP endpoint binds").env("EVALFLEET_HTTP_HOST").default("0.0.0.0"));
}

/** `evalfleet queue-metrics`: the queue depth of a suite's runs for autoscalers (KEDA metrics-api, Prometheus). */
function addQueueMetricsCommand(program: Command, io: ResolvedIO, setCode: (code: number) => void): void {
  const cmd = program
    .command("queue-metrics")
    .description("Serve how many cases of this suite's runs are queued and in flight, for autoscalers: /queue (JSON), /metrics (Prometheus)")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addNatsFlags(cmd);
  cmd.addOption(new Option("--log-level <level>", "structured log level on stderr").choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"));
  addHttpFlags(cmd, "serve /queue, /metrics, /healthz and /readyz on this port", true);
  cmd.action(async (suitePath: string | undefined, flags: NatsCliFlags & { httpPort?: number; httpHost: string }) => {
    setCode(
      await withSuite(suitePath, io, async (suite) => {
        if (flags.httpPort === undefined) throw new EvalfleetError(ErrorCode.Usage, "queue-metrics needs --http-port (or EVALFLEET_HTTP_PORT)", { field: "httpPort" });
        const logger = createLogger({ level: flags.logLevel, name: "evalfleet.queue-metrics" });
        const service = new QueueMetricsService({ suite, nats: natsSettingsFrom(flags), http: { port: flags.httpPort, host: flags.httpHost }, logger });
        const onSignal = (): void => service.stop();
        if (io.handleSignals) {
          process.on("SIGTERM", onSignal);
          process.on("SIGINT", onSignal);
        }
        try {
          await service.run();
          return ExitCode.Ok;
        } finally {
          process.off("SIGTERM", onSignal);
          process.off("SIGINT", onSignal);
        }
      }),
    );
  });
}

function addCoordinatorFlags(cmd: Command): void {
  addNatsFlags(cmd);
  cmd
    .addOption(new Option("--wait-for-workers <seconds>", "give up (exit 3) when no compatible worker joins within this long").argParser(parseSeconds("--wait-for-workers")).default(60))
    .addOption(new Option("--max-attempts <n>", "deliveries per case before it is recorded as lost").argParser(parseWhole("--max-attempts", 1)).default(3))
    .addOption(new Option("--deadline <seconds>", "whole-run budget: when it passes, the run is cancelled (exit 3)").argParser(parseSeconds("--deadline")))
    .addOption(new Option("--ack-wait <seconds>", "seconds before an unacknowledged case is redelivered (workers extend it while a case runs)").argParser(parseSeconds("--ack-wait")).default(30))
    .addOption(new Option("--cancel-grace <seconds>", "after a cancel, seconds in-flight cases get to report").argParser(parseSeconds("--cancel-grace")).default(15))
    .addOption(new Option("--broker-timeout <seconds>", "give up (exit 3) when NATS is unreachable for this long").argParser(parseSeconds("--broker-timeout")).default(30));
}

async function brokerFor(flags: NatsFlags): Promise<Broker> {
  const nc = await connectNats(natsSettingsFrom(flags), { name: `evalfleet-cli/${processLabel()}`, reconnectForever: false });
  try {
    return await openBroker(nc);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

function formatStatus(s: RunStatus): string {
  const lines = [
    `run ${s.runId}: ${s.phase}${s.cancel ? ` (cancel: ${s.cancel})` : ""}`,
    `suite ${s.suite} (fingerprint ${s.fingerprint.slice(0, 12)}), created ${s.createdAt}`,
    `selected ${s.selected}  done ${s.done}  passed ${s.passed}  failed ${s.failed}  running ${s.running}  queued ${s.queued}`,
    `workers ${s.workers.length}${s.workers.length ? `: ${s.workers.map((w) => `${w.workerId} (${w.busy}/${w.slots} busy${w.accepted ? "" : `, refused: ${w.reason}`})`).join(", ")}` : ""}`,
  ];
  return lines.map(safeText).join("\n") + "\n";
}
