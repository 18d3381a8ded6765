/**
 * Real `evalfleet` child processes for the distributed-mode tests (`node bin/evalfleet.mjs ...`),
 * bounded waits, marker files left by the fixtures, and a direct look at the broker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { CASES_STREAM, caseSubjects } from "../../shared/broker/subjects.ts";

export const root = join(import.meta.dirname, "..", "..");
const bin = join(root, "bin", "evalfleet.mjs");

/** Absolute path of a fixture in test/fixtures. */
export const fixture = (name: string): string => join(root, "test", "fixtures", name);

/** How a child process ended. */
export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running `evalfleet` process. */
export interface Proc {
  child: ChildProcess;
  pid: number;
  /** How the process names itself in reports and presence records (`<host>/<pid>`). */
  label: string;
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  /** True once the process has exited. */
  readonly exited: boolean;
  done: Promise<Finished>;
}

const running = new Set<Proc>();

/** Starts `node bin/evalfleet.mjs ...args` with `env` on top of this process's environment, in the repository's folder unless `cwd` says otherwise. */
export function evalfleet(args: string[], env: Record<string, string> = {}, options: { cwd?: string } = {}): Proc {
  return track(spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] }));
}

/**
 * Wraps a child spawned with piped stdout and stderr: its output so far, how it ended, and a
 * place among the processes {@link killLeftovers} kills.
 */
export function track(child: ChildProcess): Proc {
  let stdout = "";
  let stderr = "";
  let exited = false;
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const proc: Proc = {
    child,
    pid: child.pid!,
    label: `${hostname()}/${child.pid}`,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get exited() {
      return exited;
    },
    done: new Promise<Finished>((resolve) =>
      child.on("close", (code, signal) => {
        exited = true;
        running.delete(proc);
        resolve({ code, signal, stdout, stderr });
      }),
    ),
  };
  running.add(proc);
  return proc;
}

/** SIGKILLs every process started by {@link evalfleet} or {@link track} that is still running (a failed test's leftovers). */
export async function killLeftovers(): Promise<void> {
  const left = [...running];
  for (const p of left) p.child.kill("SIGKILL");
  await Promise.all(left.map((p) => p.done));
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs}ms waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with `promise`, or rejects naming `what` after `timeoutMs`. */
export async function within<T>(promise: Promise<T>, what: string, timeoutMs = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs}ms waiting for ${what}`)), timeoutMs)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How a process ended, for an assertion message: the exit, stderr in full, then only the last
 * `lines` lines of stdout, since test runners cut long messages and the cause is at the end.
 */
export function outputOf(r: Finished, lines = 40): string {
  return `exit ${r.code ?? r.signal}\n--- stderr:\n${r.stderr.trimEnd()}\n--- stdout (tail):\n${tail(r.stdout, lines)}`;
}

/** The last `lines` lines of `text`, saying how many were left out. */
function tail(text: string, lines: number): string {
  const all = text.trimEnd().split("\n");
  const cut = all.length > lines ? `[${all.length - lines} earlier lines left out]\n` : "";
  return `${cut}${all.slice(-lines).join("\n")}`;
}

/** Waits for a process to exit (bounded) and returns how it ended. */
export function exitOf(p: Proc, what: string, timeoutMs = 30_000): Promise<Finished> {
  return within(p.done, `${what} (pid ${p.pid}) to exit; stderr so far:\n${p.stderr}\nstdout so far (tail):\n${tail(p.stdout, 40)}`, timeoutMs);
}

/** One marker file of test/fixtures/fleet-faults-suite.ts: `<kind>.<name>.<pid>.<random>`. */
export interface Marker {
  name: string;
  pid: number;
}

/** The markers of one kind (`started`, `teardown`, `finished`) in `dir`. */
export function markers(dir: string, kind: "started" | "teardown" | "finished"): Marker[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith(`${kind}.`))
    .map((f) => {
      const [, name, pid] = f.split(".");
      return { name: name!, pid: Number(pid) };
    });
}

/** How many times each case name appears in the markers. */
export function countByName(list: readonly Marker[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of list) counts.set(m.name, (counts.get(m.name) ?? 0) + 1);
  return counts;
}

/** Reads and parses a JSON file. */
export function readJson<T = any>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** How many messages of `runId` the cases stream still holds (queued or in flight). */
export async function queuedCaseMessages(url: string, runId: string): Promise<number> {
  const nc = await connect({ servers: url, maxReconnectAttempts: 0, timeout: 5000 });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(CASES_STREAM, { subjects_filter: caseSubjects(runId) });
    return Object.values(info.state.subjects ?? {}).reduce((n, count) => n + count, 0);
  } finally {
    await nc.close();
  }
}
