import type { LoadedSuite } from "../../shared/suite/suite.ts";
import type { RunSettings } from "../../shared/run-settings.ts";
import { errorMessage } from "../../shared/errors.ts";
import { safeText } from "../../shared/text.ts";
import type { ResultsStore } from "../history/store/store.ts";
import { readCaseHistory } from "../history/duration-history.ts";
import { HISTORY_SAMPLE_RUNS, expectCase, orderCases, type CaseExpectation, type CaseHistory } from "../run/schedule-order.ts";
import { estimateRun } from "../run/schedule-estimate.ts";
import { HistoryEta, shortDuration } from "../run/run-eta.ts";
import { ExitCode } from "../run/exit-code.ts";
import type { SelectedCase } from "../run/select.ts";
import type { RunConfig } from "./config.ts";
import type { ResolvedIO } from "./io.ts";

/**
 * The schedule of a command-line run: its start order (`--order`), the ETA of its progress line,
 * and `--estimate`, all from the durations the results store recorded for the suite.
 */

/** A run's start order and its ETA. */
export interface RunSchedule {
  /** The selected cases in the order they start. */
  started: SelectedCase[];
  /** The ETA from history, or null when no selected case has history. */
  eta: HistoryEta | null;
  /** One line saying the order, or null when it is the declared order by default. */
  note: string | null;
}

/**
 * Orders `selected` by `settings.order` and builds the ETA, reading the suite's history from
 * `store` (null: no store, the declared order). A history that cannot be read is said in
 * `warn` and the run starts in declaration order: a schedule is never a reason not to run.
 */
export async function scheduleRun(suite: LoadedSuite, selected: readonly SelectedCase[], settings: RunSettings, store: ResultsStore | null, slots: number, warn: (line: string) => void): Promise<RunSchedule> {
  let history: CaseHistory = new Map();
  if (store) {
    try {
      history = await readCaseHistory(store, suite.name);
    } catch (err) {
      warn(`warning: cannot read the recorded durations of suite '${suite.name}' (${errorMessage(err)}): cases start in declaration order`);
    }
  }
  // No recorded durations: every order but a random one is the declared order, and there is no
  // ETA. Said before any per-case work: a run without a store pays nothing for the schedule.
  if (history.size === 0 && settings.order.kind !== "random") return { started: inDeclaredOrder(selected), eta: null, note: null };
  const expected = expectations(selected, settings, history);
  const started = orderCases(selected, settings.order, (s) => expected.get(s.index)!);
  const known = [...expected.values()].some((e) => e.fromHistory);
  const eta = known ? new HistoryEta(selected.map((s) => s.case.name), new Map(selected.map((s) => [s.case.name, expected.get(s.index)!.seconds])), slots) : null;
  const order = settings.order;
  const note =
    order.kind === "random"
      ? `order: random:${order.seed} (--order random:${order.seed} starts the cases in this order again)`
      : order.kind === "history" && known
        ? `order: longest first from the recorded durations (${selected.length - [...expected.values()].filter((e) => e.fromHistory).length} of ${selected.length} cases without history go by their timeout)`
        : null;
  return { started, eta, note };
}

/** `selected` by declaration index: as it is when it is in that order already (selection keeps it). */
function inDeclaredOrder(selected: readonly SelectedCase[]): SelectedCase[] {
  for (let i = 1; i < selected.length; i++) {
    if (selected[i - 1]!.index > selected[i]!.index) return [...selected].sort((a, b) => a.index - b.index);
  }
  return [...selected];
}

function expectations(selected: readonly SelectedCase[], settings: RunSettings, history: CaseHistory): Map<number, CaseExpectation> {
  return new Map(selected.map((s) => [s.index, expectCase(s.case.name, s.case.resolveTimeout(settings.defaultTimeoutSeconds), history, settings.repeat)]));
}

/**
 * `--estimate`: prints the expected duration of the selected cases on `slots` slots in the run's
 * start order, the tokens and cost from history, and how many cases have no history. Opens the
 * store read-only for it (recording nothing); runs nothing. Returns exit 0.
 */
export async function printEstimate(suite: LoadedSuite, selected: readonly SelectedCase[], settings: RunSettings, config: RunConfig, io: ResolvedIO): Promise<number> {
  const slots = config.estimate?.slots ?? config.concurrency;
  const db = config.store.db;
  let history: CaseHistory = new Map();
  let source = "no results store (--db): every case stands in with its timeout";
  if (db) {
    const { ResultsStore } = await import("../history/store/store.ts");
    const store = typeof db === "string" ? await ResultsStore.open(db, { timeoutSeconds: config.store.timeoutSeconds, suitePath: suite.path || null }) : db;
    try {
      history = await readCaseHistory(store, suite.name);
      source = `the newest ${HISTORY_SAMPLE_RUNS} finished runs of suite '${suite.name}' in ${store.display} (median per case)`;
    } finally {
      if (typeof db === "string") await store.close();
    }
  }
  const cases = selected.map((s) => ({ index: s.index, case: s.case, timeoutSeconds: s.case.resolveTimeout(settings.defaultTimeoutSeconds) }));
  const e = estimateRun(cases, history, { order: settings.order, slots, repeat: settings.repeat });
  // Adaptive repeats spend between MIN and MAX trials a case: the estimate gives both ends.
  const most = settings.repeatMax > settings.repeat ? estimateRun(cases, history, { order: settings.order, slots, repeat: settings.repeatMax }) : null;
  const upTo = (low: string, high: string): string => (most && high !== low ? `${low} to ${high}` : low);
  const runs = most ? ` x ${settings.repeat}..${settings.repeatMax} runs (adaptive)` : settings.repeat > 1 ? ` x ${settings.repeat} runs` : "";
  const pool = config.mode === "distributed" ? `${slots} slots (--slots: workers x their concurrency)` : `${slots} slot${slots === 1 ? "" : "s"} (--concurrency)`;
  const order = settings.order.kind === "random" ? `random:${settings.order.seed}` : settings.order.kind;
  const lines = [
    `estimate: ${e.cases} case${e.cases === 1 ? "" : "s"}${runs} on ${pool}, order ${order}`,
    `  duration: ${upTo(shortDuration(e.seconds), shortDuration(most?.seconds ?? 0))} (${upTo(String(round(e.seconds)), String(round(most?.seconds ?? 0)))} s; ${upTo(String(round(e.workSeconds)), String(round(most?.workSeconds ?? 0)))} s of work)`,
    `  tokens:   ${upTo(String(Math.round(e.tokens)), String(Math.round(most?.tokens ?? 0)))}`,
    `  cost:     ${upTo(`$${e.costUsd.toFixed(4)}`, `$${(most?.costUsd ?? 0).toFixed(4)}`)}${e.withoutCost > 0 ? ` (${e.withoutCost} case${e.withoutCost === 1 ? "" : "s"} with history but no recorded cost left out)` : ""}`,
    `  without history: ${e.withoutHistory} case${e.withoutHistory === 1 ? "" : "s"}${e.withoutHistory > 0 ? " (their timeout stands in for the duration; tokens and cost unknown)" : ""}`,
    `  from ${source}`,
    "nothing was run",
  ];
  io.stdout.write(`${lines.map(safeText).join("\n")}\n`);
  return ExitCode.Ok;
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
