import { Option, type Command } from "commander";
import { collect, parseFraction, parseOpenFraction, parseOrder, parsePositiveNumber, parsePositiveSeconds, parseRepeat, parseSeconds, parseWhole } from "./flag-parsers.ts";
import {
  DEFAULT_ACK_WAIT_SECONDS,
  DEFAULT_BROKER_TIMEOUT_SECONDS,
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_CANCEL_GRACE_SECONDS,
  DEFAULT_CANCEL_REASON,
  DEFAULT_CONCURRENCY,
  DEFAULT_CONFIDENCE,
  DEFAULT_DRAIN_SECONDS,
  DEFAULT_GRACE_SECONDS,
  DEFAULT_HISTORY_RUNS,
  DEFAULT_HTTP_HOST,
  DEFAULT_INLINE_CONCURRENCY,
  DEFAULT_LOAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_OUTPUT_KB,
  DEFAULT_MAX_TRANSCRIPT_KB,
  DEFAULT_REGRESSION_ALPHA,
  DEFAULT_RETRIES,
  DEFAULT_RUN_LOG_LEVEL,
  DEFAULT_SERVICE_LOG_LEVEL,
  DEFAULT_SETUP_TIMEOUT_SECONDS,
  DEFAULT_STORE_TIMEOUT_SECONDS,
  DEFAULT_TEARDOWN_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  DEFAULT_WAIT_FOR_WORKERS_SECONDS,
  resolveDefaultTimeout,
} from "../../shared/defaults.ts";
import { LOG_LEVELS } from "../../shared/log-levels.ts";
import { RESPONSE_CACHE_DIR } from "../../shared/response-cache-dir.ts";
import { SCORING_METHODS } from "../../shared/datasets/scoring-methods.ts";

/**
 * The option builders of every command: what each flag is called, says in `--help`, accepts and
 * defaults to. With coordinator/cli/config.ts, the command line's config module: commander's
 * defaults (from shared/defaults.ts) are for the `--help` text and fill in the flags the config
 * then validates; nothing past the config applies a default of its own. A bad value is refused by
 * commander with its parser's message (flag-parsers.ts, exit 2); the parsed shapes are in
 * flag-types.ts. Only commander, the defaults and light vocabularies are imported here:
 * `evalfleet --help` loads this file and nothing heavier.
 */

/**
 * `--record DIR`, `--replay DIR` and `--record-missing`: record and replay each case's HTTP exchanges
 * and wrapped tool calls (docs/iterating.md). `fleet`: a distributed run, whose cassettes live in
 * the fleet's bucket (`--record nats`), where every worker reaches them.
 */
export function addCassetteFlags(cmd: Command, opts: { fleet?: boolean } = {}): void {
  if (opts.fleet) {
    cmd
      .option("--record <nats>", "record every case's HTTP exchanges (context.fetch, the built-in model clients) and context.tool calls in the fleet's EVALFLEET_CASSETTES bucket (the only value: nats), one cassette per case and trial, redacted")
      .option("--replay <nats>", "answer every case's requests from the fleet's cassettes (nats) without sending them, on whichever worker runs it; a request a cassette lacks fails the case")
      .option("--record-missing", "with --replay nats: send and record the requests a cassette lacks instead of failing the case");
    return;
  }
  cmd
    .option("--record <dir>", "record every case's HTTP exchanges (context.fetch, the built-in model clients) and context.tool calls in DIR, one JSON cassette per case and trial, redacted")
    .option("--replay <dir>", "answer every case's requests from the cassettes in DIR without sending them; a request a cassette lacks fails the case")
    .option("--record-missing", "with --replay: send and record the requests a cassette lacks instead of failing the case");
}

