/**
 * A local three-node NATS cluster with JetStream for fault tests: three nats-server processes on
 * free loopback ports, each with its own store, routed to each other. Any node can be killed
 * and restarted on the same ports and store.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findNatsServerBinary } from "./nats-server.ts";

/** One node of the cluster. */
export interface ClusterNode {
  name: string;
  port: number;
  monitorPort: number;
  readonly pid: number | null;
  readonly alive: boolean;
}

/** A running cluster. */
export interface TestNatsCluster {
  nodes: ClusterNode[];
  /** Every node's client URL, comma-separated (what `--nats` takes). */
  url: string;
  /** SIGKILL a node (its store survives). */
  kill(name: string): Promise<void>;
  /** Start a killed node again on the same ports and store. */
  restart(name: string): Promise<void>;
  /** The name of the node that leads JetStream's meta group, asked from a live node's monitoring endpoint. */
  metaLeader(): Promise<string | null>;
  /** Stop every node and remove the stores. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts three routed nodes with JetStream and waits until they have elected a meta leader. */
export async function startNatsCluster(): Promise<TestNatsCluster> {
  const bin = findNatsServerBinary();
  if (!bin) throw new Error("no nats-server binary for the cluster tests: install one (apt-get install -y nats-server)");
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-cluster-"));
  const specs = await Promise.all(
    ["n1", "n2", "n3"].map(async (name) => ({ name, port: await freePort(), monitorPort: await freePort(), routePort: await freePort() })),
  );
  const routes = specs.map((s) => `nats-route://127.0.0.1:${s.routePort}`).join(", ");
  const procs = new Map<string, ChildProcess>();
  const logs = new Map<string, string>();

  const launch = async (name: string): Promise<void> => {
    const s = specs.find((x) => x.name === name)!;
    const conf = join(dir, `${name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${s.port}`,
        `http: 127.0.0.1:${s.monitorPort}`,
        `jetstream { store_dir: "${join(dir, name)}" }`,
        `cluster { name: evalfleet, listen: 127.0.0.1:${s.routePort}, routes: [${routes}] }`,
      ].join("\n"),
    );
    const proc = spawn(bin, ["-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
    logs.set(name, "");
    proc.stderr!.on("data", (d) => logs.set(name, (logs.get(name)! + d).slice(-20_000)));
    procs.set(name, proc);
    const until = Date.now() + 15_000;
    while (!(await httpOk(s.monitorPort, "/healthz"))) {
      if (proc.exitCode !== null) throw new Error(`nats-server ${name} exited: ${logs.get(name)!.trim().split("\n").pop()}`);
      if (Date.now() > until) throw new Error(`nats-server ${name} did not start: ${logs.get(name)!.trim().split("\n").pop()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async (name: string): Promise<void> => {
    const proc = procs.get(name);
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGKILL");
    await gone;
  };

  await Promise.all(specs.map((s) => launch(s.name)));
  const cluster: TestNatsCluster = {
    nodes: specs.map((s) => ({
      name: s.name,
      port: s.port,
      monitorPort: s.monitorPort,
      get pid() {
        return procs.get(s.name)?.pid ?? null;
      },
      get alive() {
        const p = procs.get(s.name);
        return Boolean(p && p.exitCode === null && p.signalCode === null);
      },
    })),
    url: specs.map((s) => `nats://127.0.0.1:${s.port}`).join(","),
    kill,
    restart: async (name) => {
      await kill(name);
      await launch(name);
    },
    metaLeader: async () => {
      for (const n of cluster.nodes) {
        if (!n.alive) continue;
        const jsz = (await httpJson(n.monitorPort, "/jsz")) as { meta_cluster?: { leader?: string } } | null;
        if (jsz?.meta_cluster?.leader) return jsz.meta_cluster.leader;
      }
      return null;
    },
    stop: async () => {
      await Promise.all(specs.map((s) => kill(s.name)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const until = Date.now() + 30_000;
  while (!(await cluster.metaLeader())) {
    if (Date.now() > until) throw new Error("the cluster elected no JetStream meta leader within 30s");
    await new Promise((r) => setTimeout(r, 100));
  }
  return cluster;
}

async function httpOk(port: number, path: string): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1000) });
    return r.ok;
  } catch {
    return false;
  }
}

async function httpJson(port: number, path: string): Promise<unknown> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) });
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}
