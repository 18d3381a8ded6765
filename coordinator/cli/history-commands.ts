import { Option, type Command } from "commander";
import { addHistoryReadFlags, historyConfidenceOption, historyRunsOption, regressionAlphaOption } from "./flags.ts";
import type { HistoryReadFlags } from "./flag-types.ts";
import type { CommandContext } from "./io.ts";

/**
 * `evalfleet runs` (and `runs close`), `show`, `compare`, `flaky`, `export` and `report`: their arguments and flags. What they
 * do (coordinator/history/commands.ts, with the results store) loads only when one of them runs.
 */

/** Loads the history commands' implementations. */
const history = (): Promise<typeof import("../history/commands.ts")> => import("../history/commands.ts");

/** Registers the history commands on the program. */
export function addHistoryCommands(program: Command, ctx: CommandContext): void {
  const runs = program.command("runs").description("List recent runs recorded in the results store, newest first");
  addHistoryReadFlags(runs);
  runs
    .option("--suite <name>", "only runs of this suite")
    .option("--branch <name>", "only runs recorded on this git branch")
    .addOption(historyRunsOption("--limit <n>", "how many runs", "--limit", 1));
  runs.action(async (flags: HistoryReadFlags & { suite?: string; branch?: string; limit: number }) => ctx.setCode(await (await history()).listRuns(flags, ctx.io)));
  const close = runs
    .command("close")
    .description("Close a run left `running` (its process died, or could not record its end) as `abandoned`")
    .argument("<run-id>", "the run (or a prefix of its id only it has)");
  addHistoryReadFlags(close);
  close.option("--force", "close it even when its heartbeat says it is still alive");
  // `runs` has the same store flags, and commander gives a flag to the parent that defines it too:
  // each flag's value comes from whichever of the two was given it on the command line.
  close.action(async (runId: string, _flags: unknown, cmd: Command) => ctx.setCode(await (await history()).closeRun(runId, givenFlags(cmd) as unknown as HistoryReadFlags & { force?: boolean }, ctx.io)));

  const show = program.command("show").description("Print one recorded run as the summary table").argument("<run-id>", "the run (or a prefix of its id only it has)");
  addHistoryReadFlags(show);
  show.action(async (runId: string, flags: HistoryReadFlags) => ctx.setCode(await (await history()).showRun(runId, flags, ctx.io)));

  const compare = program
    .command("compare")
    .description("What changed between two recorded runs: cases that went from pass to fail and back, score changes")
    .argument("<run-a>", "the earlier run")
    .argument("<run-b>", "the later run");
  addHistoryReadFlags(compare);
  compare.option("--html <file>", "also write the two runs side by side as one self-contained HTML page: flips first, output diffs per case");
  compare
    .addOption(regressionAlphaOption())
    .addOption(historyConfidenceOption());
  compare.action(async (a: string, b: string, flags: HistoryReadFlags & { html?: string; regressionAlpha: number; confidence: number }) => ctx.setCode(await (await history()).compareRecordedRuns(a, b, flags, ctx.io)));

  const flaky = program.command("flaky").description("Per case, the pass rate and the number of pass/fail flips over the last runs of a suite");
  addHistoryReadFlags(flaky);
  flaky
    .option("--suite <name>", "the suite (default: the suite of the newest recorded run)")
    .option("--branch <name>", "only runs recorded on this git branch")
    .addOption(historyRunsOption("--last <n>", "how many runs, newest first", "--last", 2))
    .option("--all", "list every case, not only the flaky ones")
    .addOption(historyConfidenceOption());
  flaky.action(async (flags: HistoryReadFlags & { suite?: string; branch?: string; last: number; all?: boolean; confidence: number }) => ctx.setCode(await (await history()).flakyCases(flags, ctx.io)));

  const exported = program
    .command("export")
    .description("Write a recorded run as Exulu's eval_runs record with one result per test case (--format exulu), or as evalfleet's JSON report (--format json)")
    .argument("<run-id>", "the run (or a prefix of its id only it has)");
  addHistoryReadFlags(exported, { json: false });
  exported
    .addOption(new Option("--format <format>", "exulu: Exulu's eval_runs record and its results; json: the run's JSON report").choices(["exulu", "json"]).default("json"))
    .option("-o, --output <path>", "write to this file (parent folders are created) instead of standard output");
  exported.action(async (runId: string, flags: HistoryReadFlags & { format: "exulu" | "json"; output?: string }) => ctx.setCode(await (await history()).exportRun(runId, flags, ctx.io)));

  const report = program
    .command("report")
    .description("Write a self-contained HTML report of a recorded run (default: the newest) with trends over the last runs")
    .argument("[run-id]", "the run (default: the newest suite run)");
  addHistoryReadFlags(report, { json: false });
  report
    .option("--html <path>", "write the HTML report here (parent folders are created)")
    .addOption(historyRunsOption("--last <n>", "runs of the same suite and branch in the trend charts", "--last", 1));
  report.action(async (runId: string | undefined, flags: HistoryReadFlags & { html?: string; last: number }) => ctx.setCode(await (await history()).writeHtmlReport(runId, flags, ctx.io)));
}


/** A subcommand's options merged with its parent's: a value given on the command line wins, wherever commander put it. */
function givenFlags(cmd: Command): Record<string, unknown> {
  const parent = cmd.parent;
  const own = cmd.opts();
  if (!parent) return own;
  const theirs = parent.opts();
  const merged: Record<string, unknown> = { ...theirs, ...own };
  for (const key of Object.keys(theirs)) if (parent.getOptionValueSource(key) === "cli" && cmd.getOptionValueSource(key) !== "cli") merged[key] = theirs[key];
  return merged;
}