/** `--cache [mode]` and `--cache-ttl`: the response cache of the built-in model clients. `shared: false`: a local run, whose help names only the local mode. */
export function addCacheFlags(cmd: Command, opts: { shared?: boolean } = {}): void {
  cmd
    .option(
      "--cache [mode]",
      opts.shared === false
        ? `answer repeated model calls of the built-in judge and agent from a cache in ${RESPONSE_CACHE_DIR} (local, the only mode here; only successful answers are kept; evalfleet cache clear empties it)`
        : `answer repeated model calls of the built-in judge and agent from a cache: each worker's ${RESPONSE_CACHE_DIR} (--cache), or the fleet's bucket on NATS (--cache shared)`,
    )
    .option("--cache-ttl <duration>", `how long a cached answer stays good: 7d, 12h, 30m, 45s or seconds (default: ${DEFAULT_CACHE_TTL_SECONDS / 86400}d)`);
}

/** The `--log-level` flag; `capitalized` keeps the run commands' help text as it always was. */
function logLevelOption(defaultLevel: string, capitalized: boolean): Option {
  return new Option("--log-level <level>", `${capitalized ? "Structured" : "structured"} log level on stderr`).choices([...LOG_LEVELS]).default(defaultLevel);
}

/**
 * Selection (`--name`, `--tag`, `--set`), `--timeout` and the reports, then `--list`, `-v` and
 * `--log-level`. `list: false` leaves out `--list` (`evalfleet list`, `coordinator resume`);
 * `running: false` leaves out what only a run uses (`--junit`, `-v`, `--log-level`: `evalfleet list`).
 * `script` when no suite file can set the default timeout (`cli(cases)`), with the default the script gives (null: none).
 */
export function addSelectionAndReportFlags(cmd: Command, opts: { list?: boolean; running?: boolean; script?: { defaultTimeout: number | null | undefined } } = {}): void {
  const running = opts.running !== false;
  // No commander default: an unset --timeout lets the suite's defaultTimeout apply, so the help text says the chain.
  const timeoutDefault = opts.script ? `${resolveDefaultTimeout(opts.script.defaultTimeout)}` : `the suite's defaultTimeout, else ${DEFAULT_TIMEOUT_SECONDS}`;
  cmd
    .option("--name <name>", "Run only the case with this name (repeatable)", collect)
    .option("--tag <tag>", "Run only cases with this tag (repeatable: a case matches any)", collect)
    .option("--set <name>", "Run only the cases of this eval set (repeatable: a case matches any); ANDed with --name and --tag", collect)
    .addOption(new Option("--timeout <seconds>", `Default per-case timeout in seconds (default: ${timeoutDefault})`).argParser(parseSeconds("--timeout")))
    .option("--json-output <path>", "Write machine-readable JSON results");
  if (running) cmd.option("--junit <path>", "Write JUnit XML results (one testcase per case)");
  if (opts.list !== false) cmd.option("--list", "List selected cases without running them");
  if (running) cmd.option("-v, --verbose", "Print each case's response, tools and verdicts").addOption(logLevelOption(DEFAULT_RUN_LOG_LEVEL, true));
  if (running) addBoundFlags(cmd);
}

/** The bounds of a run beside its timeout: `--setup-timeout`, `--teardown-timeout`, `--max-output-kb`. */
function addBoundFlags(cmd: Command): void {
  cmd
    .addOption(new Option("--setup-timeout <seconds>", "Bound on each case's setup hook in seconds (outside the timeout)").argParser(parseSeconds("--setup-timeout")).default(undefined, String(DEFAULT_SETUP_TIMEOUT_SECONDS)))
    .addOption(new Option("--teardown-timeout <seconds>", "Bound on each case's teardown hook in seconds (outside the timeout)").argParser(parseSeconds("--teardown-timeout")).default(undefined, String(DEFAULT_TEARDOWN_TIMEOUT_SECONDS)))
    .addOption(new Option("--max-output-kb <kb>", "Largest case output kept in the results, in KiB (longer output is cut with a marker)").argParser(parseWhole("--max-output-kb", 1)).default(DEFAULT_MAX_OUTPUT_KB));
}

