// runs in: main
import { readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { hostname } from "node:os";
import { connect as tlsConnect } from "node:tls";
import { connect, credsAuthenticator, nkeyAuthenticator, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import { EvalfleetError, ErrorCode, errorMessage } from "../errors.ts";
import { redactText, registerSecret } from "../redaction/secrets.ts";
import { credsFileSecrets, type NatsSettings } from "./nats-settings.ts";

/**
 * The connect call both sides use (the settings come from nats-settings.ts).
 */

export type { NatsFlags, NatsSettings } from "./nats-settings.ts";

/** How a role connects. */
export interface ConnectOptions {
  /** Shown in the server's `connz` (`evalfleet-worker/<host>/<pid>`). */
  name: string;
  /** Workers reconnect forever; the coordinator bounds its patience itself. Default true. */
  reconnectForever?: boolean;
  /**
   * Keep trying the first connect while the broker is unreachable (a pod that starts before NATS).
   * Refused credentials and a refused TLS handshake still fail at once: waiting cannot fix them.
   * Default false: fail fast.
   */
  waitOnFirstConnect?: boolean;
  /** Told, now and then, why the first connect is still being retried. */
  onWait?: (line: string) => void;
  /** Stops the retrying of the first connect (a worker told to stop before NATS came up). */
  signal?: AbortSignal;
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
    // The first connect's retries are ours (below): nats.js would also retry a refused TLS
    // handshake forever, which no amount of waiting fixes.
    waitOnFirstConnect: false,
    timeout: options.timeoutMs ?? 5000,
    pingInterval: 10_000,
    // Without it every request (each result publish waits for a PubAck) builds an Error with a
    // stack trace up front: measured as the largest single CPU cost of a worker per case.
    noAsyncTraces: true,
  };
  if (settings.inboxPrefix) opts.inboxPrefix = settings.inboxPrefix;
  if (settings.token) opts.token = settings.token;
  if (settings.user) {
    opts.user = settings.user;
    opts.pass = settings.password ?? "";
  }
  if (settings.nkeySeedFile) {
    const seed = readSecret(settings.nkeySeedFile, "--nats-nkey").trim();
    registerSecret(seed);
    opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(seed));
  }
  if (settings.credsFile) {
    const creds = readSecret(settings.credsFile, "--nats-creds");
    for (const secret of credsFileSecrets(creds)) registerSecret(secret);
    opts.authenticator = credsAuthenticator(new TextEncoder().encode(creds));
  }
  if (settings.tlsCaFile || settings.tlsCertFile) {
    // A missing or unreadable file is a usage error now, not a connect failure retried forever.
    if (settings.tlsCaFile) readSecret(settings.tlsCaFile, "--nats-ca");
    if (settings.tlsCertFile) readSecret(settings.tlsCertFile, "--nats-cert");
    if (settings.tlsKeyFile) readSecret(settings.tlsKeyFile, "--nats-key");
    opts.tls = {
      ...(settings.tlsCaFile ? { caFile: settings.tlsCaFile } : {}),
      ...(settings.tlsCertFile ? { certFile: settings.tlsCertFile, keyFile: settings.tlsKeyFile } : {}),
    };
  }
  const where = settings.servers.join(", ");
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect(opts);
    } catch (err) {
      const failure = await explainConnectFailure(err, settings);
      if (!options.waitOnFirstConnect || failure.fatal || options.signal?.aborted) {
        const stopped = failure.fatal || !options.signal?.aborted ? "" : "stopped while waiting: ";
        throw new EvalfleetError(ErrorCode.BrokerUnreachable, redactText(`${stopped}cannot connect to NATS at ${where}: ${failure.message}`), { servers: settings.servers });
      }
      if (attempt === 1 || attempt % 30 === 0) options.onWait?.(redactText(`NATS is not reachable yet at ${where} (${failure.message}); retrying`));
      await new Promise<void>((resolve) => {
        const t = setTimeout(wake, Math.min(2000, 250 * attempt));
        function wake(): void {
          clearTimeout(t);
          options.signal?.removeEventListener("abort", wake);
          resolve();
        }
        options.signal?.addEventListener("abort", wake, { once: true });
      });
    }
  }
}

