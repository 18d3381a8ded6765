// runs in: both
import { readdirSync, readFileSync } from "node:fs";

/**
 * Child processes and their descendants, read from `/proc` (Linux). Ending a case's processes, and
 * sweeping what is left of a process's descendants when the CLI or a worker exits, go through
 * here. Processes are signalled one by one, by pid, never by process group: the CLI's own group is
 * shared with whatever started it (a shell, a test runner, CI). Everything is synchronous so that
 * it can run in an `exit` listener. Where there is no `/proc`, only the recorded pids are ended.
 *
 * Limits: a process that detached and was re-parented (a daemon's double fork) is no longer a
 * descendant and is not found; processes started by a native addon are not recorded (only the
 * sweep at exit finds them, while they are still descendants).
 */

/** A process to end later: its pid and its start time (clock ticks since boot), so that a pid reused by another process is left alone. */
export interface TrackedProcess {
  pid: number;
  /** `/proc/<pid>/stat` field 22; null where it cannot be read (no `/proc`). */
  start: string | null;
}

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The start time of a process (`/proc/<pid>/stat` field 22), or null when it cannot be read. */
export function processStartTime(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

/** Every process's parent, read from `/proc` (empty where there is no `/proc`). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // fields[0] is the state; a zombie (Z) has already exited and only waits to be reaped.
    if (fields && fields[0] !== "Z") parents.set(Number(entry), Number(fields[1]));
  }
  return parents;
}

/** The descendants of `roots` (children, their children, ...), not the roots themselves. */
export function descendantsOf(roots: Iterable<number>): number[] {
  const parents = parentsByPid();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const found: number[] = [];
  const seen = new Set<number>();
  const queue = [...roots];
  for (const r of queue) seen.add(r);
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** SIGKILLs `pid`; false when it is already gone (or not ours to signal). */
function kill(pid: number): boolean {
  if (pid <= 1 || pid === process.pid) return false;
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends each tracked process that is still the one recorded (same start time), with all its
 * descendants: the whole tree is collected first, then killed, so that no child is re-parented
 * away in between. Returns how many processes were signalled.
 */
export function endProcessTrees(tracked: Iterable<TrackedProcess>): number {
  const roots: number[] = [];
  for (const t of tracked) {
    const start = processStartTime(t.pid);
    // Gone, or the pid now belongs to another process: leave it alone.
    if (t.start !== null && start !== t.start) continue;
    roots.push(t.pid);
  }
  if (roots.length === 0) return 0;
  let signalled = 0;
  for (const pid of [...roots, ...descendantsOf(roots)]) if (kill(pid)) signalled++;
  return signalled;
}

/** Ends every remaining descendant of this process (at the exit of the CLI or of a worker). Returns how many were signalled. */
export function sweepDescendants(): number {
  let signalled = 0;
  for (const pid of descendantsOf([process.pid])) if (kill(pid)) signalled++;
  return signalled;
}