/** `--load-timeout`: the bound on loading the suite file, on every command that loads one. */
export function addLoadTimeoutFlag(cmd: Command): void {
  cmd.addOption(
    new Option("--load-timeout <seconds>", "Give up (exit 2) when the suite file has not loaded within this long (a top-level await that never settles)")
      .argParser(parsePositiveSeconds("--load-timeout"))
      .default(DEFAULT_LOAD_TIMEOUT_SECONDS),
  );
}

/** `--pass-threshold`, `--case-pass-rate`, `--confidence` and `--repeat`: how a run and a case pass, how sure the report's intervals are, and how often each case runs. */
export function addRunPolicyFlags(cmd: Command, opts: { repeat?: boolean } = {}): void {
  cmd.addOption(
    new Option("--pass-threshold <rate>", "The run passes when at least this fraction (0-1) of the selected cases pass (default: the suite's, else every case)").argParser(parseFraction("--pass-threshold")),
  );
  cmd.addOption(
    new Option("--case-pass-rate <rate>", "With --repeat: a case passes when at least this fraction (0-1) of its trials pass (a case's own passRate wins; default: the suite's casePassRate, else 1, every trial)").argParser(
      parseFraction("--case-pass-rate"),
    ),
  );
  cmd.addOption(new Option("--confidence <level>", "Two-sided confidence of the intervals the report shows, strictly between 0 and 1 (default 0.95)").argParser(parseOpenFraction("--confidence")));
  if (opts.repeat !== false) {
    cmd.addOption(
      new Option(
        "--repeat <n>",
        "Run each case N times; the report gives each case's pass rate and pass@k (a case passes when every run passed, or --case-pass-rate of them). MIN..MAX (3..20): adaptive, MIN runs each, then more up to MAX while a case's interval still holds --case-pass-rate",
      ).argParser(parseRepeat("--repeat")),
    );
  }
}

/**
 * A run in Exulu's terms (`eval_runs`): its name and description, kept in the results store, and
 * what grades it: evaluation functions of the suite applied to every case, a scoring method that
 * replaces the cases' own. `scoring: false` leaves out what a resumed run keeps from its start.
 */
export function addRunDefinitionFlags(cmd: Command, opts: { scoring?: boolean } = {}): void {
  cmd
    .option("--run-name <name>", "Name of the run, kept in the results store (Exulu's eval_runs.name; default: the suite's name)")
    .option("--description <text>", "What the run is for, kept in the results store");
  if (opts.scoring === false) return;
  cmd
    .option("--eval-function <name>", "Grade every selected case with this evaluation function of the suite too (repeatable; each must pass, besides the case's own checks)", collect)
    .addOption(new Option("--scoring-method <method>", "Compare every expected_output with this method instead of the cases' own").choices([...SCORING_METHODS]));
}

/** The thread pool of `evalfleet run`: concurrency, threads, grace, thread memory, and the run id. */
export function addEngineFlags(cmd: Command): void {
  cmd
    .addOption(new Option("--concurrency <n>", "Cases in flight at once").argParser(parseWhole("--concurrency", 1)).default(DEFAULT_CONCURRENCY))
    .addOption(new Option("--threads <n>", "Worker threads (0 runs cases in this thread); default min(CPUs, concurrency)").argParser(parseWhole("--threads", 0)))
    .addOption(new Option("--grace <seconds>", "Seconds past a deadline before a stuck thread is terminated").argParser(parseSeconds("--grace")).default(DEFAULT_GRACE_SECONDS))
    .addOption(new Option("--thread-memory <mb>", "Per-thread heap limit in MB").argParser(parseWhole("--thread-memory", 16)))
    .option("--run-id <id>", "Run id for the report (default: a new UUID)");
}

/**
 * The model providers of a run: `--retries` (not on `coordinator resume`, whose run keeps its
 * own), `--infra-errors-incomplete` and `--limit` (repeatable; provider limits and the quick subset).
 */
