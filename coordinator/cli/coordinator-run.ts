import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { processEnvironment } from "../../shared/environment.ts";
import type { LoadedSuite } from "../../shared/suite/suite.ts";
import { loadSuiteWithin } from "../../shared/suite/bounded-load.ts";
import { safeText } from "../../shared/text.ts";
import { newRunId, resumeDistributed, runDistributed, type DistributedRunOptions } from "../distributed/distributed-run.ts";
import { runConfigFrom, type RunConfig } from "./config.ts";
import { executeRun, type Runner } from "./execute-run.ts";
import type { CoordinatorFlags } from "./flag-types.ts";
import type { ResolvedIO } from "./io.ts";
import { leaveRunOnSigterm } from "./signals.ts";

/**
 * `evalfleet coordinator run` and `coordinator resume`: the run pipeline with the distributed
 * runner, which publishes the selected cases on NATS JetStream (or takes over a run whose
 * coordinator died) and collects one ordered report. Loaded when one of the two commands runs.
 */

/** `coordinator run [suite]`: returns the exit code. */
export async function coordinatorRun(suiteArgument: string | undefined, flags: CoordinatorFlags, io: ResolvedIO): Promise<number> {
  const config = runConfigFrom({ command: "coordinator-run", suiteArgument, flags, env: processEnvironment() });
  const stopLeaving =
    config.distributed!.onSigterm === "leave" && io.handleSignals ? leaveRunOnSigterm((line) => io.stdout.write(`${safeText(line)}\n`), () => config.runId) : () => undefined;
  try {
    const suite = await loadSuiteWithin(config.suiteFile!, config.loadTimeoutSeconds);
    return await executeRun(suite, config, io, distributedRunner(suite, config, io), { newRunId });
  } finally {
    stopLeaving();
  }
}

/**
 * `coordinator resume <run-id> [suite]`: returns the exit code. Without a suite (and without
 * `$EVALFLEET_SUITE`), the suite is the one the run's manifest records, resolved against the
 * working directory, and it must be the very suite the run was started with (its fingerprint).
 */
export async function coordinatorResume(runId: string, suiteArgument: string | undefined, flags: CoordinatorFlags, io: ResolvedIO): Promise<number> {
  const env = processEnvironment();
  const recorded = suiteArgument || env.EVALFLEET_SUITE ? null : await recordedSuite(runId, flags);
  // A resumed run's selection is its manifest's: every case of the suite is "selected" here.
  const config = runConfigFrom({ command: "coordinator-resume", suiteArgument: suiteArgument ?? recorded?.path, flags: { ...flags, name: undefined, tag: undefined, set: undefined }, env, resumeRunId: runId });
  const suite = await loadSuiteWithin(config.suiteFile!, config.loadTimeoutSeconds);
  if (recorded && suite.fingerprint !== recorded.fingerprint) {
    throw new EvalfleetError(
      ErrorCode.SuiteMismatch,
      `run ${runId} was started with suite fingerprint ${recorded.fingerprint.slice(0, 12)}; ${suite.path}, the suite its manifest records (${recorded.recordedPath}), now has ${suite.fingerprint.slice(0, 12)}: the suite changed since; pass the suite the run was started with: evalfleet coordinator resume ${runId} SUITE`,
      { runId, path: suite.path },
    );
  }
  return executeRun(suite, config, io, distributedRunner(suite, config, io));
}

/** The suite a run's manifest records: its path resolved against the working directory (which must hold it), and its fingerprint. */
async function recordedSuite(runId: string, flags: CoordinatorFlags): Promise<{ path: string; recordedPath: string; fingerprint: string }> {
  const { readRunManifest } = await import("./run-admin.ts");
  const manifest = await readRunManifest(runId, flags);
  const path = resolve(manifest.suite.path);
  if (!existsSync(path)) {
    throw new EvalfleetError(
      ErrorCode.SuiteNotFound,
      `run ${runId}'s manifest records its suite as ${manifest.suite.path}, which is not at ${path}: run the command from the folder the run was started in, or pass the suite: evalfleet coordinator resume ${runId} SUITE`,
      { runId, path },
    );
  }
  return { path, recordedPath: manifest.suite.path, fingerprint: manifest.suite.fingerprint };
}

