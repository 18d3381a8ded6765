// Start-up figures of the compiled command, each a whole process measured from outside (wall
// time, median of several): `evalfleet --help`, the README's demo, a worker thread getting ready
// with a .mjs suite, and `evalfleet run` of 200,000 trivial cases with its start-up against its
// steady rate. What a user's `npx evalfleet` pays: bin/evalfleet.mjs on dist/, no TypeScript loader
// for evalfleet itself.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What startupFigures adds to bench/results.json. */
export interface StartupFigures {
  startup_help_s: number;
  startup_demo_s: number;
  thread_ready_ms: number;
  thread_ready_alone_ms: number;
  startup_large_cases: number;
  startup_large_s: number;
  startup_large_cases_per_s: number;
  startup_large_steady_cases_per_s: number;
  startup_large_ratio: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Runs `node bin/evalfleet.mjs ...args` to its end, output discarded; its wall time in seconds. */
async function wall(root: string, args: string[], env: Record<string, string> = {}, cwd = root): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, "bin", "evalfleet.mjs"), ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.on("close", r));
  if (code !== 0) throw new Error(`evalfleet ${args.join(" ")} exited ${code}: ${err.trim().split("\n").slice(-3).join(" | ")}`);
  return (performance.now() - t0) / 1000;
}

/** Start-up figures; `quick` runs the 200,000-case rows once instead of three times. `log` gets one line per figure. */
export async function startupFigures(root: string, quick: boolean, log: (line: string) => void): Promise<StartupFigures> {
  // Whole commands of about a second on a shared machine: five samples even in the quick run.
  const samples = 5;
  const suite = join(root, "bench", "trivial-suite.mjs");
  const demoSuite = join(root, "examples", "math-suite.ts");
  // One untimed run of each first, as for any command run twice: the file system cache, and the
  // caches a run writes on its first start after a build (the bundled suite, the runtimes' code caches).
  await wall(root, ["--help"]);
  await wall(root, ["run", demoSuite]);
  const help: number[] = [];
  for (let i = 0; i < samples; i++) help.push(await wall(root, ["--help"]));
  const demo: number[] = [];
  for (let i = 0; i < samples; i++) demo.push(await wall(root, ["run", demoSuite]));
  log(`  evalfleet --help: ${median(help).toFixed(2)} s; the demo: ${median(demo).toFixed(2)} s`);

  // Each thread of a 5-case .mjs run writes when it had imported the suite, and how long it sat idle
  // until then (bench/trivial-suite.mjs). The thread's own start-up: from its start to the suite
  // imported, less the time it sat idle waiting for its first task (a run starts its threads while
  // its main thread loads the suite). Two threads (the CLI's default here: they and the main thread
  // share the two cores), and one (which has a core to itself).
  // Ten runs each (twenty threads with two per run): a thread's start takes a tenth of a second and
  // the two cores are shared, so five runs left the median swinging by a fifth between quick runs.
  const readyRuns = 10;
  const readyOf = async (threads: string): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < readyRuns; i++) {
      const dir = mkdtempSync(join(tmpdir(), "evalfleet-ready-"));
      try {
        await wall(root, ["run", suite, "--threads", threads], { BENCH_CASES: "5", BENCH_READY_DIR: dir });
        for (const f of readdirSync(dir)) {
          const r = JSON.parse(readFileSync(join(dir, f), "utf8")) as { ready_ms: number; idle_ms: number };
          out.push(r.ready_ms - r.idle_ms);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    return out;
  };
  const ready = await readyOf("2");
  const readyAlone = await readyOf("1");
  log(`  a thread ready (.mjs suite imported): ${median(ready).toFixed(0)} ms (${ready.length} threads, two per run); one thread alone ${median(readyAlone).toFixed(0)} ms`);

  // 200,000 cases, start-up included (the whole process), against the steady rate: the marginal one
  // between a run of a quarter as many and the full run, so every cost that grows with the cases
  // (building them in each thread, the report) counts as steady and only the fixed cost as start-up.
  const large = 200_000;
  const small = large / 4;
  const runs = quick ? 1 : 3;
  const tLarge: number[] = [];
  const tSmall: number[] = [];
  for (let i = 0; i < runs; i++) {
    tSmall.push(await wall(root, ["run", suite, "--concurrency", "64", "--threads", "2"], { BENCH_CASES: String(small) }));
    tLarge.push(await wall(root, ["run", suite, "--concurrency", "64", "--threads", "2"], { BENCH_CASES: String(large) }));
  }
  const seconds = median(tLarge);
  const steady = (large - small) / Math.max(1e-3, seconds - median(tSmall));
  const rate = large / seconds;
  log(`  evalfleet run, ${large} cases: ${rate.toFixed(0)} cases/s start-up included, ${steady.toFixed(0)} steady: ${(rate / steady).toFixed(3)}x`);
  return {
    startup_help_s: median(help),
    startup_demo_s: median(demo),
    thread_ready_ms: median(ready),
    thread_ready_alone_ms: median(readyAlone),
    startup_large_cases: large,
    startup_large_s: seconds,
    startup_large_cases_per_s: rate,
    startup_large_steady_cases_per_s: steady,
    startup_large_ratio: rate / steady,
  };
}