export function addProviderFlags(cmd: Command, opts: { retries?: boolean } = {}): void {
  if (opts.retries !== false) {
    cmd.addOption(
      new Option("--retries <n>", "Run a case again up to N times when its failure is the infrastructure's (error_kind infra: a provider's 429/5xx, a lost connection, a judge with no result); backoff 1 s doubling, at most 30 s, within the case's timeout; a failed check is never retried")
        .argParser(parseWhole("--retries", 0))
        .default(DEFAULT_RETRIES),
    );
  }
  cmd
    .option("--infra-errors-incomplete", "Exit 3 (incomplete) instead of 1 when every failed case failed for the infrastructure's sake (error_kind infra)")
    .addOption(new Option("--budget-usd <usd>", "Stop the run once its cases have cost this many US dollars (agent and judge, from the price table; unknown cost counts 0): the rest is skipped, exit 3").argParser(parsePositiveNumber("--budget-usd")))
    .addOption(new Option("--budget-tokens <n>", "Stop the run once its cases have used this many tokens (agent and judge): the rest is skipped, exit 3").argParser(parseWhole("--budget-tokens", 1)))
    .option("--limit <value>", "KEY=rpm:N,tpm:N,concurrency:N: a provider limit shared by every worker of the run (repeatable; also $EVALFLEET_LIMITS, ';'-separated); a bare N runs only the first N selected cases", collect);
}

/**
 * Iterating on a suite: re-runs from the results store (`--rerun-failed`, `--rerun-errors`,
 * `--rerun-incomplete`, `--last-failed`) and quick subsets (`--grep`, `--limit`, `--sample`,
 * `--seed`, `--filter-metadata`). All narrow the selection, ANDed with `--name`/`--tag`/`--set`.
 */
export function addIterateFlags(cmd: Command): void {
  cmd
    .option("--rerun-failed <run-id>", "run only the cases that failed in this recorded run, errors included (needs --db); matched by name and dataset id")
    .option("--rerun-errors <run-id>", "run only the cases that ended with an error in this recorded run (needs --db)")
    .option("--rerun-incomplete <run-id>", "run only the cases a cancelled or crashed recorded run skipped or lost (needs --db)")
    .option("--last-failed", "run only the cases that failed in the newest recorded run of this suite on this git branch (outside git: of this suite) (needs --db)")
    .option("--grep <regex>", "run only the cases whose name matches this regular expression")
    .addOption(new Option("--sample <n>", "run a random N of the selected cases (the seed is printed: --seed draws the same ones again)").argParser(parseWhole("--sample", 1)))
    .addOption(new Option("--seed <n>", "the seed of --sample (default: a new one, printed)").argParser(parseWhole("--seed", 0)))
    .option("--filter-metadata <key=value>", "run only the cases whose metadata has this value (repeatable: the same key ORs, different keys AND; a dotted key reaches into objects)", collect);
}

/**
 * The start order of a run and its estimate: `--order declared|history|random[:SEED]` and
 * `--estimate`; `slots: true` adds `--slots` (`coordinator run`, whose workers the estimate cannot see).
 */
export function addScheduleFlags(cmd: Command, opts: { slots?: boolean } = {}): void {
  cmd
    .addOption(
      new Option("--order <order>", "the order cases start in: history (longest first by the durations recorded in --db; cases without history by their timeout), declared, or random[:SEED] (seed printed); results are reported in declaration order whatever it is (default: history, which is declared without recorded durations)")
        .argParser(parseOrder),
    )
    .option("--estimate", "print the expected duration on this pool, the tokens and the cost from the runs recorded in --db, and how many cases have no history; run nothing (exit 0)");
  if (opts.slots) cmd.addOption(new Option("--slots <n>", "with --estimate: the fleet's slots to play the run on (workers x each worker's --concurrency)").argParser(parseWhole("--slots", 1)).default(DEFAULT_CONCURRENCY));
}

/** `cli(cases)`'s `--concurrency`: cases in flight in this thread, default 1 (Agno's sequential order). */
export function addInlineConcurrencyFlag(cmd: Command): void {
  cmd.addOption(new Option("--concurrency <n>", "Cases in flight at once (inline, in this thread)").argParser(parseWhole("--concurrency", 1)).default(DEFAULT_INLINE_CONCURRENCY));
}

