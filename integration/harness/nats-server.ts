/**
 * Gives integration tests a NATS server with JetStream, never a shared one's state:
 * 1. `NATS_URL` when set (the caller owns that server; stop/restart are unavailable);
 * 2. a pinned NATS image through testcontainers when a Docker engine answers;
 * 3. the local `nats-server` binary (PATH or /usr/sbin/nats-server) on free ports with a temporary store.
 * With none of the three, it throws one line saying how to install nats-server: tests fail, never pass silently.
 * A server started from a configuration file (`config`) is always the local binary: a test that
 * needs its own authentication, TLS or permissions cannot use a server someone else configured.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";

/** A running server for one test file. */
export interface TestNatsServer {
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  /** Monitoring endpoint (`http://127.0.0.1:<port>`), when there is one. */
  monitorUrl: string | null;
  /** Which provider started it. */
  kind: "env" | "container" | "binary";
  /** Process id of a server this harness started as a local binary (for CPU accounting), else null. */
  readonly pid: number | null;
  /** SIGKILL the server (the store survives). */
  kill(): Promise<void>;
  /** Start it again on the same port and store. */
  restart(): Promise<void>;
  /** Stop it and remove its store. */
  stop(): Promise<void>;
}

/** The pinned image for the testcontainers path (the module's default is an old 2.8). */
export const NATS_IMAGE = "nats:2.10.29-alpine";

const INSTALL_HINT = "no NATS server for the integration tests: install one (apt-get install -y nats-server), or set NATS_URL to a server with JetStream, or start a Docker engine";

/** Finds the nats-server binary, or null. */
export function findNatsServerBinary(): string | null {
  if (process.env.NATS_SERVER_BIN && existsSync(process.env.NATS_SERVER_BIN)) return process.env.NATS_SERVER_BIN;
  const which = spawnSync("sh", ["-c", "command -v nats-server"], { encoding: "utf8" });
  const onPath = which.stdout.trim();
  if (which.status === 0 && onPath) return onPath;
  return existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : null;
}

/** Options of {@link startNatsServer}. */
export interface NatsServerOptions {
  /** Require this user and password of every client (not applied to a `NATS_URL` server). */
  auth?: { user: string; password: string };
  /**
   * The text of a configuration file to start from (authorization, accounts, TLS, operator mode),
   * written to the server's temporary directory and passed with `-c`. The harness still sets the
   * address, the free ports, JetStream and its store on the command line (flags win over the file).
   * `include` may name an absolute path (nats-server 2.9 resolves every include relative to the
   * including file, so the harness rewrites it).
   */
  config?: string;
  /** Environment of the server process, on top of this one's: values for `$NAME` references in `config`. */
  env?: Record<string, string>;
}

/** Starts (or binds) a server as described above. */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<TestNatsServer> {
  if (options.config !== undefined) {
    const bin = findNatsServerBinary();
    if (!bin) throw new Error(`${INSTALL_HINT} (a test that starts nats-server from its own configuration needs the binary)`);
    return startBinary(bin, options);
  }
  if (process.env.NATS_URL) {
    const url = process.env.NATS_URL;
    const unavailable = async (): Promise<void> => {
      throw new Error("this test needs to stop the server, which NATS_URL does not allow: unset NATS_URL to let the harness start its own");
    };
    return { url, monitorUrl: null, kind: "env", pid: null, kill: unavailable, restart: unavailable, stop: async () => undefined };
  }
  if (dockerAnswers()) return startContainer(options);
  const bin = findNatsServerBinary();
  if (!bin) throw new Error(INSTALL_HINT);
  return startBinary(bin, options);
}

function dockerAnswers(): boolean {
  if (!existsSync("/var/run/docker.sock") && !process.env.DOCKER_HOST) return false;
  const r = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 5000 });
  return r.status === 0 && r.stdout.trim().length > 0;
}

