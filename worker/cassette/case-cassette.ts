import type { CaseResult } from "../../shared/result/result.ts";
import { EvalfleetError, ErrorCode, errorMessage } from "../../shared/errors.ts";
import type { ThreadCassette } from "../../shared/wire/thread.ts";
import { CassetteSession } from "./cassette-session.ts";
import { DirCassetteStore, type CassetteStore } from "./cassette-store.ts";
import type { FleetCassettes } from "./pool-cassette-store.ts";

/**
 * A case's cassette, opened before it runs and closed after (worker/runtime/lifecycle.ts): the run's
 * setting (`--record DIR`, `--replay DIR`) made into one {@link CassetteSession}, and the session's
 * outcome made into the result: its misses fail the case (kind `check`, however the agent handled
 * the error it was thrown), and what it recorded is written.
 */

/** One store per folder per thread (each case opens its own file in it). */
const stores = new Map<string, CassetteStore>();

/** This thread's way to the fleet's bucket (worker/pool/thread.ts sets it), or null outside a pool thread. */
let fleet: FleetCassettes | null = null;

/** Makes the fleet's cassettes (`fleet` settings) reachable from this thread. */
export function useFleetCassettes(f: FleetCassettes): void {
  fleet = f;
}

/** The store a setting names: the fleet's bucket for a `fleet` setting; else a store set with {@link useCassetteStore}, else the folder. */
export function cassetteStore(setting: ThreadCassette): CassetteStore {
  if (setting.fleet) {
    if (!fleet) throw new EvalfleetError(ErrorCode.CassetteStore, "the fleet's cassettes (--record nats, --replay nats) are reached through a worker's pool of threads, and this thread has none");
    return fleet.store(setting.dir);
  }
  let store = stores.get(setting.dir);
  if (!store) stores.set(setting.dir, (store = new DirCassetteStore(setting.dir)));
  return store;
}

/** Makes `dir` name `store` in this thread (a distributed worker's bucket, a test's store). */
export function useCassetteStore(dir: string, store: CassetteStore): void {
  stores.set(dir, store);
}

/** The session of one case and trial: a replay reads the case's cassette first (none: every request misses). Throws CASSETTE_INVALID for a bad file. */
export async function openCaseCassette(setting: ThreadCassette, caseName: string, trial: number, signal?: AbortSignal): Promise<CassetteSession> {
  const recorded = setting.mode === "replay" ? await cassetteStore(setting).load(caseName, trial, signal) : null;
  return new CassetteSession({ caseName, trial, mode: setting.mode, recordMissing: setting.recordMissing, recorded });
}

/**
 * The session's outcome on the result: the first miss as an error of kind `check` (with how many
 * more there were), unless the result already says it; then the cassette written when it changed
 * (a failed write is the infrastructure's failure: the case ran, its record did not keep).
 */
export async function closeCaseCassette(session: CassetteSession, setting: ThreadCassette, result: CaseResult, signal?: AbortSignal): Promise<void> {
  const first = session.misses[0];
  if (first !== undefined) {
    const more = session.misses.length - 1;
    const text = more > 0 ? `${first} (and ${more} more unrecorded request${more === 1 ? "" : "s"})` : first;
    if (!result.error?.includes(first)) result.addError(text, "check");
    // Already said (a model client's error quotes it): a miss is a check's failure, never the infrastructure's.
    else if (!result.errorKind || result.errorKind === "infra") result.errorKind = "check";
  }
  if (!session.changed) return;
  try {
    await cassetteStore(setting).save(session.toCassette(), signal);
  } catch (err) {
    result.addError(`record: cannot write the cassette of case ${session.caseName}: ${errorMessage(err)}`, "infra");
  }
}