/** Adds `--db`, `--db-timeout` and `--fail-on-regression` to a run command; `env: false` leaves `$EVALFLEET_DB` to the caller. */
export function addStoreFlags(cmd: Command, opts: { env?: boolean } = {}): void {
  const db = new Option("--db <url>", "record the run in a results store: sqlite:PATH (sqlite: alone: .evalfleet/results.db next to the suite) or postgres://USER@HOST/DB (default $EVALFLEET_DB)");
  cmd
    .addOption(opts.env === false ? db : db.env("EVALFLEET_DB"))
    .addOption(new Option("--db-timeout <seconds>", "bound on connecting to the results store, on each write and on the final flush").argParser(parsePositiveSeconds("--db-timeout")).default(DEFAULT_STORE_TIMEOUT_SECONDS))
    .option(
      "--fail-on-regression",
      "exit 1 when the run is significantly worse than the last recorded run of this suite on the same branch (its pass rate, or a case's trials, beyond chance at --regression-alpha), even if a pass threshold is met (needs --db)",
    )
    .addOption(new Option("--regression-alpha <alpha>", "--fail-on-regression's false-alarm rate: two runs of the same agent fail the gate at most this often (default 0.05)").argParser(parseOpenFraction("--regression-alpha", "0.05 for 5%")))
    .option("--baseline <run-id>", "the recorded run --fail-on-regression compares with (or a prefix of its id), instead of the last run of this suite on this branch")
    .option("--quarantine-flaky", "--fail-on-regression reports the cases `evalfleet flaky` calls flaky (over the baseline and the runs before it) without failing on them")
    .addOption(
      new Option("--max-transcript-kb <kb>", "largest full run output (messages, tool calls, member outputs) kept per case in the results store, in KiB; bigger ones are cut, saying so; 0 keeps none")
        .argParser(parseWhole("--max-transcript-kb", 0))
        .default(DEFAULT_MAX_TRANSCRIPT_KB),
    );
}

/** `--db` and `--db-timeout` of the history commands (and `--json` unless `json: false`). */
export function addHistoryReadFlags(cmd: Command, opts: { json?: boolean } = {}): void {
  cmd
    .addOption(new Option("--db <url>", "the results store: sqlite:PATH or postgres://USER@HOST/DB (default $EVALFLEET_DB)").env("EVALFLEET_DB"))
    .addOption(new Option("--db-timeout <seconds>", "bound on connecting and on each query").argParser(parsePositiveSeconds("--db-timeout")).default(DEFAULT_STORE_TIMEOUT_SECONDS));
  if (opts.json !== false) cmd.option("--json", "print JSON instead of a table");
}

/** `compare`'s `--regression-alpha`: the false-alarm rate of its verdict, default 0.05. */
export function regressionAlphaOption(): Option {
  return new Option("--regression-alpha <alpha>", "the false-alarm rate of the verdict: two runs of the same agent are called regressed at most this often")
    .argParser(parseOpenFraction("--regression-alpha", "0.05 for 5%"))
    .default(DEFAULT_REGRESSION_ALPHA);
}

/** `--confidence` of the history commands: the two-sided level of the intervals they show, default 0.95. */
export function historyConfidenceOption(): Option {
  return new Option("--confidence <level>", "two-sided confidence of the intervals shown").argParser(parseOpenFraction("--confidence")).default(DEFAULT_CONFIDENCE);
}

/** `coordinator cancel --reason`: why, recorded in the report; default "cancelled from the command line". */
export function addCancelReasonFlag(cmd: Command): void {
  cmd.option("--reason <text>", "why (recorded in the report)", DEFAULT_CANCEL_REASON);
}

/** A history command's count of runs (`--limit`, `--last`), default {@link DEFAULT_HISTORY_RUNS}. */
export function historyRunsOption(flags: string, description: string, flag: string, min: number): Option {
  return new Option(flags, description).argParser(parseWhole(flag, min)).default(DEFAULT_HISTORY_RUNS);
}