async function startContainer(options: NatsServerOptions): Promise<TestNatsServer> {
  const { NatsContainer } = await import("@testcontainers/nats");
  let image = new NatsContainer(NATS_IMAGE).withJetStream().withArg("m", "8222");
  if (options.auth) image = image.withUsername(options.auth.user).withPass(options.auth.password);
  const container = await image.start();
  const urlOf = (): string => `nats://${container.getHost()}:${container.getMappedPort(4222)}`;
  const server: TestNatsServer = {
    url: urlOf(),
    monitorUrl: `http://${container.getHost()}:${container.getMappedPort(8222)}`,
    kind: "container",
    pid: null,
    kill: async () => {
      await container.stop({ remove: false, timeout: 0 } as never);
    },
    restart: async () => {
      await container.restart();
      server.url = urlOf();
    },
    stop: async () => {
      await container.stop();
    },
  };
  return server;
}

async function startBinary(bin: string, options: NatsServerOptions): Promise<TestNatsServer> {
  const dir = mkdtempSync(join(tmpdir(), "evalfleet-nats-"));
  const store = join(dir, "js");
  let child: ChildProcess | undefined;
  let port = -1;
  let monitorPort = -1;

  const launch = async (): Promise<void> => {
    for (const f of readdirSync(dir)) if (f.endsWith(".ports")) rmSync(join(dir, f));
    const args = ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitorPort), "-js", "-sd", store, "--ports_file_dir", dir];
    if (options.auth) args.push("--user", options.auth.user, "--pass", options.auth.password);
    if (options.config !== undefined) {
      const file = join(dir, "server.conf");
      writeFileSync(file, withRelativeIncludes(options.config, dir));
      args.push("-c", file);
    }
    const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...options.env } });
    child = proc;
    let stderr = "";
    proc.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<never>((_, reject) => proc.once("exit", (code) => reject(new Error(`nats-server exited with ${code}: ${stderr.trim().split("\n").pop()}`))));
    const ready = (async () => {
      const until = Date.now() + 15_000;
      for (;;) {
        const file = readdirSync(dir).find((f) => f.endsWith(".ports") && f.includes(String(proc.pid)));
        // The server may have created its ports file and not yet written it: read again next time.
        const ports = file ? portsIn(join(dir, file)) : null;
        if (ports?.nats[0]) {
          port = Number(new URL(ports.nats[0].replace(/^nats:/, "http:")).port);
          if (ports.monitoring?.[0]) monitorPort = Number(new URL(ports.monitoring[0]).port);
          if (await probe(port)) return;
        }
        if (Date.now() > until) throw new Error(`nats-server did not start within 15s: ${stderr.trim().split("\n").pop() ?? ""}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    await Promise.race([ready, exited]);
    exited.catch(() => undefined);
  };
  const killProc = async (): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill("SIGKILL");
    await gone;
  };

  await launch();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get monitorUrl() {
      return monitorPort > 0 ? `http://127.0.0.1:${monitorPort}` : null;
    },
    kind: "binary",
    get pid() {
      return child?.pid ?? null;
    },
    kill: killProc,
    restart: async () => {
      await killProc();
      await launch();
    },
    stop: async () => {
      await killProc();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `include /abs/path` -> `include "../../abs/path"`: nats-server 2.9 joins every include path onto the including file's folder. */
function withRelativeIncludes(text: string, dir: string): string {
  return text.replace(/^(\s*include\s+)(["']?)([^"'\s]+)\2\s*;?\s*$/gm, (line, lead: string, _q: string, path: string) =>
    isAbsolute(path) ? `${lead}"${relative(dir, path)}"` : line,
  );
}

function probe(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** The URLs a nats-server's `--ports_file_dir` file lists, or null while it is still empty or half written. */
function portsIn(file: string): { nats: string[]; monitoring?: string[] } | null {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as { nats?: unknown; monitoring?: string[] };
    return Array.isArray(parsed.nats) ? (parsed as { nats: string[]; monitoring?: string[] }) : null;
  } catch {
    return null;
  }
}
