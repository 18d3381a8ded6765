import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { connect, credsAuthenticator, nkeyAuthenticator, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import { EvalfleetError, ErrorCode, errorMessage } from "./errors.ts";

/**
 * NATS connection settings from flags or the environment, and the connect call both sides use.
 */

/** Where the broker is and how to authenticate. Secrets are never logged. */
export interface NatsSettings {
  /** Server URLs; default `nats://127.0.0.1:4222`. */
  servers: string[];
  token?: string;
  user?: string;
  password?: string;
  /** Path of a file holding an NKey seed (`SU...`). */
  nkeySeedFile?: string;
  /** Path of a `.creds` file (JWT + seed). */
  credsFile?: string;
  /** TLS: CA bundle, client certificate and key (paths). */
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

/** The flags that carry NATS settings (all optional; the environment fills the gaps). */
export interface NatsFlags {
  nats?: string;
  natsToken?: string;
  natsUser?: string;
  natsPassword?: string;
  natsNkey?: string;
  natsCreds?: string;
  natsCa?: string;
  natsCert?: string;
  natsKey?: string;
}

/**
 * Settings from flags, then the environment: `NATS_URL` (comma-separated), `NATS_TOKEN`,
 * `NATS_USER`, `NATS_PASSWORD`, `NATS_NKEY` (seed file), `NATS_CREDS`, `NATS_CA`, `NATS_CERT`, `NATS_KEY`.
 */
export function natsSettingsFrom(flags: NatsFlags, env: NodeJS.ProcessEnv = process.env): NatsSettings {
  const url = flags.nats ?? env.NATS_URL ?? "nats://127.0.0.1:4222";
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? (env[name] || undefined);
  const settings: NatsSettings = {
    servers: url.split(",").map((s) => s.trim()).filter(Boolean),
    token: pick(flags.natsToken, "NATS_TOKEN"),
    user: pick(flags.natsUser, "NATS_USER"),
    password: pick(flags.natsPassword, "NATS_PASSWORD"),
    nkeySeedFile: pick(flags.natsNkey, "NATS_NKEY"),
    credsFile: pick(flags.natsCreds, "NATS_CREDS"),
    tlsCaFile: pick(flags.natsCa, "NATS_CA"),
    tlsCertFile: pick(flags.natsCert, "NATS_CERT"),
    tlsKeyFile: pick(flags.natsKey, "NATS_KEY"),
  };
  if (settings.servers.length === 0) throw new EvalfleetError(ErrorCode.Usage, `--nats must name at least one server, got '${url}'`, { field: "nats" });
  if ((settings.tlsCertFile && !settings.tlsKeyFile) || (!settings.tlsCertFile && settings.tlsKeyFile)) {
    throw new EvalfleetError(ErrorCode.Usage, "--nats-cert and --nats-key go together (a client certificate needs its key)", { field: "natsCert" });
  }
  return settings;
}

/** How a role connects. */
export interface ConnectOptions {
  /** Shown in the server's `connz` (`evalfleet-worker/<host>/<pid>`). */
  name: string;
  /** Workers reconnect forever; the coordinator bounds its patience itself. Default true. */
  reconnectForever?: boolean;
  /** Keep trying the first connect (a pod that starts before NATS). Default false: fail fast. */
  waitOnFirstConnect?: boolean;
  /** Milliseconds a first connect may take. Default 5000. */
  timeoutMs?: number;
}

/** Connects; an unreachable broker is an {@link EvalfleetError} with code BROKER_UNREACHABLE naming the servers. */
export async function connectNats(settings: NatsSettings, options: ConnectOptions): Promise<NatsConnection> {
  const opts: NodeConnectionOptions = {
    servers: settings.servers,
    name: options.name,
    maxReconnectAttempts: options.reconnectForever === false ? 0 : -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
    timeout: options.timeoutMs ?? 5000,
    pingInterval: 10_000,
  };
  if (settings.token) opts.token = settings.token;
  if (settings.user) {
    opts.user = settings.user;
    opts.pass = settings.password ?? "";
  }
  if (settings.nkeySeedFile) opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(readSecret(settings.nkeySeedFile, "--nats-nkey").trim()));
  if (settings.credsFile) opts.authenticator = credsAuthenticator(new TextEncoder().encode(readSecret(settings.credsFile, "--nats-creds")));
  if (settings.tlsCaFile || settings.tlsCertFile) {
    opts.tls = {
      ...(settings.tlsCaFile ? { caFile: settings.tlsCaFile } : {}),
      ...(settings.tlsCertFile ? { certFile: settings.tlsCertFile, keyFile: settings.tlsKeyFile } : {}),
    };
  }
  try {
    return await connect(opts);
  } catch (err) {
    throw new EvalfleetError(ErrorCode.BrokerUnreachable, `cannot connect to NATS at ${settings.servers.join(", ")}: ${errorMessage(err)}`, {
      servers: settings.servers,
    });
  }
}

/** `<host>/<pid>`: how a process names itself to the broker and in reports. */
export function processLabel(): string {
  return `${hostname()}/${process.pid}`;
}

function readSecret(path: string, flag: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw new EvalfleetError(ErrorCode.Usage, `${flag}: cannot read ${path}: ${errorMessage(err)}`, { field: flag });
  }
}
