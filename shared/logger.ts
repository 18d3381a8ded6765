import { pino, type Logger, type LoggerOptions, type DestinationStream } from "pino";

export type { Logger } from "pino";

/** Paths redacted from every log line: credentials never reach a log. */
export const REDACT_PATHS: readonly string[] = [
  "apiKey",
  "*.apiKey",
  "token",
  "*.token",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "nkey",
  "*.nkey",
  "seed",
  "*.seed",
  "creds",
  "*.creds",
];

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** pino level; default `"warn"`. `"silent"` writes nothing. */
  level?: LoggerOptions["level"];
  /** Logger name, e.g. `evalfleet.worker`. Default `evalfleet`. */
  name?: string;
  /** Where lines go; default standard error (never standard output, which carries reports). */
  destination?: DestinationStream;
}

/**
 * Secret values this process knows (a NATS token or password, an NKey seed), redacted wherever
 * they appear in a log line: in any field, at any depth, inside an error message.
 */
const knownSecrets = new Set<string>();

/** Shorter values are not registered: redacting them would mangle ordinary words. */
const MIN_SECRET_LENGTH = 6;

/** Environment variables whose values are secrets by their name (`NATS_TOKEN`, `OPENAI_API_KEY`, `PGPASSWORD`, ...). */
const SECRET_ENV_NAME = /(TOKEN|PASSWORD|PASSWD|SECRET|API_?KEY)$/i;

/** Registers a secret value: no log line of this process (thread) will show it. Empty and very short values are ignored. */
export function registerSecret(value: string | null | undefined): void {
  if (typeof value === "string" && value.length >= MIN_SECRET_LENGTH) knownSecrets.add(value);
}

/** Registers the values of the secret-looking environment variables (see {@link SECRET_ENV_NAME}). */
function registerEnvironmentSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(env)) if (SECRET_ENV_NAME.test(name)) registerSecret(value);
}

/**
 * Removes credentials from free text: every registered secret (also in its JSON-escaped form),
 * the user information of URLs (`nats://user:password@host` -> `nats://[redacted]@host`), bearer
 * tokens, `sk-...` API keys and NKey seeds. Applied to every log line; use it for any message that
 * may echo a URL or a server's answer.
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (out.includes(secret)) out = out.split(secret).join("[redacted]");
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && out.includes(escaped)) out = out.split(escaped).join("[redacted]");
  }
  return out
    .replace(/\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/g, "$1[redacted]@")
    .replace(/Bearer\s+[A-Za-z0-9._~+/=-]+/g, "Bearer [redacted]")
    .replace(/\bsk-[A-Za-z0-9_-]{8,}/g, "sk-[redacted]")
    .replace(/\bS[UAOCNPX][A-Z2-7]{56}\b/g, "[redacted nkey seed]");
}

/** A structured (JSON lines) logger with secrets redacted: by field name, and by value in every line (see {@link redactSecrets}). */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  registerEnvironmentSecrets();
  const opts: LoggerOptions = {
    name: options.name ?? "evalfleet",
    level: options.level ?? "warn",
    redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
    // Field names cannot catch a secret inside a message ("cannot reach https://user:pw@..."):
    // the finished line is scrubbed too. Only lines that are written pay for it.
    hooks: { streamWrite: redactSecrets },
  };
  return pino(opts, options.destination ?? pino.destination({ fd: 2, sync: true }));
}

/** A logger that writes nothing: the default of the library API, whose core never prints. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