/** The NATS connection flags of every distributed command (the environment fills the gaps). */
export function addNatsFlags(cmd: Command): void {
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

/** The NATS flags and the coordinator's bounds: waiting for workers, attempts, deadline, ack wait, cancel grace, broker loss. */
export function addCoordinatorFlags(cmd: Command): void {
  addNatsFlags(cmd);
  cmd
    .addOption(new Option("--wait-for-workers <seconds>", "give up (exit 3) when no compatible worker joins within this long").argParser(parseSeconds("--wait-for-workers")).default(DEFAULT_WAIT_FOR_WORKERS_SECONDS))
    .addOption(new Option("--max-attempts <n>", "deliveries per case before it is recorded as lost").argParser(parseWhole("--max-attempts", 1)).default(DEFAULT_MAX_ATTEMPTS))
    .addOption(new Option("--deadline <seconds>", "whole-run budget: when it passes, the run is cancelled (exit 3)").argParser(parseSeconds("--deadline")))
    .addOption(new Option("--ack-wait <seconds>", "seconds before an unacknowledged case is redelivered (workers extend it while a case runs)").argParser(parseSeconds("--ack-wait")).default(DEFAULT_ACK_WAIT_SECONDS))
    .addOption(new Option("--cancel-grace <seconds>", "after a cancel, seconds in-flight cases get to report").argParser(parseSeconds("--cancel-grace")).default(DEFAULT_CANCEL_GRACE_SECONDS))
    .addOption(new Option("--broker-timeout <seconds>", "give up (exit 3) when NATS is unreachable for this long").argParser(parseSeconds("--broker-timeout")).default(DEFAULT_BROKER_TIMEOUT_SECONDS));
}

/** The pool, the run to serve, idling, draining and logging of `evalfleet worker`. */
export function addWorkerFlags(cmd: Command): void {
  cmd
    .addOption(new Option("--threads <n>", "worker threads (default min(CPUs, concurrency))").argParser(parseWhole("--threads", 1)))
    .addOption(new Option("--concurrency <n>", "cases in flight in this process").argParser(parseWhole("--concurrency", 1)).default(DEFAULT_CONCURRENCY))
    .option("--run <id>", "serve only this run and exit 0 when it is finished (Kubernetes Jobs); default $EVALFLEET_RUN_ID or the run id derived from $EVALFLEET_JOB_NAME, else every run of this suite, forever")
    .addOption(new Option("--exit-when-idle <seconds>", "exit 0 after this long without a case").argParser(parseSeconds("--exit-when-idle")))
    .addOption(new Option("--grace <seconds>", "seconds past a case deadline before a stuck thread is terminated").argParser(parseSeconds("--grace")).default(DEFAULT_GRACE_SECONDS))
    .addOption(new Option("--drain <seconds>", "on SIGTERM, seconds in-flight cases get to finish before they are handed back").argParser(parseSeconds("--drain")).default(DEFAULT_DRAIN_SECONDS))
    .addOption(new Option("--thread-memory <mb>", "per-thread heap limit in MB").argParser(parseWhole("--thread-memory", 16)));
  addServiceLogLevelFlag(cmd);
}

/** `--log-level` of the standing services (`worker`, `queue-metrics`), default {@link DEFAULT_SERVICE_LOG_LEVEL}. */
export function addServiceLogLevelFlag(cmd: Command): void {
  cmd.addOption(logLevelOption(DEFAULT_SERVICE_LOG_LEVEL, false));
}

/** `--http-port` / `--http-host`, with environment fallbacks (`EVALFLEET_HTTP_PORT`, `EVALFLEET_HTTP_HOST`). */
export function addHttpFlags(cmd: Command, what: string, required = false): void {
  cmd
    .addOption(new Option("--http-port <port>", `${what} (0 picks a free port)${required ? "; required" : "; default: no HTTP endpoint"}`).argParser(parseWhole("--http-port", 0)).env("EVALFLEET_HTTP_PORT"))
    .addOption(new Option("--http-host <host>", "interface the HTTP endpoint binds").env("EVALFLEET_HTTP_HOST").default(DEFAULT_HTTP_HOST));
}
