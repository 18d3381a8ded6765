import type { Writable } from "node:stream";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import type { Case } from "../shared/case.ts";
import type { JudgeModel } from "../shared/judge-model.ts";
import type { SuiteResult } from "../shared/result.ts";
import { SuiteLoadError, EvalfleetError, errorMessage } from "../shared/errors.ts";
import { createLogger, type Logger } from "../shared/logger.ts";
import { captureDuringLoad, loadSuite, type LoadedSuite } from "../shared/suite.ts";
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
}

/** Flags common to `evalfleet run`, `evalfleet list` and `cli()`. */
interface RunFlags {
  name?: string[];
  tag?: string[];
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
 * Runs `cases` as a command line from inside a suite file and returns the exit code:
 * `process.exitCode = await cli(CASES)`. When evalfleet itself loads the file (a worker thread,
 * or `evalfleet run file.ts`), it only registers the cases and returns 0 without running anything.
 */
export async function cli(cases: readonly Case[], options: CliOptions = {}): Promise<number> {
  if (captureDuringLoad(cases, options)) return ExitCode.Ok;
  const io = resolveIO(options);
  const program = new Command("evals")
    .description("Run the eval suite, or a subset with --name/--tag.")
    .helpOption("-h, --help", "Show this help");
  addSelectionAndReportFlags(program, options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS);
  program.addOption(new Option("--concurrency <n>", "Cases in flight at once (inline, in this thread)").argParser(parseWhole("--concurrency", 1)).default(1));
  let code: number = ExitCode.Usage;
  program.action(async (flags: RunFlags) => {
    const suite = { name: "evals", path: "", cases, judgeModel: options.judgeModel ?? null, defaultTimeout: options.defaultTimeout ?? null, fingerprint: "" } as LoadedSuite;
    code = await executeRun(suite, flags, io, { inline: true });
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
  addEngineFlags(run);
  run.action(async (suitePath: string | undefined, flags: RunFlags) => {
    code = await withSuite(suitePath, out, (suite) => executeRun(suite, flags, out, { inline: flags.threads === 0 }));
  });

  const list = program
    .command("list")
    .description("List the selected cases of a suite file without running them")
    .argument("[suite]", "suite file; default $EVALFLEET_SUITE");
  addSelectionAndReportFlags(list, DEFAULT_TIMEOUT_SECONDS, { list: false });
  list.action(async (suitePath: string | undefined, flags: RunFlags) => {
    code = await withSuite(suitePath, out, (suite) => executeRun(suite, { ...flags, list: true }, out, { inline: true }));
  });

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
    return err instanceof EvalfleetError && err.code === "USAGE" ? ExitCode.Usage : ExitCode.Failed;
  }
}

function addSelectionAndReportFlags(cmd: Command, defaultTimeout: number, opts: { list?: boolean } = {}): void {
  cmd
    .option("--name <name>", "Run only the case with this name (repeatable)", collect)
    .option("--tag <tag>", "Run only cases with this tag (repeatable: a case matches any)", collect)
    .addOption(new Option("--timeout <seconds>", "Default per-case timeout in seconds").argParser(parseSeconds("--timeout")).default(undefined, String(defaultTimeout)))
    .option("--json-output <path>", "Write machine-readable JSON results")
    .option("--junit <path>", "Write JUnit XML results (one testcase per case)");
  if (opts.list !== false) cmd.option("--list", "List selected cases without running them");
  cmd.option("-v, --verbose", "Print each case's response, tools and verdicts").addOption(
    new Option("--log-level <level>", "Structured log level on stderr").choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("warn"),
  );
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
async function executeRun(suite: LoadedSuite, flags: RunFlags, io: ResolvedIO, mode: { inline: boolean }): Promise<number> {
  const out = io.stdout;
  const selector = { name: flags.name ?? null, tag: flags.tag ?? null };
  const defaultTimeout = flags.timeout ?? suite.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
  const selected = selectCases(suite.cases, selector);
  if (selected.length === 0) {
    io.stderr.write(`no cases selected (${safeText(describeSelector(selector))})\n  available: ${suite.cases.map((c) => safeText(c.name)).join(", ")}\n`);
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

  const logger: Logger = createLogger({ level: flags.logLevel, name: "evalfleet" });
  const reporter = new ConsoleReporter({ out, total: selected.length, verbose: flags.verbose });
  const controller = new AbortController();
  const stopSignals = io.handleSignals ? installSignalHandlers(controller, reporter) : () => undefined;
  const onExternalAbort = (): void => controller.abort(io.signal?.reason);
  if (io.signal?.aborted) onExternalAbort();
  else io.signal?.addEventListener("abort", onExternalAbort, { once: true });

  let result: SuiteResult;
  try {
    const hooks: SuiteHooks = reporter.hooks();
    const common = { ...hooks, ...selector, signal: controller.signal, runId: flags.runId ?? null, logger };
    result = mode.inline
      ? await runCases(suite.cases, { ...common, defaultTimeout, judgeModel: suite.judgeModel, concurrency: flags.concurrency ?? 1 })
      : await runSuiteLocal(suite, {
          ...common,
          defaultTimeout,
          concurrency: flags.concurrency,
          threads: flags.threads,
          graceSeconds: flags.grace,
          threadMemoryMb: flags.threadMemory ?? null,
          logLevel: flags.logLevel,
        });
  } finally {
    reporter.stop();
    stopSignals();
    io.signal?.removeEventListener("abort", onExternalAbort);
  }

  printSummary(out, result, { color: Boolean((out as { isTTY?: boolean }).isTTY) && !process.env.NO_COLOR });
  if (result.cancelled) out.write(`run cancelled: ${result.skipped} case${result.skipped === 1 ? "" : "s"} not run\n`);
  let reportFailed = false;
  if (flags.jsonOutput) reportFailed = !(await writeReportAnnounced(io, "json", flags.jsonOutput, jsonReportText(result.toJSON()))) || reportFailed;
  if (flags.junit) reportFailed = !(await writeReportAnnounced(io, "junit", flags.junit, toJUnitXml(result, suite.name))) || reportFailed;
  return exitCodeFor(result, { reportFailed });
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
