import { SuiteResult } from "../../shared/result/result.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { openBroker, openRunKeys, type Broker } from "../../shared/broker/setup.ts";
import { decodeSelection } from "../../shared/wire/case-selection.ts";
import { connectNats } from "../../shared/broker/connection.ts";
import { assertRunId } from "../../shared/broker/subjects.ts";
import type { RunManifest } from "../../shared/wire/nats.ts";
import { selectCases, type SelectedCase } from "../run/select.ts";
import { checkPassThreshold, checkRepeat, checkScoringMethod } from "../run/policy.ts";
import { checkRunEvalFunctions } from "../../shared/case/eval-functions.ts";
import type { RunTokens } from "../../shared/wire/case-token.ts";
import { readRunKey } from "./run-key.ts";
import { readManifest } from "./run-records.ts";
import { compileDistributedSettings, newRunId, type DistributedOutcome, type DistributedRunOptions } from "./distributed-options.ts";
import { coordinatorName, DistributedRun } from "./distributed-lifecycle.ts";

/**
 * The front doors of a distributed run: start a new one ({@link runDistributed}) or take over one
 * whose coordinator died ({@link resumeDistributed}). Each checks what it was given, compiles the
 * run's bounds and timings once (compileDistributedSettings: the defaults and the suite's settings
 * applied by compileRunSettings, as for a local run), and hands them to the run's lifecycle
 * (distributed-lifecycle.ts), which reads them as given.
 */

export { newRunId, type DistributedOutcome, type DistributedRunOptions } from "./distributed-options.ts";

/** Starts a new run of `suite` and follows it to the end. */
export async function runDistributed(suite: LoadedSuite, options: DistributedRunOptions): Promise<DistributedOutcome> {
  const selected = options.selected ?? selectCases(suite.cases, { ...options, evalSets: options.evalSets ?? suite.evalSets ?? null });
  checkRepeat(options.repeat);
  checkPassThreshold(options.passThreshold);
  checkScoringMethod(options.scoringMethod);
  checkRunEvalFunctions(options.evalFunctions, suite.evalFunctions ?? new Map());
  if (selected.length === 0) return { suite: new SuiteResult([]), runId: options.runId ?? "", incomplete: null };
  const settings = compileDistributedSettings(options, suite);
  const runId = assertRunId(options.runId || newRunId());
  const run = await DistributedRun.connect(suite, selected, runId, options, settings);
  return run.start();
}

/** Takes over a run whose coordinator died: rebuilds it from the manifest and the results, and finishes it. */
export async function resumeDistributed(suite: LoadedSuite, runId: string, options: DistributedRunOptions): Promise<DistributedOutcome> {
  assertRunId(runId);
  // Its timings are this coordinator's; its bounds stay those its manifest recorded.
  const settings = compileDistributedSettings(options, suite);
  const nc = await connectNats(options.nats, { name: coordinatorName(), reconnectForever: true });
  let broker: Broker;
  let manifest: RunManifest;
  let selected: SelectedCase[];
  let tokens: RunTokens;
  try {
    broker = await openBroker(nc);
    manifest = await readManifest(broker, runId);
    if (manifest.suite.fingerprint !== suite.fingerprint) {
      throw new EvalfleetError(
        ErrorCode.SuiteMismatch,
        `run ${runId} was started with suite fingerprint ${manifest.suite.fingerprint.slice(0, 12)} ('${manifest.suite.name}'); ${suite.path} has ${suite.fingerprint.slice(0, 12)}`,
      );
    }
    selected = decodeSelection(manifest.selection, suite.cases.length).map((index) => ({ index, case: suite.cases[index]! }));
    // The tokens of the cases published before the crash, from the run's key.
    tokens = await readRunKey(await openRunKeys(broker), runId);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  // The run's bounds (timeout, deliveries, ...) are its manifest's, which the lifecycle reads.
  const run = new DistributedRun(nc, broker, tokens, suite, selected, runId, options, settings, manifest);
  return run.start();
}
