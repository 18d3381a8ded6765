// runs in: both
import { EvalfleetError, ErrorCode } from "../errors.ts";
import { redactText, registerSecret } from "../redaction/secrets.ts";
import { DEFAULT_NATS_URL } from "../defaults.ts";
import type { Environment } from "../environment.ts";

/**
 * NATS connection settings from flags, then the environment. Pure (no NATS client here), so a
 * command validates its settings in its config without loading the client.
 */

/** Where the broker is and how to authenticate. Secrets are never logged. */
export interface NatsSettings {
  /**
   * Server URLs; default `nats://127.0.0.1:4222`. Never with credentials: a `user:password@` or
   * `token@` in a URL is moved into the fields below, so no message that names a server shows it.
   */
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
  /**
   * Prefix of this client's reply subjects (default `_INBOX`). A server that allows each role to
   * subscribe only to its own prefix keeps one role from reading another's replies
   * (deploy/nats/evalfleet-permissions.conf gives workers `_INBOX.evalfleet_worker`).
   */
  inboxPrefix?: string;
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
  natsInboxPrefix?: string;
}

/**
 * Settings from flags, then the environment: `NATS_URL` (comma-separated), `NATS_TOKEN`,
 * `NATS_USER`, `NATS_PASSWORD`, `NATS_NKEY` (seed file), `NATS_CREDS`, `NATS_CA`, `NATS_CERT`, `NATS_KEY`,
 * `NATS_INBOX_PREFIX`. Credentials in a URL (`nats://user:password@host`, `nats://token@host`) are
 * used when no other way to authenticate is given, and are removed from the URL either way.
 * Every secret is registered with the process's redactor (shared/redaction/secrets.ts), so no output shows it.
 */
export function natsSettingsFrom(flags: NatsFlags, env: Environment): NatsSettings {
  const url = flags.nats ?? env.NATS_URL ?? DEFAULT_NATS_URL;
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? (env[name] || undefined);
  const parsed = url.split(",").map((s) => s.trim()).filter(Boolean).map(splitCredentials);
  const settings: NatsSettings = {
    servers: parsed.map((p) => p.server),
    token: pick(flags.natsToken, "NATS_TOKEN"),
    user: pick(flags.natsUser, "NATS_USER"),
    password: pick(flags.natsPassword, "NATS_PASSWORD"),
    nkeySeedFile: pick(flags.natsNkey, "NATS_NKEY"),
    credsFile: pick(flags.natsCreds, "NATS_CREDS"),
    tlsCaFile: pick(flags.natsCa, "NATS_CA"),
    tlsCertFile: pick(flags.natsCert, "NATS_CERT"),
    tlsKeyFile: pick(flags.natsKey, "NATS_KEY"),
    inboxPrefix: pick(flags.natsInboxPrefix, "NATS_INBOX_PREFIX"),
  };
  const inUrl = parsed.find((p) => p.user !== undefined || p.token !== undefined);
  if (inUrl && !settings.token && !settings.user && !settings.nkeySeedFile && !settings.credsFile) {
    if (inUrl.token !== undefined) settings.token = inUrl.token;
    else {
      settings.user = inUrl.user;
      settings.password = inUrl.password;
    }
  }
  registerSecret(settings.token);
  registerSecret(settings.password);
  for (const p of parsed) {
    registerSecret(p.token);
    registerSecret(p.password);
  }
  if (settings.servers.length === 0) throw new EvalfleetError(ErrorCode.Usage, `--nats must name at least one server, got '${redactText(url)}'`, { field: "nats" });
  if (settings.inboxPrefix !== undefined && !/^[^\s.*>]+(\.[^\s.*>]+)*$/.test(settings.inboxPrefix)) {
    throw new EvalfleetError(ErrorCode.Usage, `--nats-inbox-prefix must be dot-separated subject tokens without wildcards or spaces, got '${settings.inboxPrefix}'`, { field: "natsInboxPrefix" });
  }
  if ((settings.tlsCertFile && !settings.tlsKeyFile) || (!settings.tlsCertFile && settings.tlsKeyFile)) {
    throw new EvalfleetError(ErrorCode.Usage, "--nats-cert and --nats-key go together (a client certificate needs its key)", { field: "natsCert" });
  }
  return settings;
}

/**
 * Splits the credentials off a server URL: `nats://user:password@host` gives a user and password,
 * `nats://token@host` a token (as other NATS clients read it). Percent-escapes are decoded.
 */
function splitCredentials(entry: string): { server: string; user?: string; password?: string; token?: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#@]*)@(.*)$/.exec(entry);
  if (!m) return { server: entry };
  const [, scheme, userinfo, rest] = m as unknown as [string, string, string, string];
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const server = `${scheme}${rest}`;
  const colon = userinfo.indexOf(":");
  if (colon < 0) return { server, token: decode(userinfo) };
  return { server, user: decode(userinfo.slice(0, colon)), password: decode(userinfo.slice(colon + 1)) };
}

/**
 * The secrets of a `.creds` file (operator mode): the user JWT and the NKey seed, each the body of
 * a `-----BEGIN ...-----` / `------END ...------` block. Anything else in the file is left.
 */
export function credsFileSecrets(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/-{3,}\s*BEGIN [^\n]*?-{3,}\s*\r?\n([\s\S]*?)\r?\n\s*-{3,}\s*END /g)) {
    const body = m[1]!.trim();
    if (body) out.push(body);
  }
  return out;
}