/** Runs the selected cases across the workers on NATS (or finishes the resumed run). */
function distributedRunner(suite: LoadedSuite, config: RunConfig, io: ResolvedIO): Runner {
  const d = config.distributed!;
  const resumeRunId = d.resumeRunId;
  return async (ctx) => {
    let announced: string | null = null;
    const st = ctx.settings;
    const options: DistributedRunOptions = {
      ...ctx.hooks,
      selected: ctx.selected,
      nats: d.nats,
      runId: resumeRunId ?? ctx.runId ?? config.runId,
      defaultTimeout: st.defaultTimeoutSeconds,
      setupTimeout: st.setupTimeoutSeconds,
      teardownTimeout: st.teardownTimeoutSeconds,
      maxOutputBytes: st.maxOutputBytes,
      maxTranscriptBytes: st.maxTranscriptBytes,
      cache: st.cache,
      // The compiled setting's `dir` is `nats` here (config.ts refuses a folder for a distributed run).
      cassette: st.cassette ? { mode: st.cassette.mode, recordMissing: st.cassette.recordMissing } : null,
      waitForWorkersSeconds: st.waitForWorkersMs / 1000,
      maxAttempts: st.maxAttempts,
      deadlineSeconds: st.deadlineMs === null ? null : st.deadlineMs / 1000,
      ackWaitSeconds: st.ackWaitMs / 1000,
      cancelGraceSeconds: st.cancelGraceMs / 1000,
      brokerLossSeconds: st.brokerLossMs / 1000,
      forwardEvents: config.verbose,
      prices: st.prices,
      budget: st.budget,
      scoringMethod: st.scoringMethod,
      evalFunctions: st.evalFunctions,
      // A resumed run keeps its manifest's rule unless --case-pass-rate is given.
      casePassRate: resumeRunId ? (config.casePassRate ?? undefined) : st.casePassRate,
      confidence: resumeRunId ? (config.confidence ?? undefined) : st.confidence,
      // A resumed run keeps what its manifest recorded (repeat, retries, limits, pass threshold)
      // unless the flags say otherwise: the compiled defaults would overwrite them.
      ...(resumeRunId
        ? {
            // A resumed run's repeats (adaptive or not) are its manifest's: `resume` takes no --repeat.
            repeat: typeof config.repeat === "number" ? config.repeat : undefined,
            ...(config.providers.retries !== null ? { retries: config.providers.retries } : {}),
            limits: Object.keys(config.providers.limits).length > 0 ? config.providers.limits : null,
            passThreshold: config.passThreshold ?? undefined,
          }
        : { repeat: st.repeat, repeatMax: st.repeatMax, adaptiveConfidence: st.adaptiveConfidence, retries: st.retries, limits: st.limits, passThreshold: st.passThreshold }),
      signal: ctx.signal,
      logger: ctx.logger,
      onRunId: (id) => {
        // A run resumed after `--resume-existing` found its id taken is announced once.
        if (announced === id) return;
        announced = id;
        io.stdout.write(`run id: ${id}\n`);
      },
      onNote: ctx.note,
      etaSeconds: ctx.etaSeconds,
      onWorkers: (busy, joined) => ctx.status(`workers ${busy.size} busy of ${joined}${busy.size ? ` (${[...busy].map(([w, n]) => `${w}: ${n}`).slice(0, 4).join(", ")}${busy.size > 4 ? ", ..." : ""})` : ""}`),
    };
    const outcome = resumeRunId
      ? await resumeDistributed(suite, resumeRunId, options)
      : await runDistributed(suite, options).catch((err: unknown) => {
          if (d.resumeExisting && options.runId && err instanceof EvalfleetError && err.code === ErrorCode.RunExists) {
            ctx.note(`run ${options.runId} exists: resuming it (--resume-existing)`);
            return resumeDistributed(suite, options.runId, options);
          }
          throw err;
        });
    return { suite: outcome.suite, incomplete: outcome.incomplete };
  };
}
