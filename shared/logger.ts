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

/** A structured (JSON lines) logger with secrets redacted. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const opts: LoggerOptions = {
    name: options.name ?? "evalfleet",
    level: options.level ?? "warn",
    redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
  };
  return pino(opts, options.destination ?? pino.destination({ fd: 2, sync: true }));
}

/** A logger that writes nothing: the default of the library API, whose core never prints. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
