import { connectNats, processLabel } from "../../shared/broker/connection.ts";
import { natsSettingsFrom, type NatsFlags } from "../../shared/broker/nats-settings.ts";
import { openBroker, type Broker } from "../../shared/broker/setup.ts";
import { assertRunId } from "../../shared/broker/subjects.ts";
import { processEnvironment } from "../../shared/environment.ts";
import { safeText } from "../../shared/text.ts";
import { redactJson } from "../../shared/redaction/secrets.ts";
import { isFinishedPhase, type RunManifest } from "../../shared/wire/nats.ts";
import { readManifest, readRunState, requestCancel } from "../distributed/run-records.ts";
import { readRunProgress, type RunProgress } from "../distributed/status.ts";
import { shortDuration } from "../run/run-eta.ts";
import { ExitCode } from "../run/exit-code.ts";
import type { ResolvedIO } from "./io.ts";

/**
 * `evalfleet coordinator cancel` and `coordinator status`: a run managed from any machine, through
 * NATS only. Loaded when one of the two commands runs.
 */

/** `coordinator cancel <run-id>`: asks the run's coordinator to cancel it; returns the exit code. */
export async function cancelRun(runId: string, flags: NatsFlags & { reason: string }, io: ResolvedIO): Promise<number> {
  const broker = await brokerFor(flags);
  try {
    await readManifest(broker, assertRunId(runId));
    const state = await readRunState(broker, runId);
    if (state && isFinishedPhase(state.phase)) {
      io.stdout.write(`run ${runId} is already ${state.phase}\n`);
      return ExitCode.Ok;
    }
    const created = await requestCancel(broker, runId, `evalfleet coordinator cancel (${processLabel()})`, flags.reason);
    io.stdout.write(created ? `cancel requested for run ${runId}: queued cases purged; the coordinator finalises the report\n` : `run ${runId} was already being cancelled\n`);
    return ExitCode.Ok;
  } finally {
    await broker.nc.close().catch(() => undefined);
  }
}

/** `coordinator status <run-id>`: prints the run's progress (or its JSON); returns the exit code. */
export async function showRunProgress(runId: string, flags: NatsFlags & { json?: boolean }, io: ResolvedIO): Promise<number> {
  const broker = await brokerFor(flags);
  try {
    const s = await readRunProgress(broker, assertRunId(runId));
    io.stdout.write(flags.json ? `${JSON.stringify(redactJson(s), null, 2)}\n` : formatStatus(s));
    return ExitCode.Ok;
  } finally {
    await broker.nc.close().catch(() => undefined);
  }
}

/** A run's manifest, read through NATS (`coordinator resume RUN_ID` without a suite). */
export async function readRunManifest(runId: string, flags: NatsFlags): Promise<RunManifest> {
  const broker = await brokerFor(flags);
  try {
    return await readManifest(broker, assertRunId(runId));
  } finally {
    await broker.nc.close().catch(() => undefined);
  }
}

async function brokerFor(flags: NatsFlags): Promise<Broker> {
  const nc = await connectNats(natsSettingsFrom(flags, processEnvironment()), { name: `evalfleet-cli/${processLabel()}`, reconnectForever: false });
  try {
    return await openBroker(nc);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

/** The status as four lines of text, then one per provider key. */
export function formatStatus(s: RunProgress, now: number = Date.now()): string {
  const silent = s.heartbeatAt ? Math.round((now - Date.parse(s.heartbeatAt)) / 1000) : null;
  const lost = s.coordinatorLost
    ? `, coordinator lost: ${silent === null ? "it never wrote the run's state" : `no heartbeat for ${silent}s`} (evalfleet coordinator resume ${s.runId} finishes the run)`
    : "";
  const lines = [
    `run ${s.runId}: ${s.phase}${lost}${s.cancel ? ` (cancel: ${s.cancel})` : ""}`,
    `suite ${s.suite} (fingerprint ${s.fingerprint.slice(0, 12)}), created ${s.createdAt}`,
    ...(s.etaSeconds !== null && !s.coordinatorLost && s.heartbeatAt
      ? [`eta ${shortDuration(Math.max(0, s.etaSeconds - Math.max(0, (now - Date.parse(s.heartbeatAt)) / 1000)))} (from the recorded durations of the suite)`]
      : []),
    `selected ${s.selected}  done ${s.done}  passed ${s.passed}  failed ${s.failed}  reporting ${s.reporting}  running ${s.running}  queued ${s.queued}${s.noResult ? `  no result ${s.noResult}` : ""}`,
    `workers ${s.workers.length}${s.workers.length ? `: ${s.workers.map((w) => `${w.workerId} (${w.busy}/${w.slots} busy${w.accepted ? "" : `, refused: ${w.reason}`})`).join(", ")}` : ""}`,
  ];
  if (s.usage.tokens.total > 0) {
    lines.push(`tokens ${s.usage.tokens.total} (agent ${s.usage.tokens.agent}, judge ${s.usage.tokens.judge}), cost $${s.usage.costUsd.toFixed(4)}${s.usage.unknownCostCases ? ` (${s.usage.unknownCostCases} cases of unknown cost)` : ""}`);
  }
  for (const p of s.providers) {
    const limit = [p.configured.rpm !== null ? `rpm ${p.configured.rpm}` : null, p.configured.tpm !== null ? `tpm ${p.configured.tpm}` : null, p.configured.concurrency !== null ? `concurrency ${p.configured.concurrency}` : null].filter(Boolean).join(", ");
    lines.push(
      `provider ${p.key}: paced at ${p.rpm === null ? "-" : Math.round(p.rpm)} rpm${limit ? ` (limit ${limit})` : p.learnt.requests !== null ? ` (learnt ${p.learnt.requests} per ${p.learnt.windowSeconds ?? 60}s)` : ""}, in flight ${p.inFlight}, queued ${p.queued}, admitted ${p.admitted}, 429s ${p.rateLimited}, failed ${p.failed}, tokens ${p.tokens}`,
    );
  }
  return lines.map(safeText).join("\n") + "\n";
}
