import childProcess, { type ChildProcess } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { promisify } from "node:util";
import { currentCaseScope, forgetCaseProcess, recordCaseProcess } from "./case-scope.ts";

/**
 * Wraps `node:child_process` so that the processes a case starts are known and end with it. The
 * asynchronous forms (`spawn`, `exec`, `execFile`, `fork`, and the promisified `exec`/`execFile`)
 * record each child in the running case's scope (case-scope.ts); the lifecycle ends them, with
 * their descendants, when the case ends, and the pool ends them when the case's thread is
 * terminated. The synchronous forms (`spawnSync`, `execSync`, `execFileSync`) block their thread
 * until the child exits, so no pid can be recorded: they get the current phase's deadline as their
 * `timeout` (with SIGKILL) when they set none. Outside a case the wrappers change nothing.
 *
 * `module.syncBuiltinESMExports()` makes a suite's `import { spawn } from "node:child_process"`
 * see the wrappers; install before the suite is imported (a thread does it first thing).
 */

const INSTALLED = Symbol.for("evalfleet.childProcessTracking");

type AnyFunction = (...args: unknown[]) => unknown;

/** Records `child` in the current case's scope and forgets it when it exits on its own. */
function track(child: ChildProcess | undefined): void {
  const scope = currentCaseScope();
  if (!scope || !child || child.pid === undefined) return;
  const pid = child.pid;
  recordCaseProcess(pid);
  child.once("exit", () => forgetCaseProcess(scope, pid));
}

/** An asynchronous form, wrapped: the child it returns is tracked; so is the one of its promisified form. */
function wrapAsync(original: AnyFunction): AnyFunction {
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    const child = original.apply(this, args) as ChildProcess;
    track(child);
    return child;
  };
  const custom = (original as { [promisify.custom]?: AnyFunction })[promisify.custom];
  if (custom) {
    Object.defineProperty(wrapped, promisify.custom, {
      value: (...args: unknown[]) => {
        const promise = custom(...args) as Promise<unknown> & { child?: ChildProcess };
        track(promise.child);
        return promise;
      },
    });
  }
  return wrapped;
}

/**
 * A synchronous form, wrapped: within a case phase that has a deadline, a call without a `timeout`
 * gets the time left until the deadline, so that a hung child cannot hold the thread past it.
 * `argsFirst`: the form takes `(file, args?, options?)` (`spawnSync`, `execFileSync`), else `(command, options?)`.
 */
function wrapSync(original: AnyFunction, argsFirst: boolean): AnyFunction {
  return function (this: unknown, ...args: unknown[]): unknown {
    const deadline = currentCaseScope()?.deadline;
    if (deadline === null || deadline === undefined) return original.apply(this, args);
    const at = argsFirst && Array.isArray(args[1]) ? 2 : 1;
    const given = args[at];
    const options = given !== null && typeof given === "object" && !Array.isArray(given) ? (given as { timeout?: number; killSignal?: unknown }) : null;
    if (options?.timeout) return original.apply(this, args);
    const bounded = [...args];
    bounded[at] = { ...options, timeout: Math.max(1, deadline - Date.now()), killSignal: options?.killSignal ?? "SIGKILL" };
    return original.apply(this, bounded);
  };
}

/** Installs the wrappers once per thread (idempotent). */
export function installChildProcessTracking(): void {
  const target = childProcess as unknown as Record<string | symbol, unknown>;
  if (target[INSTALLED]) return;
  for (const name of ["spawn", "exec", "execFile", "fork"]) target[name] = wrapAsync(target[name] as AnyFunction);
  target.spawnSync = wrapSync(target.spawnSync as AnyFunction, true);
  target.execFileSync = wrapSync(target.execFileSync as AnyFunction, true);
  target.execSync = wrapSync(target.execSync as AnyFunction, false);
  target[INSTALLED] = true;
  syncBuiltinESMExports();
}