/**
 * Why a first connect failed, in words, and whether retrying can help. nats.js reports a client
 * certificate the server refused as a bare `timeout` (the TLS alert arrives after its handshake
 * has completed), so over TLS one raw handshake with the same files finds the real reason.
 */
async function explainConnectFailure(err: unknown, settings: NatsSettings): Promise<{ fatal: boolean; message: string }> {
  const text = errorMessage(err);
  if (/authoriz|authenticat|user .*(revoked|expired)/i.test(text)) return { fatal: true, message: `${text}: the server refused ${describeAuth(settings)}` };
  if (/tls is not available|tls.*required/i.test(text)) return { fatal: true, message: `${text} (set --nats-ca, and --nats-cert/--nats-key if the server verifies clients, or connect without TLS)` };
  const tlsError = /certificate|self.signed|ssl|alert/i;
  let refusal: string | null = tlsError.test(text) ? text : null;
  if (refusal === null && (settings.tlsCaFile || settings.tlsCertFile)) refusal = await probeTls(settings).catch(() => null);
  if (refusal === null) return { fatal: false, message: text };
  // OpenSSL's text ("...:ssl3_read_bytes:sslv3 alert bad certificate:../deps/...") reduced to the alert.
  const alert = /alert ([a-z ]+?)(?::|$)/i.exec(refusal)?.[1];
  const hint = alert
    ? "the server verifies client certificates: --nats-cert/--nats-key must be a certificate signed by a CA it trusts, and its key"
    : "the server's certificate is not trusted: --nats-ca must name the CA that signed it";
  return { fatal: true, message: `the TLS handshake failed: ${alert ? `the server answered with the alert '${alert}'` : refusal.split("\n")[0]!.trim()} (${hint})` };
}

/**
 * One TLS handshake with the first server, using the client's files, then CONNECT/PING: resolves
 * the TLS error (a refused client certificate, an untrusted server certificate), or null when the
 * handshake went through or nothing could be learnt within two seconds.
 */
function probeTls(settings: NatsSettings): Promise<string | null> {
  const first = settings.servers[0] ?? "";
  const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(first) ? first.replace(/^[^:]+:/, "http:") : `http://${first}`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port || 4222);
  return new Promise((resolve) => {
    const done = (why: string | null): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(null), 2000);
    const socket = createConnection(port, host);
    socket.once("error", () => done(null));
    let info = "";
    const onInfo = (chunk: Buffer): void => {
      info += chunk.toString("latin1");
      if (!info.includes("\r\n")) return;
      socket.off("data", onInfo);
      let tls;
      try {
        tls = tlsConnect({
          socket,
          servername: /^[\d.]+$|:/.test(host) ? undefined : host,
          ...(settings.tlsCaFile ? { ca: readFileSync(settings.tlsCaFile) } : {}),
          ...(settings.tlsCertFile ? { cert: readFileSync(settings.tlsCertFile), key: readFileSync(settings.tlsKeyFile ?? "") } : {}),
        });
      } catch {
        return done(null);
      }
      tls.once("error", (e) => done(errorMessage(e)));
      tls.once("secureConnect", () => tls.write('CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n'));
      // Any answer (PONG, or -ERR for missing credentials) means the TLS layer accepted us.
      tls.once("data", () => done(null));
    };
    socket.on("data", onInfo);
  });
}

/** How a client authenticates, for error messages: which way and where from, never the secret. */
function describeAuth(s: NatsSettings): string {
  if (s.credsFile) return `the credentials in ${s.credsFile} (--nats-creds, NATS_CREDS)`;
  if (s.nkeySeedFile) return `the NKey seed in ${s.nkeySeedFile} (--nats-nkey, NATS_NKEY)`;
  if (s.user) return `user '${s.user}' with ${s.password ? "the given password" : "no password"} (--nats-user/--nats-password, NATS_USER/NATS_PASSWORD)`;
  if (s.token) return "the given token (--nats-token, NATS_TOKEN)";
  if (s.tlsCertFile) return `the client certificate ${s.tlsCertFile}`;
  return "a client without credentials: pass --nats-token, --nats-user/--nats-password, --nats-nkey or --nats-creds (or NATS_TOKEN, NATS_USER/NATS_PASSWORD, NATS_NKEY, NATS_CREDS)";
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
