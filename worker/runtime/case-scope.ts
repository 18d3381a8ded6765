import { AsyncLocalStorage } from "node:async_hooks";
import { endProcessTrees, processStartTime, type TrackedProcess } from "../../shared/process/process-tree.ts";
import type { ResponseCache } from "../models/response-store.ts";
import type { CassetteSession } from "../cassette/cassette-session.ts";

/**
 * The scope of one running case: every callback the case's code runs, however deep its awaits,
 * carries it (an AsyncLocalStorage). Two things read it: the child-process wrapper
 * (child-processes.ts), which records each process a case starts so it can be ended with the
 * case, and a thread's beacon (worker/pool/thread-beacon.ts), which names the case whose code
 * the thread is running, so a thread that blocks or crashes blames the right case.
 */

/** One running case, as its callbacks see it. */
export interface CaseScope {
  /** The pool's task id of the case (-1 outside a pool). */
  readonly taskId: number;
  /** Processes the case started, by pid, with their start time (so a reused pid is never signalled). */
  readonly processes: Map<number, TrackedProcess>;
  /** Told of each process the case starts (a thread reports it to its pool, which ends it if the thread dies). */
  readonly onSpawn?: (process: TrackedProcess) => void;
  /** The current phase's deadline (epoch ms), or null: bounds the case's synchronous `spawnSync` / `execSync` calls. */
  deadline: number | null;
  /** Which run of a repeated case this is (1-based; `--repeat`): part of a cached model answer's key. */
  repeat: number;
  /** The response cache's answers to this case's model calls so far (worker/models/response-cache.ts). */
  readonly modelCache: { hits: number; misses: number };
  /** The response cache this case's model calls go through, or null (then the thread's, if any). */
  cache: ResponseCache | null;
  /** The case's recorder or replayer (`--record`, `--replay`): the built-in model clients' requests go through it; null: neither. */
  cassette: CassetteSession | null;
}

const scopes = new AsyncLocalStorage<CaseScope>();
/** Told each time a case's code is entered synchronously (a thread's beacon); null: nobody. */
let entryListener: ((scope: CaseScope) => void) | null = null;

/** Registers the one listener told when a case scope is entered (the thread's beacon). */
export function onCaseScopeEntry(listener: (scope: CaseScope) => void): void {
  entryListener = listener;
}

/** A new scope for a case. */
export function newCaseScope(taskId = -1, onSpawn?: (process: TrackedProcess) => void): CaseScope {
  return { taskId, processes: new Map(), ...(onSpawn ? { onSpawn } : {}), deadline: null, repeat: 1, modelCache: { hits: 0, misses: 0 }, cache: null, cassette: null };
}

/** Runs `fn` (a case's lifecycle) in `scope`: every callback it schedules sees the scope. */
export function runInCaseScope<T>(scope: CaseScope, fn: () => Promise<T>): Promise<T> {
  // The synchronous start of `fn` (a sync setup hook) runs before any callback: say so now.
  entryListener?.(scope);
  return scopes.run(scope, fn);
}

/** The scope of the case whose code is running, if any. */
export function currentCaseScope(): CaseScope | undefined {
  return scopes.getStore();
}

/** Records a process the current case started (no-op outside a case). */
export function recordCaseProcess(pid: number | undefined): void {
  const scope = scopes.getStore();
  if (!scope || pid === undefined) return;
  const tracked: TrackedProcess = { pid, start: processStartTime(pid) };
  scope.processes.set(pid, tracked);
  scope.onSpawn?.(tracked);
}

/** Forgets a process of the current case that has exited on its own. */
export function forgetCaseProcess(scope: CaseScope | undefined, pid: number | undefined): void {
  if (scope && pid !== undefined) scope.processes.delete(pid);
}

/** Ends the processes the case started that are still alive, with their descendants. Returns how many were signalled. */
export function endCaseProcesses(scope: CaseScope): number {
  if (scope.processes.size === 0) return 0;
  const tracked = [...scope.processes.values()];
  scope.processes.clear();
  return endProcessTrees(tracked);
}
