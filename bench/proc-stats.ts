// CPU and memory of processes from /proc (Linux), threads included: the accounting the benchmark
// uses for worker processes and nats-server, which it does not run in-process.
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU time (user + system) of a process and all its threads, in milliseconds; null if it is gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Resident set size of a process in bytes; null if it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
