/**
 * Runs a container of a deploy/kubernetes manifest as a plain process, as the image would run it:
 * the Dockerfile's ENTRYPOINT (node on bin/evalfleet.mjs) with the container's args, and only the
 * environment the image and the manifest give it (the image's ENV, the container's env and
 * envFrom, the downward API), never this test process's own. What a pod has and a process on
 * this machine cannot, the caller maps explicitly: mounted folders, and the HTTP port (pods each
 * have their own network; here a fixed port would collide, so the endpoint binds a free loopback port).
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { containerArgs, containerEnv, containersOf, entryCommand, flagValue, parseDockerfile, type K8sObject, type PodFacts } from "../../test/support/deploy.ts";
import { killLeftovers, track, type Proc } from "./processes.ts";

/** A process started from a manifest's container. */
export interface PodProc extends Proc {
  /** The arguments it was started with (after expansion and mapping). */
  args: string[];
  /** The environment it was started with. */
  env: Record<string, string>;
  /** The bound HTTP port, once its endpoint logged that it listens. */
  httpPort(timeoutMs?: number): Promise<number>;
}

/** Options of {@link runContainer}. */
export interface RunContainerOptions extends PodFacts {
  /** Which container of the pod; default the first. */
  container?: string;
  /** Arguments appended to the manifest's (as an overlay or `kubectl create job --from` would add them). */
  extraArgs?: string[];
  /** Environment set on top of the manifest's, each for a stated reason (the suite, a single-node NATS). */
  envOverrides?: Record<string, string>;
}

/** The image's ENV of the final stage, with `${ARG}` defaults substituted. */
export function imageEnv(): Record<string, string> {
  const df = parseDockerfile();
  const last = df.stages.length - 1;
  const env: Record<string, string> = {};
  for (const i of df.instructions.filter((x) => x.keyword === "ENV" && x.stage === last)) {
    for (const m of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) env[m[1]!] = m[2]!.replace(/\$\{(\w+)\}/g, (_, a: string) => df.argDefaults.get(a) ?? "");
  }
  return env;
}

/** Starts the container of `workload` as a process. */
export function runContainer(workload: K8sObject, options: RunContainerOptions): PodProc {
  const containers = containersOf(workload);
  const container = options.container ? containers.find((c) => c.name === options.container) : containers[0];
  if (!container) throw new Error(`no container ${options.container} in ${workload.metadata.name}`);
  const mounts = { "/tmp": tmpdir(), ...(options.mounts ?? {}) };
  const facts: PodFacts = { ...options, mounts };
  const fromImage = imageEnv();
  // The image's TMPDIR is the pod's /tmp emptyDir: here, this machine's temporary folder.
  if (fromImage.TMPDIR && mounts[fromImage.TMPDIR as keyof typeof mounts]) fromImage.TMPDIR = mounts[fromImage.TMPDIR as keyof typeof mounts]!;
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...fromImage, ...containerEnv(container, facts), ...(options.envOverrides ?? {}) };
  let args = [...containerArgs(container, env, facts), ...(options.extraArgs ?? [])];
  if (flagValue(args, "--http-port") !== undefined) args = [...args.filter((a) => !a.startsWith("--http-port") && !a.startsWith("--http-host")), "--http-port=0", "--http-host=127.0.0.1"];
  const { command, args: argv } = entryCommand(args);
  const base = track(spawn(command, argv, { env, stdio: ["ignore", "pipe", "pipe"] }));
  return Object.assign(base, {
    args,
    env,
    async httpPort(timeoutMs = 30_000): Promise<number> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        for (const line of base.stderr.split("\n")) {
          if (!line.includes("serving /healthz")) continue;
          const port = (JSON.parse(line) as { port?: number }).port;
          if (port) return port;
        }
        if (base.exited || Date.now() > until) throw new Error(`${workload.metadata.name}: no HTTP endpoint${base.exited ? " (the process exited)" : ` within ${timeoutMs}ms`}; stderr:\n${base.stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  });
}

/** SIGKILLs every process {@link runContainer} started that still runs (with every other process the harness started). */
export const killPods = killLeftovers;

/** GETs `path` on a local port: status and body (JSON parsed when it is JSON). */
export async function httpGet(port: number, path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let body: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json")) body = JSON.parse(text);
  return { status: res.status, body, text };
}

/** The value of one Prometheus sample (`name` or `name{labels}` exactly as exposed), or undefined. */
export function sample(exposition: string, series: string): number | undefined {
  for (const line of exposition.split("\n")) {
    if (line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    if (line.slice(0, at) === series) return Number(line.slice(at + 1));
  }
  return undefined;
}
